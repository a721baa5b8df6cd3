-- append_events answered at its commit, for SQL writers that must scale (the SQL form of the
-- library's appendAtCommit). Same batch, same guarantees, same answer, except that a position may
-- be null:
--   * when the append lock is free, it takes it and appends as append_events does (positions);
--   * when another writer holds it, it does not wait: each new event is claimed in event_claims
--     (id, key, stream version, under their unique constraints) and written to pending_events,
--     and comes back with a null position. The next writer to take the lock seals it (gives it its
--     position and hash, in commit order); so do `ledger serve` within two seconds and `ledger
--     seal` at once. Readers of the log see it then, in order.
-- A retry of an event still pending returns already_stored = true and a null position; once
-- sealed, its position. An expected version counts pending events; the same id or key with other
-- content is LK409, pending or not. Nothing from a batch is written when any item fails.
CREATE OR REPLACE FUNCTION append_events_at_commit(batch jsonb)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    item jsonb;
    n integer := 0;
    b record;
    stored record;
    current_version bigint;
    attempts integer;
BEGIN
    IF batch IS NULL OR jsonb_typeof(batch) <> 'array' OR jsonb_array_length(batch) = 0 THEN
        RAISE EXCEPTION 'append_events_at_commit takes a non-empty JSON array of events' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN QUERY SELECT * FROM append_events(batch);
        RETURN;
    END IF;
    FOR item IN SELECT value FROM jsonb_array_elements(batch) LOOP
        n := n + 1;
        SELECT * INTO b FROM batch_event(item, n);
        attempts := 0;
        <<claim>>
        LOOP
            -- A retry: the same event id or business key, pending or sealed. Pending first: an
            -- event sealed in between is then found in events (a pending one is deleted only by
            -- the transaction that writes it into events).
            SELECT NULL::bigint AS position, p.event_id, p.stream_id, p.stream_version, p.event_type, p.schema_version, p.payload,
                   p.idempotency_key
            INTO stored FROM pending_events p
            WHERE p.event_id = b.event_id OR (b.idempotency_key IS NOT NULL AND p.idempotency_key = b.idempotency_key)
            ORDER BY p.seq LIMIT 1;
            IF NOT FOUND THEN
                SELECT x.position, x.event_id, x.stream_id, x.stream_version, x.event_type, x.schema_version, x.payload,
                       x.idempotency_key
                INTO stored FROM events x
                WHERE x.event_id = b.event_id OR (b.idempotency_key IS NOT NULL AND x.idempotency_key = b.idempotency_key)
                ORDER BY x.position LIMIT 1;
            END IF;
            IF FOUND THEN
                IF stored.stream_id <> b.stream_id OR stored.event_type <> b.event_type
                   OR stored.schema_version <> b.schema_version OR stored.payload <> b.payload
                   OR (stored.event_id = b.event_id AND stored.idempotency_key IS DISTINCT FROM b.idempotency_key)
                   OR (stored.event_id <> b.event_id AND EXISTS (SELECT 1 FROM event_claims c WHERE c.event_id = b.event_id)) THEN
                    RAISE EXCEPTION 'idempotency conflict: batch item % (event %, key %) is already stored (%) with different content; nothing from this batch was written',
                        n, b.event_id, coalesce(b.idempotency_key, '-'),
                        coalesce('at position ' || stored.position, 'pending')
                        USING ERRCODE = 'LK409';
                END IF;
                event_id := stored.event_id;
                stream_id := stored.stream_id;
                stream_version := stored.stream_version;
                "position" := stored.position;
                already_stored := true;
                RETURN NEXT;
                EXIT claim;
            END IF;
            -- The stream's version from its claims: sealed and pending events alike.
            SELECT max(c.stream_version) INTO current_version FROM event_claims c WHERE c.stream_id = b.stream_id;
            IF (b.expected = '"no-stream"'::jsonb AND current_version IS NOT NULL)
               OR (jsonb_typeof(b.expected) = 'number' AND current_version IS DISTINCT FROM (b.expected #>> '{}')::bigint) THEN
                RAISE EXCEPTION 'version conflict on stream %: expected %, but the stream %; nothing from this batch was written',
                    b.stream_id, b.expected #>> '{}', coalesce('is at version ' || current_version, 'does not exist')
                    USING ERRCODE = 'LV409';
            END IF;
            INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
            VALUES (b.event_id, b.idempotency_key, b.stream_id, coalesce(current_version + 1, 0))
            ON CONFLICT DO NOTHING;
            IF NOT FOUND THEN
                -- Another writer committed this id, key or version meanwhile (its insert waited
                -- for that commit): decide this event again on what is committed now.
                attempts := attempts + 1;
                IF attempts > 100 THEN
                    RAISE EXCEPTION 'batch item % (event %, key %): stream % kept changing under concurrent appends; nothing from this batch was written',
                        n, b.event_id, coalesce(b.idempotency_key, '-'), b.stream_id USING ERRCODE = 'LV409';
                END IF;
                CONTINUE claim;
            END IF;
            INSERT INTO pending_events (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                                        occurred_at, idempotency_key)
            VALUES (b.event_id, b.stream_id, coalesce(current_version + 1, 0), b.event_type, b.schema_version, b.payload,
                    b.metadata, b.occurred_at, b.idempotency_key);
            event_id := b.event_id;
            stream_id := b.stream_id;
            stream_version := coalesce(current_version + 1, 0);
            "position" := NULL;
            already_stored := false;
            RETURN NEXT;
            EXIT claim;
        END LOOP;
    END LOOP;
    RETURN;
END
$$;
