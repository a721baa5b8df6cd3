-- Plain SQL tests of the log's functions, run in a freshly migrated schema (search_path set to it)
-- by SQLFunctionTests, inside a transaction that is rolled back. Each block raises on a failure.

-- append_events: a batch is appended; the same batch again returns the original positions.
DO $$
DECLARE
    batch jsonb := '[{"eventId":"6f1c2d3e-0000-4000-8000-000000000001","stream":"order:sql-1","type":"OrderCreated",
                      "payload":{"orderId":"sql-1"},"metadata":{},"occurredAt":"2026-03-31T08:15:00Z",
                      "idempotencyKey":"order:sql-1:created","expectedVersion":"no-stream"}]';
    first record;
    again record;
BEGIN
    SELECT * INTO first FROM append_events(batch);
    ASSERT first.position = 1 AND first.stream_version = 0 AND NOT first.already_stored, format('first append: %s', first);
    SELECT * INTO again FROM append_events(batch);
    ASSERT again.position = 1 AND again.already_stored, format('a retry: %s', again);
END $$;

-- chain_hash: every stored row's hash is the chain over the one before it.
DO $$
DECLARE
    previous bytea := decode(repeat('00', 32), 'hex');
    e events;
BEGIN
    FOR e IN SELECT * FROM events ORDER BY position LOOP
        ASSERT e.hash = chain_hash(previous, e), format('position %s does not chain', e.position);
        previous := e.hash;
    END LOOP;
    ASSERT (SELECT last_hash FROM log_head) = previous, 'the head does not name the last hash';
END $$;

-- refuse_change: the log is append-only.
DO $$
BEGIN
    BEGIN
        UPDATE events SET stream_id = 'order:changed';
        RAISE EXCEPTION 'an UPDATE of events was allowed';
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
    BEGIN
        DELETE FROM log_head;
        RAISE EXCEPTION 'a DELETE of the head was allowed';
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
END $$;

-- check_head_advance: the head never moves back.
DO $$
BEGIN
    BEGIN
        UPDATE log_head SET last_position = 0;
        RAISE EXCEPTION 'the head moved back';
    EXCEPTION WHEN check_violation THEN NULL;
    END;
END $$;

-- claim_has_event: a claim without its event is refused (checked at once here, at commit otherwise).
DO $$
BEGIN
    SET CONSTRAINTS ALL IMMEDIATE;
    BEGIN
        INSERT INTO event_claims (event_id, stream_id, stream_version) VALUES ('6f1c2d3e-0000-4000-8000-0000000000ff', 'order:ghost', 0);
        RAISE EXCEPTION 'a claim without its event was kept';
    EXCEPTION WHEN OTHERS THEN
        IF SQLERRM LIKE 'a claim without its event was kept' THEN RAISE; END IF;
    END;
    SET CONSTRAINTS ALL DEFERRED;
END $$;

-- Rows written into events by hand, in one statement, as the trigger on events sees an append
-- (the advance_head blocks below).
CREATE FUNCTION pg_temp.insert_events(rows events[]) RETURNS void LANGUAGE sql AS $f$
    INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                        occurred_at, recorded_at, idempotency_key, hash)
    SELECT r.position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload, r.metadata,
           r.occurred_at, r.recorded_at, r.idempotency_key, r.hash
    FROM unnest(rows) AS r
$f$;

-- advance_head: rows written by hand in one statement are checked together: a second row whose
-- recorded_at goes back, a second row that does not chain, then both rows right (the head moves).
DO $$
DECLARE
    head log_head;
    t1 timestamptz;
    t2 timestamptz;
    r1 events;
    r2 events;
