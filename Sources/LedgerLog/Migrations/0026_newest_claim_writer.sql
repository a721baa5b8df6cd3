-- A writer that holds the append lock asks whether anything is pending at every append
-- (try_seal_pending, and append_events through it). It now asks the newest claim with content
-- first (newest_claim_writer, made here before try_seal_pending is applied again with its current
-- text, which calls it): when that claim's writer is none the seal state names, nothing is pending
-- and pending_claims() is not called. Only the log's own functions call it.
-- function: newest_claim_writer.sql (its current text, from Sources/LedgerLog/Functions)
REVOKE ALL ON FUNCTION newest_claim_writer() FROM PUBLIC;
