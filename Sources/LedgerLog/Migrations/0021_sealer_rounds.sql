-- A sealer's rounds: seal_pending_passes(max_passes) seals at most that many passes of 5,000 pending
-- events in one transaction (every pass when null; seal_pending() is that). A sealer elected among
-- the stores (Sealing.sealer) seals one pass a transaction: writers that never take the append lock
-- never stop adding pending events, and sealing until none is left would hold one transaction, and
-- every position it gives, for as long as they write.

-- function: seal_pending.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION seal_pending_passes(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION seal_pending_passes(integer) TO ledger_writer;