BEGIN
    SELECT * INTO head FROM log_head;
    INSERT INTO event_claims (event_id, stream_id, stream_version) VALUES
        ('6f1c2d3e-0000-4000-8000-0000000000a1', 'order:hand-1', 0),
        ('6f1c2d3e-0000-4000-8000-0000000000a2', 'order:hand-2', 0);
    t1 := clock_timestamp();
    PERFORM pg_sleep(0.002);
    t2 := clock_timestamp();
    r1 := ROW(head.last_position + 1, '6f1c2d3e-0000-4000-8000-0000000000a1', 'order:hand-1', 0, 'OrderCreated', 1,
              '{"orderId":"hand-1"}', '{}', t1, t2, NULL, NULL, NULL, NULL)::events;
    r1.hash := chain_hash(head.last_hash, r1);
    r2 := ROW(head.last_position + 2, '6f1c2d3e-0000-4000-8000-0000000000a2', 'order:hand-2', 0, 'OrderCreated', 1,
              '{"orderId":"hand-2"}', '{}', t1, t1, NULL, NULL, NULL, NULL)::events;
    r2.hash := chain_hash(r1.hash, r2);
    BEGIN
        PERFORM pg_temp.insert_events(ARRAY[r1, r2]);
        RAISE EXCEPTION 'a recorded_at going back was kept';
    EXCEPTION WHEN check_violation THEN
        ASSERT SQLERRM = 'recorded_at goes back inside one append', SQLERRM;
    END;
    r2.recorded_at := t2;
    r2.hash := decode(repeat('ab', 32), 'hex');
    BEGIN
        PERFORM pg_temp.insert_events(ARRAY[r1, r2]);
        RAISE EXCEPTION 'a row that does not chain was kept';
    EXCEPTION WHEN check_violation THEN
        ASSERT SQLERRM LIKE format('the event at position %s does not chain onto the log%%', head.last_position + 2), SQLERRM;
    END;
    r2.hash := chain_hash(r1.hash, r2);
    PERFORM pg_temp.insert_events(ARRAY[r1, r2]);
    ASSERT (SELECT (last_position, last_hash, last_recorded_at) = (head.last_position + 2, r2.hash, t2) FROM log_head),
        'the head did not move to the second row';
END $$;

-- advance_head: within one statement, a stream's version 1 may not come before its version 0 (the
-- foreign key on the previous version is satisfied once both are in); in version order they append.
DO $$
DECLARE
    head log_head;
    v0 events;
    v1 events;
BEGIN
    SELECT * INTO head FROM log_head;
    INSERT INTO event_claims (event_id, stream_id, stream_version) VALUES
        ('6f1c2d3e-0000-4000-8000-0000000000c0', 'order:turned', 0),
        ('6f1c2d3e-0000-4000-8000-0000000000c1', 'order:turned', 1);
    v1 := ROW(head.last_position + 1, '6f1c2d3e-0000-4000-8000-0000000000c1', 'order:turned', 1, 'OrderClosed', 1,
              '{"orderId":"turned"}', '{}', clock_timestamp(), clock_timestamp(), NULL, NULL, NULL, NULL)::events;
    v1.hash := chain_hash(head.last_hash, v1);
    v0 := ROW(head.last_position + 2, '6f1c2d3e-0000-4000-8000-0000000000c0', 'order:turned', 0, 'OrderCreated', 1,
              '{"orderId":"turned"}', '{}', clock_timestamp(), v1.recorded_at, NULL, NULL, NULL, NULL)::events;
    v0.hash := chain_hash(v1.hash, v0);
    BEGIN
        PERFORM pg_temp.insert_events(ARRAY[v1, v0]);
        RAISE EXCEPTION 'version 1 before version 0 was kept';
    EXCEPTION WHEN check_violation THEN
        ASSERT SQLERRM = format('the event at position %s comes before the previous version of its stream',
                                head.last_position + 1), SQLERRM;
    END;
    v0.position := head.last_position + 1;
    v0.hash := chain_hash(head.last_hash, v0);
    v1.position := head.last_position + 2;
    v1.recorded_at := v0.recorded_at;
    v1.hash := chain_hash(v0.hash, v1);
    PERFORM pg_temp.insert_events(ARRAY[v0, v1]);
    ASSERT (SELECT last_position FROM log_head) = head.last_position + 2, 'versions 0 and 1 in order were not appended';
END $$;

-- claim_has_event: a pending version claimed before its stream's pending previous version is
-- refused (the sealer seals in claim order); claimed after it, it is kept and sealed after it.
-- Checked at once here.
DO $$
BEGIN
    SET CONSTRAINTS ALL IMMEDIATE;
    BEGIN
        WITH claims (event_id, version) AS (VALUES
            ('6f1c2d3e-0000-4000-8000-0000000000d1'::uuid, 1), ('6f1c2d3e-0000-4000-8000-0000000000d0'::uuid, 0))
        INSERT INTO event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at)
        SELECT c.event_id, 'order:claimed-turned', c.version, 'OrderCreated', 1, '{}', '{}', '2026-03-31T08:15:00Z'
        FROM claims c;
        RAISE EXCEPTION 'a pending version 1 claimed before its version 0 was kept';
    EXCEPTION WHEN integrity_constraint_violation THEN
        ASSERT SQLERRM = 'version 1 of stream order:claimed-turned is claimed pending before its version 0', SQLERRM;
    END;
    WITH claims (event_id, version) AS (VALUES
        ('6f1c2d3e-0000-4000-8000-0000000000d0'::uuid, 0), ('6f1c2d3e-0000-4000-8000-0000000000d1'::uuid, 1))
    INSERT INTO event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at)
    SELECT c.event_id, 'order:claimed-turned', c.version, 'OrderCreated', 1, '{}', '{}', '2026-03-31T08:15:00Z'
    FROM claims c;
    ASSERT (SELECT array_agg(stream_version ORDER BY seq) FROM event_claims WHERE stream_id = 'order:claimed-turned')
        = '{0,1}', 'versions 0 and 1 claimed in order were not kept';
    SET CONSTRAINTS ALL DEFERRED;
    ASSERT seal_pending() = 2, 'the two pending versions were not sealed';
    ASSERT (SELECT array_agg(stream_version ORDER BY position) FROM events WHERE stream_id = 'order:claimed-turned')
        = '{0,1}', 'the pending versions were not sealed in version order';
