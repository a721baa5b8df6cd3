-- Appends that scale with independent writers: a writer that finds the append lock taken no longer
-- waits for it. It claims its events (ids, keys, stream versions) and commits them as pending, with
-- every uniqueness and version guarantee enforced by constraints at that commit; a sealer then gives
-- all pending events their positions and hashes, in one transaction and under the lock, as many at
-- a time as have committed. Readers of the log see sealed events only (the `events` table), so they
-- still never skip or repeat one, and the head and hash chain rules of 0001 and 0004 are unchanged.
--
--   event_claims    one row per event, sealed or pending: the unique event id, the unique
--                   idempotency key and the unique, contiguous stream version. Every event row must
--                   have its claim (foreign key), so no writer can slip an event past the claims.
--   pending_events  committed, not yet sealed; deleted by the sealer as it moves them into `events`
--                   (the writer role may insert them, never delete or change them).
--   seal_pending()  under the append lock: moves every pending event visible to it into `events`,
--                   in claim order, chaining each hash onto the last; notifies the log's channel.
--   try_seal_pending()  takes the lock if it is free and seals; false when another session holds it.
--   seal_events(ids)    the positions of these events, sealing them first if they are pending (or
--                   waiting for the session that is sealing): what a writer calls after its commit.
--
-- A writer that holds the lock (it was free) still writes its events straight into `events`, after
-- sealing what is pending, so one writer alone pays for no second transaction.

CREATE TABLE event_claims (
    event_id         uuid   NOT NULL,
    idempotency_key  text   CHECK (length(idempotency_key) BETWEEN 1 AND 300),
    stream_id        text   NOT NULL CHECK (length(stream_id) BETWEEN 1 AND 200),
    stream_version   bigint NOT NULL CHECK (stream_version >= 0),
    previous_version bigint GENERATED ALWAYS AS (NULLIF(stream_version - 1, -1)) STORED
);

INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
SELECT event_id, idempotency_key, stream_id, stream_version FROM events ORDER BY position;

ALTER TABLE event_claims
    ADD CONSTRAINT event_claims_pkey PRIMARY KEY (event_id),
    ADD CONSTRAINT event_claims_idempotency_key_key UNIQUE (idempotency_key),
    ADD CONSTRAINT event_claims_stream_version_key UNIQUE (stream_id, stream_version);
ALTER TABLE event_claims
    ADD CONSTRAINT event_claims_contiguous_version FOREIGN KEY (stream_id, previous_version)
        REFERENCES event_claims (stream_id, stream_version);
ALTER TABLE events
    ADD CONSTRAINT events_claimed FOREIGN KEY (event_id) REFERENCES event_claims (event_id);

COMMENT ON TABLE event_claims IS 'Each event''s id, idempotency key and stream version, claimed when it commits (sealed or pending).';

CREATE TABLE pending_events (
    seq             bigserial   PRIMARY KEY,
    event_id        uuid        NOT NULL REFERENCES event_claims (event_id),
    stream_id       text        NOT NULL,
    stream_version  bigint      NOT NULL,
    event_type      text        NOT NULL CHECK (event_type ~ '^[A-Z][A-Za-z0-9]{0,99}$'),
    schema_version  integer     NOT NULL CHECK (schema_version BETWEEN 1 AND 1000),
    payload         jsonb       NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
    metadata        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    occurred_at     timestamptz NOT NULL,
    idempotency_key text
);
CREATE UNIQUE INDEX pending_events_event_id ON pending_events (event_id);
CREATE INDEX pending_events_idempotency_key ON pending_events (idempotency_key) WHERE idempotency_key IS NOT NULL;

COMMENT ON TABLE pending_events IS 'Committed appends waiting for the sealer to give them positions; see README "Guarantees".';

CREATE TRIGGER event_claims_append_only BEFORE UPDATE OR DELETE ON event_claims
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER event_claims_no_truncate BEFORE TRUNCATE ON event_claims
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER pending_events_no_update BEFORE UPDATE ON pending_events
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER pending_events_no_truncate BEFORE TRUNCATE ON pending_events
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

REVOKE ALL ON event_claims, pending_events FROM PUBLIC;
GRANT SELECT, INSERT ON event_claims, pending_events TO ledger_writer;
GRANT USAGE ON SEQUENCE pending_events_seq_seq TO ledger_writer;
GRANT SELECT ON event_claims, pending_events TO ledger_projector, ledger_reader, ledger_auditor;

