-- append_events answered at its commit, for SQL writers that must scale (the SQL form of the
-- library's appendAtCommit). The same batch and guarantees, the same answer, except that a
-- position may be null:
--   * when the append lock is free, it takes it and appends as append_events does (positions);
--   * when another writer holds it, it does not wait: each new event is claimed in event_claims
--     (id, key, stream version, under their unique constraints) and written to pending_events,
--     and comes back with a null position. The next writer to take the lock seals it (gives it its
--     position and hash, in commit order); so do `ledger serve` within two seconds and `ledger
--     seal` at once. Readers of the log see it then, in order.
-- A retry of an event still pending returns already_stored = true and a null position; once
-- sealed, its position. An expected version counts pending events; the same id or key with other
-- content is LK409, pending or not. Its body is append_batch's.
CREATE OR REPLACE FUNCTION append_events_at_commit(batch jsonb)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RETURN QUERY SELECT * FROM append_batch(batch, true);
END
$$;
