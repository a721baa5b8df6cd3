-- A candidate append path, measured by tools/bench-append-design.sh; not the ledger's layout.
-- Applied to a fresh ledger schema (for its chain_hash, roles and `events`), with search_path set
-- to it. A writer's append is one row in `facts`, in its own transaction, with no global lock:
-- every uniqueness (event id, idempotency key, stream version) is a unique index of that table, and
-- the row carries its writer's transaction id. A sealer (split.sql or inbox.sql), one round at a
-- time, positions and chains every fact whose writer has finished: those whose transaction id is
-- below the oldest transaction still running, which no later commit can join.
CREATE TABLE facts (
    seq             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    writer_xid      bigint      NOT NULL DEFAULT (pg_current_xact_id()::text)::bigint,
    event_id        uuid        NOT NULL,
    stream_id       text        NOT NULL CHECK (length(stream_id) BETWEEN 1 AND 200),
    stream_version  bigint      NOT NULL CHECK (stream_version >= 0),
    event_type      text        NOT NULL CHECK (event_type ~ '^[A-Z][A-Za-z0-9]{0,99}$'),
    schema_version  integer     NOT NULL CHECK (schema_version BETWEEN 1 AND 1000),
    payload         jsonb       NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
    metadata        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    occurred_at     timestamptz NOT NULL,
    idempotency_key text        CHECK (length(idempotency_key) BETWEEN 1 AND 300),
    CONSTRAINT facts_event_id_key UNIQUE (event_id),
    CONSTRAINT facts_idempotency_key_key UNIQUE (idempotency_key),
    CONSTRAINT facts_stream_version_key UNIQUE (stream_id, stream_version)
);
-- A round finds its facts by transaction id. Ids grow with time, so each insert lands at the index's
-- right edge. (A block range index cost the insert even less, but until a vacuum summarized the
-- pages written since the last one, every round read all of them: 790 pages, 3.3 ms, at 50,000 facts.
-- Rounds that run for every waiting writer ran at a third of this index's rate.)
CREATE INDEX facts_writer_xid ON facts (writer_xid);

CREATE TABLE facts_seal_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    horizon   bigint  NOT NULL   -- every fact whose writer_xid is below it is sealed
);
INSERT INTO facts_seal_state VALUES (true, 0);

-- One event, as append_events takes it: its stream's version from the stream's last, the expected
-- version checked (-1: no stream; NULL: any), a retry (same id or key) answered with the original.
-- The one rule the sealer's order needs: a stream's next event never has an older transaction id
-- than the event before it (a transaction that took its id before the previous event committed
-- must begin again: 40001, which a lost race with any version also is once this transaction has
-- its id), so sealing in (writer_xid, seq) order keeps every stream in order.
CREATE FUNCTION append_fact(p_id uuid, p_stream text, p_type text, p_payload jsonb, p_occurred timestamptz,
                            p_key text, p_expected bigint)
RETURNS TABLE (event_id uuid, stream_version bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
    last record;
    mine bigint;
    stored record;
    attempts integer := 0;
BEGIN
    LOOP
        SELECT f.stream_version, f.writer_xid INTO last FROM facts f WHERE f.stream_id = p_stream
        ORDER BY f.stream_version DESC LIMIT 1;
        IF p_expected IS NULL OR coalesce(last.stream_version, -1) = p_expected THEN
            -- A lost race below took this transaction's id already (ON CONFLICT's insert does).
            mine := (pg_current_xact_id_if_assigned()::text)::bigint;
            IF mine IS NOT NULL AND last.writer_xid > mine THEN
                RAISE EXCEPTION 'stream % moved after this transaction began writing; begin again', p_stream
                    USING ERRCODE = 'serialization_failure';
            END IF;
            INSERT INTO facts (event_id, stream_id, stream_version, event_type, schema_version, payload, occurred_at,
                               idempotency_key)
            VALUES (p_id, p_stream, coalesce(last.stream_version + 1, 0), p_type, 1, p_payload, p_occurred, p_key)
            ON CONFLICT DO NOTHING;
            IF FOUND THEN
                event_id := p_id;
                stream_version := coalesce(last.stream_version + 1, 0);
                already_stored := false;
                RETURN NEXT;
                RETURN;
            END IF;
        END IF;
        -- Not written: a retry (this id or key is stored: the original, if its content is the
        -- same), or a version taken (ON CONFLICT waited for that writer's commit).
        SELECT f.event_id, f.stream_id, f.stream_version, f.event_type, f.payload INTO stored FROM facts f
        WHERE f.event_id = p_id OR f.idempotency_key = p_key LIMIT 1;
        IF FOUND THEN
            IF stored.stream_id <> p_stream OR stored.event_type <> p_type OR stored.payload <> p_payload THEN
                RAISE EXCEPTION 'idempotency conflict: event %, key % is stored with different content', p_id,
                    coalesce(p_key, '-') USING ERRCODE = 'LK409';
            END IF;
            event_id := stored.event_id;
            stream_version := stored.stream_version;
            already_stored := true;
            RETURN NEXT;
            RETURN;
        END IF;
        attempts := attempts + 1;
        IF p_expected IS NOT NULL OR attempts >= 100 THEN
            RAISE EXCEPTION 'version conflict on stream %: expected %, the stream is at %', p_stream,
                coalesce(p_expected::text, 'any'), coalesce(last.stream_version, -1) USING ERRCODE = 'LV409';
        END IF;
    END LOOP;
END $$;

GRANT SELECT, INSERT ON facts TO ledger_writer;
GRANT EXECUTE ON FUNCTION append_fact(uuid, text, text, jsonb, timestamptz, text, bigint) TO ledger_writer;

