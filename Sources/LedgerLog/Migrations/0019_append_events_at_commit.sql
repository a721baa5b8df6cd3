-- append_events answered at its commit: append_events_at_commit(jsonb), for writers in SQL that
-- must scale. When another writer holds the append lock, it commits the batch's events pending
-- (claimed in event_claims, written to pending_events) instead of waiting for the lock, and returns
-- them without positions; the next writer to take the lock seals them. When the lock is free, it is
-- append_events. Both read a batch's items with batch_event (append_events now calls it too; its
-- answers and errors are unchanged).

-- function: batch_event.sql (its current text, from Sources/LedgerLog/Functions)
-- function: append_events_at_commit.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION batch_event(jsonb, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION batch_event(jsonb, integer) TO ledger_writer;
REVOKE ALL ON FUNCTION append_events_at_commit(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION append_events_at_commit(jsonb) TO ledger_writer;