END $$;

-- The functions search the session's temporary tables last: a writer's temporary event_claims and
-- events (a writer may create temporary tables) do not stand in for the log's inside them.
DO $$
DECLARE
    s text := current_schema();
BEGIN
    ASSERT NOT EXISTS (
        SELECT 1 FROM pg_proc p CROSS JOIN LATERAL unnest(p.proconfig) AS c
        WHERE p.pronamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = s)
          AND c LIKE 'search_path=%' AND c NOT LIKE '%, pg_temp'), 'a function searches temporary tables first';
    CREATE TEMP TABLE event_claims (event_id uuid, stream_id text, stream_version bigint, seq bigint, payload jsonb);
    CREATE TEMP TABLE events (event_id uuid);
    INSERT INTO pg_temp.events VALUES ('6f1c2d3e-0000-4000-8000-0000000000e0');
    SET CONSTRAINTS ALL IMMEDIATE;
    BEGIN
        EXECUTE format('INSERT INTO %I.event_claims (event_id, stream_id, stream_version) VALUES (%L, %L, 0)', s,
                       '6f1c2d3e-0000-4000-8000-0000000000e0', 'order:shadowed');
        RAISE EXCEPTION 'a claim whose event is in a temporary table alone was kept';
    EXCEPTION WHEN integrity_constraint_violation THEN
        ASSERT SQLERRM LIKE 'event % is claimed without an event%', SQLERRM;
    END;
    BEGIN
        EXECUTE format($q$
            INSERT INTO %I.event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                                         occurred_at)
            SELECT gen_random_uuid(), 'order:shadowed-turned', v, 'OrderCreated', 1, '{}', '{}', '2026-03-31T08:15:00Z'
            FROM unnest(ARRAY[1, 0]) AS v$q$, s);
        RAISE EXCEPTION 'a pending version 1 claimed before its version 0 was kept beside a temporary event_claims';
    EXCEPTION WHEN integrity_constraint_violation THEN
        ASSERT SQLERRM = 'version 1 of stream order:shadowed-turned is claimed pending before its version 0', SQLERRM;
    END;
    SET CONSTRAINTS ALL DEFERRED;
    DROP TABLE pg_temp.event_claims, pg_temp.events;
END $$;

-- advance_head: a row must be the event its claim holds. A claim written under the lock (no
-- content) binds the row's stream, version and key; a claim committed pending binds its content
-- too, so no writer seals another's pending event with content of its own.
DO $$
DECLARE
    head log_head;
    r events;