-- Runs as the owner (the writer may not delete pending rows); takes the append lock (re-entrant
-- for a session that holds it). Seals in claim order (seq): a stream's next version is claimed
-- only after its previous one committed, so versions keep their order in the log.
CREATE FUNCTION seal_pending() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    head record;
    r record;
    previous bytea;
    next_position bigint;
    recorded timestamptz;
    new_row events;
    batch events[];
    seqs bigint[];
    total bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema()));
    LOOP
        batch := '{}';
        seqs := '{}';
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
        recorded := greatest(clock_timestamp(), head.last_recorded_at);
        previous := head.last_hash;
        next_position := head.last_position;
        FOR r IN SELECT * FROM pending_events p ORDER BY p.seq LIMIT 5000 LOOP
            next_position := next_position + 1;
            new_row := ROW(next_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload,
                           r.metadata, r.occurred_at, recorded, r.idempotency_key, NULL, NULL, NULL)::events;
            new_row.hash := chain_hash(previous, new_row);
            previous := new_row.hash;
            batch := batch || new_row;
            seqs := seqs || r.seq;
        END LOOP;
        EXIT WHEN next_position = head.last_position;
        INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                            occurred_at, recorded_at, idempotency_key, hash)
        SELECT b.position, b.event_id, b.stream_id, b.stream_version, b.event_type, b.schema_version, b.payload, b.metadata,
               b.occurred_at, b.recorded_at, b.idempotency_key, b.hash
        FROM unnest(batch) AS b ORDER BY b.position;
        DELETE FROM pending_events p WHERE p.seq = ANY (seqs);
        total := total + (next_position - head.last_position);
        PERFORM pg_notify('ledger_events_' || current_schema(), next_position::text);
    END LOOP;
    RETURN total;
END
$$;

CREATE FUNCTION try_seal_pending() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN false;
    END IF;
    PERFORM seal_pending();
    RETURN true;
END
$$;

-- After a writer's commit. When the lock is free, take it and seal everything pending. When another
-- session holds it (sealing, or writing under it), wait for that session to commit and look again,
-- rather than queue for the lock behind every other waiter: most often it has sealed these events
-- too. After three looks, queue for the lock.
CREATE FUNCTION seal_events(ids uuid[]) RETURNS TABLE (event_id uuid, "position" bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    lock_key integer := hashtext('ledger-append:' || current_schema());
    tries integer := 0;
BEGIN
    LOOP
        EXIT WHEN NOT EXISTS (SELECT 1 FROM pending_events p WHERE p.event_id = ANY (ids));
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

REVOKE ALL ON FUNCTION seal_pending(), try_seal_pending(), seal_events(uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION seal_pending(), try_seal_pending(), seal_events(uuid[]) TO ledger_writer;

-- append_events as in 0012, on the claims: under the lock it first seals what is pending, reads
-- versions from the sealed log, and claims each new event before writing it. When a writer that
-- did not hold the lock has meanwhile committed the same id, key or stream version as pending, it
-- seals that event and decides again: a retry returns it, a version that moved is a conflict only
-- if the item expected another one.
CREATE OR REPLACE FUNCTION append_events(batch jsonb)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
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
            -- A retry: the same event id, or the same business key, already stored.
            SELECT e.position, e.event_id, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload, e.idempotency_key
            INTO stored FROM events e
            WHERE e.event_id = v_id OR (v_key IS NOT NULL AND e.idempotency_key = v_key)
            ORDER BY e.position LIMIT 1;
            IF FOUND THEN
                IF stored.stream_id <> v_stream OR stored.event_type <> v_type OR stored.schema_version <> v_schema
                   OR stored.payload <> v_payload OR (stored.event_id = v_id AND stored.idempotency_key IS DISTINCT FROM v_key)
                   OR (stored.event_id <> v_id AND EXISTS (SELECT 1 FROM events x WHERE x.event_id = v_id)) THEN
                    RAISE EXCEPTION 'idempotency conflict: batch item % (event %, key %) is already stored at position % with different content; nothing from this batch was written',
                        n, v_id, coalesce(v_key, '-'), stored.position
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
            SELECT max(e.stream_version) INTO current_version FROM events e WHERE e.stream_id = v_stream;
            IF (v_expected = '"no-stream"'::jsonb AND current_version IS NOT NULL)
               OR (jsonb_typeof(v_expected) = 'number' AND current_version IS DISTINCT FROM (v_expected #>> '{}')::bigint) THEN
                RAISE EXCEPTION 'version conflict on stream %: expected %, but the stream %; nothing from this batch was written',
                    v_stream, v_expected #>> '{}', coalesce('is at version ' || current_version, 'does not exist')
                    USING ERRCODE = 'LV409';
            END IF;
            BEGIN
                INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
                VALUES (v_id, v_key, v_stream, coalesce(current_version + 1, 0));
            EXCEPTION WHEN unique_violation THEN
                -- A writer that did not hold the lock committed this id, key or version as
                -- pending meanwhile: seal it, then decide this event again on the log as it is.
                attempts := attempts + 1;
                IF attempts > 100 THEN
                    RAISE EXCEPTION 'batch item % (event %, key %): stream % kept changing under concurrent appends; nothing from this batch was written',
                        n, v_id, coalesce(v_key, '-'), v_stream USING ERRCODE = 'LV409';
                END IF;
                PERFORM seal_pending();
                SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
                recorded := greatest(clock_timestamp(), head.last_recorded_at);
                previous := head.last_hash;
                next_position := head.last_position;
                CONTINUE claim;
            END;
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
