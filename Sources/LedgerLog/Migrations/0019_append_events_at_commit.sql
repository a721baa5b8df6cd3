-- append_events answered at its commit: append_events_at_commit(jsonb), for writers in SQL that
-- must scale. When another writer holds the append lock, it commits the batch's events pending
-- (claimed in event_claims, written to pending_events) instead of waiting for the lock, and returns
-- them without positions; the next writer to take the lock seals them. When the lock is free, it
-- appends as append_events does. Both are now one body, append_batch(batch, at_commit);
-- append_events' answers and errors are unchanged.

-- function: append_batch.sql (its current text, from Sources/LedgerLog/Functions)
-- function: append_events_at_commit.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION append_batch(jsonb, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION append_batch(jsonb, boolean) TO ledger_writer;
REVOKE ALL ON FUNCTION append_events_at_commit(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION append_events_at_commit(jsonb) TO ledger_writer;
