-- Seals the pending events a writer committed (by their ids), waiting for the append lock, and
-- returns their positions (sealed now, or by another writer before).
CREATE OR REPLACE FUNCTION seal_events(ids uuid[]) RETURNS TABLE (event_id uuid, "position" bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    lock_key integer := hashtext('ledger-append:' || current_schema());
    tries integer := 0;
BEGIN
    LOOP
        -- Its own claims, by id: pending while they carry content and `events` lacks them.
        EXIT WHEN NOT EXISTS (SELECT 1 FROM event_claims c WHERE c.event_id = ANY (ids) AND c.payload IS NOT NULL
                              AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = c.event_id));
        tries := tries + 1;
        IF tries > 3 THEN
            PERFORM pg_advisory_xact_lock(4243, lock_key);
        ELSIF NOT pg_try_advisory_xact_lock(4243, lock_key) THEN
            -- Wait for the session holding the lock to commit (a shared request is granted to
            -- every waiter at once when it does), then look again.
            PERFORM pg_advisory_lock_shared(4243, lock_key);
            PERFORM pg_advisory_unlock_shared(4243, lock_key);
            CONTINUE;
        END IF;
        PERFORM seal_pending();
        EXIT;
    END LOOP;
    RETURN QUERY SELECT e.event_id, e.position FROM events e WHERE e.event_id = ANY (ids);
END
$$;
