-- A sealer that catches up: seal_pending_passes reads and sorts the pending claims once for all
-- the passes that read finds (it read them again for each pass, the ones it had just sealed
-- included), and a call its bound stops records the writers of what it left pending, so that the
-- next call reads from its snapshot on rather than from the last call that left nothing.
-- try_seal_pending_passes(max_passes) is try_seal_pending() within that bound: a candidate standing
-- in for an elected sealer that seals nothing uses it.

-- function: seal_pending.sql (its current text, from Sources/LedgerLog/Functions)
-- function: try_seal_pending_passes.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION try_seal_pending_passes(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION try_seal_pending_passes(integer) TO ledger_writer;
