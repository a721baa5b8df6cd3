-- Appends a batch of facts in one call, with every guarantee of the library: idempotency by event
-- id and business key (a retry returns the original positions), expected versions, gap-free
-- positions and the hash chain. What a writer in another language calls as ledger_writer.
CREATE OR REPLACE FUNCTION append_events(batch jsonb)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    head record;
    item jsonb;
    n integer := 0;
    b record;
    stored record;
    current_version bigint;
    recorded timestamptz;
    previous bytea;
    next_position bigint;
    new_row events;
    attempts integer;
    started bigint;
BEGIN
    IF batch IS NULL OR jsonb_typeof(batch) <> 'array' OR jsonb_array_length(batch) = 0 THEN
        RAISE EXCEPTION 'append_events takes a non-empty JSON array of events' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The lock every appender of this schema takes; then what is pending goes first.
    PERFORM pg_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema()));
    PERFORM seal_pending();
    SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
    recorded := greatest(clock_timestamp(), head.last_recorded_at);
    previous := head.last_hash;
    next_position := head.last_position;
    started := head.last_position;
    FOR item IN SELECT value FROM jsonb_array_elements(batch) LOOP
        n := n + 1;
        SELECT * INTO b FROM batch_event(item, n);
        attempts := 0;
        <<claim>>
        LOOP
            -- A retry: the same event id, or the same business key, already stored.
            SELECT e.position, e.event_id, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload, e.idempotency_key
            INTO stored FROM events e
            WHERE e.event_id = b.event_id OR (b.idempotency_key IS NOT NULL AND e.idempotency_key = b.idempotency_key)
            ORDER BY e.position LIMIT 1;
            IF FOUND THEN
                IF stored.stream_id <> b.stream_id OR stored.event_type <> b.event_type OR stored.schema_version <> b.schema_version
                   OR stored.payload <> b.payload OR (stored.event_id = b.event_id AND stored.idempotency_key IS DISTINCT FROM b.idempotency_key)
                   OR (stored.event_id <> b.event_id AND EXISTS (SELECT 1 FROM events x WHERE x.event_id = b.event_id)) THEN
                    RAISE EXCEPTION 'idempotency conflict: batch item % (event %, key %) is already stored at position % with different content; nothing from this batch was written',
                        n, b.event_id, coalesce(b.idempotency_key, '-'), stored.position
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
            SELECT max(e.stream_version) INTO current_version FROM events e WHERE e.stream_id = b.stream_id;
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
                -- A writer that did not hold the lock committed this id, key or version as
                -- pending meanwhile: seal it, then decide this event again on the log as it is.
                attempts := attempts + 1;
                IF attempts > 100 THEN
                    RAISE EXCEPTION 'batch item % (event %, key %): stream % kept changing under concurrent appends; nothing from this batch was written',
                        n, b.event_id, coalesce(b.idempotency_key, '-'), b.stream_id USING ERRCODE = 'LV409';
                END IF;
                PERFORM seal_pending();
                SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
                recorded := greatest(clock_timestamp(), head.last_recorded_at);
                previous := head.last_hash;
                next_position := head.last_position;
                CONTINUE claim;
            END IF;
            next_position := next_position + 1;
            new_row := ROW(next_position, b.event_id, b.stream_id, coalesce(current_version + 1, 0), b.event_type, b.schema_version, b.payload, b.metadata,
                           b.occurred_at, recorded, b.idempotency_key, NULL, NULL, NULL)::events;
            new_row.hash := chain_hash(previous, new_row);
            INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                                occurred_at, recorded_at, idempotency_key, hash)
            VALUES (new_row.position, new_row.event_id, new_row.stream_id, new_row.stream_version, new_row.event_type,
                    new_row.schema_version, new_row.payload, new_row.metadata, new_row.occurred_at, new_row.recorded_at,
                    new_row.idempotency_key, new_row.hash);
            previous := new_row.hash;
            event_id := new_row.event_id;
            stream_id := new_row.stream_id;
            stream_version := new_row.stream_version;
            "position" := new_row.position;
            already_stored := false;
            RETURN NEXT;
            EXIT claim;
        END LOOP;
    END LOOP;
    IF next_position > started THEN
        PERFORM pg_notify('ledger_events_' || current_schema(), next_position::text);
    END IF;
    RETURN;
END
$$;