BEGIN
    SELECT * INTO head FROM log_head;
    -- Version 1 of a stream claimed under the lock (after its version 0), key and all.
    INSERT INTO event_claims (event_id, stream_id, stream_version, idempotency_key) VALUES
        ('6f1c2d3e-0000-4000-8000-0000000000b0', 'order:claimed', 0, NULL),
        ('6f1c2d3e-0000-4000-8000-0000000000b1', 'order:claimed', 1, 'key:claimed');
    FOR i IN 1..3 LOOP
        -- Each a version 0, which the log's own keys allow: version 1 under another stream; version
        -- 1 as version 0 of its stream; version 0 with a key its claim does not have.
        r := ROW(head.last_position + 1, '6f1c2d3e-0000-4000-8000-0000000000b1', 'order:elsewhere', 0, 'OrderCreated', 1,
                 '{"orderId":"claimed"}', '{}', clock_timestamp(), clock_timestamp(), 'key:claimed', NULL, NULL, NULL)::events;
        CASE i
            WHEN 1 THEN NULL;
            WHEN 2 THEN r.stream_id := 'order:claimed';
            ELSE
                r.event_id := '6f1c2d3e-0000-4000-8000-0000000000b0';
                r.stream_id := 'order:claimed';
        END CASE;
        r.hash := chain_hash(head.last_hash, r);
        BEGIN
            PERFORM pg_temp.insert_events(ARRAY[r]);
            RAISE EXCEPTION 'a row unlike its claim (case %) was kept', i;
        EXCEPTION WHEN check_violation THEN
            ASSERT SQLERRM LIKE format('the event at position %s is not the event its claim holds%%', head.last_position + 1),
                SQLERRM;
        END;
    END LOOP;
    -- Another writer's pending event (a claim with its content), sealed by hand with other content.
    INSERT INTO event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at)
    VALUES ('6f1c2d3e-0000-4000-8000-0000000000b2', 'order:pending', 0, 'PaymentVerified', 1, '{"n": 1}', '{}',
            '2026-03-31T08:15:00Z');
    FOR i IN 1..3 LOOP
        r := ROW(head.last_position + 1, '6f1c2d3e-0000-4000-8000-0000000000b2', 'order:pending', 0, 'PaymentVerified', 1,
                 '{"n": 1}', '{}', '2026-03-31T08:15:00Z', clock_timestamp(), NULL, NULL, NULL, NULL)::events;
        CASE i
            WHEN 1 THEN r.payload := '{"n": 2}';
            WHEN 2 THEN r.occurred_at := '2026-03-31T08:15:01Z';
            ELSE r.event_type := 'OrderCreated';
        END CASE;
        r.hash := chain_hash(head.last_hash, r);
        BEGIN
            PERFORM pg_temp.insert_events(ARRAY[r]);
            RAISE EXCEPTION 'a pending event sealed with other content (case %) was kept', i;
        EXCEPTION WHEN check_violation THEN
            ASSERT SQLERRM LIKE format('the event at position %s is not the event its claim holds%%', head.last_position + 1),
                SQLERRM;
        END;
    END LOOP;
    -- Its own content: sealed, and the head moves.
    r := ROW(head.last_position + 1, '6f1c2d3e-0000-4000-8000-0000000000b2', 'order:pending', 0, 'PaymentVerified', 1,
             '{"n": 1}', '{}', '2026-03-31T08:15:00Z', clock_timestamp(), NULL, NULL, NULL, NULL)::events;
    r.hash := chain_hash(head.last_hash, r);
    PERFORM pg_temp.insert_events(ARRAY[r]);
    ASSERT (SELECT last_position FROM log_head) = head.last_position + 1, 'the pending event was not sealed by its own content';
    -- The claims of 'order:claimed' never got their events: gone with the transaction the test runs in.
END $$;

-- seal_pending and try_seal_pending: nothing pending, nothing sealed.
DO $$
BEGIN
    ASSERT seal_pending() = 0, 'seal_pending sealed something out of nothing';
    ASSERT try_seal_pending(), 'try_seal_pending could not take a free lock';
    ASSERT (SELECT count(*) FROM seal_events(ARRAY[]::uuid[])) = 0, 'seal_events of no ids returned rows';
END $$;

-- append_events and append_events_at_commit: a bad item is named by its place in the batch.
DO $$
DECLARE
    good text := '{"stream":"s","type":"OrderCreated","payload":{},"occurredAt":"2026-03-31T08:15:00Z"}';
BEGIN
    BEGIN
        PERFORM append_events(format('[%s, {"stream":"s"}]', good)::jsonb);
        RAISE EXCEPTION 'an item without type, payload and occurredAt was appended';
    EXCEPTION WHEN not_null_violation THEN
        ASSERT SQLERRM LIKE 'batch item 2:%', SQLERRM;
    END;
    BEGIN
        PERFORM append_events_at_commit(format('[%s, %s, 7]', good, good)::jsonb);
        RAISE EXCEPTION 'an item that is not an object was appended';
    EXCEPTION WHEN invalid_parameter_value THEN
        ASSERT SQLERRM LIKE 'batch item 3:%', SQLERRM;
    END;
    BEGIN
        PERFORM append_events_at_commit('[]');
        RAISE EXCEPTION 'an empty batch was taken';
    EXCEPTION WHEN invalid_parameter_value THEN
        ASSERT SQLERRM LIKE 'append_events_at_commit takes%', SQLERRM;
    END;
END $$;

-- append_events_at_commit: with the append lock free (this transaction takes it), it is
-- append_events: positions, and a retry returns them.
DO $$
DECLARE
    batch jsonb := '[{"stream":"order:sql-2","type":"OrderCreated","payload":{"orderId":"sql-2"},
                      "occurredAt":"2026-03-31T08:15:00Z","idempotencyKey":"order:sql-2:created"}]';
    first record;
    again record;
BEGIN
    SELECT * INTO first FROM append_events_at_commit(batch);
    ASSERT first.position = (SELECT last_position FROM log_head) AND NOT first.already_stored, format('first append: %s', first);
    SELECT * INTO again FROM append_events_at_commit(batch);
    ASSERT again.position = first.position AND again.already_stored, format('a retry: %s', again);
END $$;
