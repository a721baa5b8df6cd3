-- The body of append_events and append_events_at_commit: appends a batch of facts in one call,
-- with every guarantee of the library: idempotency by event id and business key (a retry returns
-- the original answer), expected versions, gap-free positions and the hash chain.
--
-- With the append lock (append_events waits for it; append_events_at_commit takes it when it is
-- free), what other writers left pending is sealed first, and each new event goes into events
-- with its position and hash. Without it (append_events_at_commit, when another writer holds the
-- lock), each new event is claimed with its content (a pending event, in the view pending_events),
-- and comes back with a null position: the next writer to take the lock seals it.
CREATE OR REPLACE FUNCTION append_batch(batch jsonb, at_commit boolean)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    lock_key integer := hashtext('ledger-append:' || current_schema());
    sealing boolean;
    head record;
    item jsonb;
    n integer := 0;
    v_id uuid;
    v_stream text;
    v_type text;
    v_schema integer;
    v_payload jsonb;
    v_metadata jsonb;
    v_occurred timestamptz;
    v_key text;
    v_expected jsonb;
    stored record;
    current_version bigint;
    recorded timestamptz;
    previous bytea;
    next_position bigint;
    new_row events;
    attempts integer;
    expected_ok boolean;
    started bigint;
BEGIN
    IF batch IS NULL OR jsonb_typeof(batch) <> 'array' OR jsonb_array_length(batch) = 0 THEN
        RAISE EXCEPTION '% takes a non-empty JSON array of events',
            CASE WHEN at_commit THEN 'append_events_at_commit' ELSE 'append_events' END
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The lock every appender of this schema takes; then what is pending goes first.
    IF at_commit THEN
        sealing := pg_try_advisory_xact_lock(4243, lock_key);
    ELSE
        PERFORM pg_advisory_xact_lock(4243, lock_key);
        sealing := true;
    END IF;
    IF sealing THEN
        -- Sealed only when something is pending (seal_pending's own statements were a tenth of a
        -- one-event append's server time), asked as try_seal_pending asks (the lock is this
        -- session's already): first of the newest claim with content, which usually settles it.
        PERFORM try_seal_pending();
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
        recorded := greatest(clock_timestamp(), head.last_recorded_at);
        previous := head.last_hash;
        next_position := head.last_position;
        started := head.last_position;
    END IF;
    FOR item IN SELECT value FROM jsonb_array_elements(batch) LOOP
        n := n + 1;
        IF jsonb_typeof(item) <> 'object' THEN
            RAISE EXCEPTION 'batch item %: each event is a JSON object', n USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_id := coalesce((item->>'eventId')::uuid, gen_random_uuid());
        v_stream := item->>'stream';
        v_type := item->>'type';
        v_schema := coalesce((item->>'schemaVersion')::integer, 1);
        v_payload := item->'payload';
        v_metadata := coalesce(item->'metadata', '{}'::jsonb);
        v_occurred := (item->>'occurredAt')::timestamptz;
        v_key := item->>'idempotencyKey';
        v_expected := coalesce(item->'expectedVersion', '"any"'::jsonb);
        IF v_stream IS NULL OR v_type IS NULL OR v_payload IS NULL OR v_occurred IS NULL THEN
            RAISE EXCEPTION 'batch item %: stream, type, payload and occurredAt are required', n USING ERRCODE = 'not_null_violation';
        END IF;
        IF NOT (v_expected IN ('"any"'::jsonb, '"no-stream"'::jsonb) OR jsonb_typeof(v_expected) = 'number') THEN
            RAISE EXCEPTION 'batch item %: expectedVersion must be "any", "no-stream" or a version >= 0', n USING ERRCODE = 'invalid_parameter_value';
        END IF;
        attempts := 0;
        <<claim>>
        LOOP
            -- The stream's version: with the lock, from the log (everything committed before the
            -- seal is in it; a version claimed since is met by the claim below); without it, from
            -- the claims, pending events included.
            IF sealing THEN
                SELECT max(e.stream_version) INTO current_version FROM events e WHERE e.stream_id = v_stream;
            ELSE
                SELECT max(c.stream_version) INTO current_version FROM event_claims c WHERE c.stream_id = v_stream;
            END IF;
            expected_ok := NOT ((v_expected = '"no-stream"'::jsonb AND current_version IS NOT NULL)
               OR (jsonb_typeof(v_expected) = 'number' AND current_version IS DISTINCT FROM (v_expected #>> '{}')::bigint));
            -- The claim first: when it holds, nothing with this id or key is stored (every stored
            -- event has its claim), so a retry is looked for only when a constraint stops it.
            IF expected_ok THEN
                -- Without the lock, the claim carries the event's content: it is the pending event.
                IF sealing THEN
                    INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
                    VALUES (v_id, v_key, v_stream, coalesce(current_version + 1, 0))
                    ON CONFLICT DO NOTHING;
                ELSE
                    INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version, event_type, schema_version,
                                              payload, metadata, occurred_at)
                    VALUES (v_id, v_key, v_stream, coalesce(current_version + 1, 0), v_type, v_schema, v_payload, v_metadata,
                            v_occurred)
                    ON CONFLICT DO NOTHING;
                END IF;
                IF FOUND THEN
                    IF sealing THEN
                        next_position := next_position + 1;
                        new_row := ROW(next_position, v_id, v_stream, coalesce(current_version + 1, 0), v_type, v_schema, v_payload, v_metadata,
                                       v_occurred, recorded, v_key, NULL, NULL, NULL)::events;
                        new_row.hash := chain_hash(previous, new_row);
                        INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                                            occurred_at, recorded_at, idempotency_key, hash)
                        VALUES (new_row.position, new_row.event_id, new_row.stream_id, new_row.stream_version, new_row.event_type,
                                new_row.schema_version, new_row.payload, new_row.metadata, new_row.occurred_at, new_row.recorded_at,
                                new_row.idempotency_key, new_row.hash);
                        previous := new_row.hash;
                        "position" := new_row.position;
                    ELSE
                        "position" := NULL;
                    END IF;
                    event_id := v_id;
                    stream_id := v_stream;
                    stream_version := coalesce(current_version + 1, 0);
                    already_stored := false;
                    RETURN NEXT;
                    EXIT claim;
                END IF;
            END IF;
            -- Not written: a retry (the same event id, or the same business key, stored or
            -- pending), an expected version that does not hold, or a version another writer took
            -- meanwhile. Without the lock, pending events count too, looked up first: one sealed
            -- in between is then found in events (a pending event is its claim, not in events
            -- until sealed). With the lock, an event pending since the seal above is not in events
            -- yet: it is sealed below, and this event decided again.
            IF NOT sealing THEN
                SELECT NULL::bigint AS position, p.event_id, p.stream_id, p.stream_version, p.event_type, p.schema_version,
                       p.payload, p.idempotency_key
                INTO stored FROM event_claims p
                WHERE (p.event_id = v_id OR (v_key IS NOT NULL AND p.idempotency_key = v_key)) AND p.payload IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = p.event_id)
                ORDER BY p.seq LIMIT 1;
            END IF;
            IF sealing OR NOT FOUND THEN
                SELECT e.position, e.event_id, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload,
                       e.idempotency_key
                INTO stored FROM events e
                WHERE e.event_id = v_id OR (v_key IS NOT NULL AND e.idempotency_key = v_key)
                ORDER BY e.position LIMIT 1;
            END IF;
            IF FOUND THEN
                IF stored.stream_id <> v_stream OR stored.event_type <> v_type OR stored.schema_version <> v_schema
                   OR stored.payload <> v_payload OR (stored.event_id = v_id AND stored.idempotency_key IS DISTINCT FROM v_key)
                   OR (stored.event_id <> v_id AND EXISTS (SELECT 1 FROM event_claims x WHERE x.event_id = v_id)) THEN
                    RAISE EXCEPTION 'idempotency conflict: batch item % (event %, key %) is already stored % with different content; nothing from this batch was written',
                        n, v_id, coalesce(v_key, '-'), coalesce('at position ' || stored.position, '(committed, its position pending)')
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
            IF NOT expected_ok THEN
                RAISE EXCEPTION 'version conflict on stream %: expected %, but the stream %; nothing from this batch was written',
                    v_stream, v_expected #>> '{}', coalesce('is at version ' || current_version, 'does not exist')
                    USING ERRCODE = 'LV409';
            END IF;
            -- Another writer committed this id, key or version meanwhile (the insert waited for
            -- its commit): with the lock, seal it; then decide this event again on what is
            -- committed now.
            attempts := attempts + 1;
            IF attempts > 100 THEN
                RAISE EXCEPTION 'batch item % (event %, key %): stream % kept changing under concurrent appends; nothing from this batch was written: send it again',
                    n, v_id, coalesce(v_key, '-'), v_stream USING ERRCODE = 'LV409';
            END IF;
            IF sealing THEN
                PERFORM seal_pending();
                SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
                recorded := greatest(clock_timestamp(), head.last_recorded_at);
                previous := head.last_hash;
                next_position := head.last_position;
            END IF;
            CONTINUE claim;
        END LOOP;
    END LOOP;
    IF sealing AND next_position > started THEN
        PERFORM pg_notify('ledger_events_' || current_schema(), next_position::text);
    END IF;
    RETURN;
END
$$;
