-- The event log. Applied by `ledger migrate` with search_path set to the ledger's schema.
--
-- Guarantees enforced here, by the database, whatever program writes:
--   * positions are unique and gapless (primary key + a self-referencing foreign key to position - 1);
--   * stream versions are unique and contiguous from 0 (unique key + foreign key to version - 1);
--   * event ids and business idempotency keys are unique;
--   * rows are never updated, deleted or truncated (triggers), and the writer role may only SELECT/INSERT;
--   * the head row (last position and hash) only moves forward and always names the last event.

CREATE TABLE events (
    position          bigint      NOT NULL CHECK (position > 0),
    event_id          uuid        NOT NULL,
    stream_id         text        NOT NULL CHECK (length(stream_id) BETWEEN 1 AND 200),
    stream_version    bigint      NOT NULL CHECK (stream_version >= 0),
    event_type        text        NOT NULL CHECK (event_type ~ '^[A-Z][A-Za-z0-9]{0,99}$'),
    schema_version    integer     NOT NULL CHECK (schema_version BETWEEN 1 AND 1000),
    payload           jsonb       NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
    metadata          jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    occurred_at       timestamptz NOT NULL,
    recorded_at       timestamptz NOT NULL,
    idempotency_key   text        CHECK (length(idempotency_key) BETWEEN 1 AND 300),
    hash              bytea       NOT NULL CHECK (length(hash) = 32),
    previous_position bigint      GENERATED ALWAYS AS (NULLIF(position - 1, 0)) STORED,
    previous_version  bigint      GENERATED ALWAYS AS (NULLIF(stream_version - 1, -1)) STORED,
    CONSTRAINT events_pkey PRIMARY KEY (position),
    CONSTRAINT events_event_id_key UNIQUE (event_id),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version),
    CONSTRAINT events_idempotency_key_key UNIQUE (idempotency_key),
    CONSTRAINT events_gapless_position FOREIGN KEY (previous_position) REFERENCES events (position),
    CONSTRAINT events_contiguous_version FOREIGN KEY (stream_id, previous_version)
        REFERENCES events (stream_id, stream_version)
);

COMMENT ON TABLE events IS 'Append-only log of purchase facts; see README "Guarantees".';

CREATE TABLE log_head (
    singleton        boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    last_position    bigint      NOT NULL CHECK (last_position >= 0),
    last_hash        bytea       NOT NULL CHECK (length(last_hash) = 32),
    last_recorded_at timestamptz NOT NULL
);

INSERT INTO log_head (last_position, last_hash, last_recorded_at)
VALUES (0, decode(repeat('00', 32), 'hex'), '2000-01-01T00:00:00Z');

-- function: refuse_change.sql (its current text, from Sources/LedgerLog/Functions)

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_head_no_delete BEFORE DELETE ON log_head
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_head_no_truncate BEFORE TRUNCATE ON log_head
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- The head moves forward only, and must name the event that is really last.
-- SET search_path FROM CURRENT: the function finds this schema's tables whatever the caller's path.
-- function: check_head_advance.sql (its current text, from Sources/LedgerLog/Functions)

CREATE TRIGGER log_head_advance BEFORE UPDATE ON log_head
    FOR EACH ROW EXECUTE FUNCTION check_head_advance();

-- Roles: services append as ledger_writer, auditors read as ledger_reader.
DO $$
BEGIN
    BEGIN
        CREATE ROLE ledger_writer NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END;
    BEGIN
        CREATE ROLE ledger_reader NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ledger_writer, ledger_reader', current_schema());
END
$$;

GRANT SELECT, INSERT ON events TO ledger_writer;
GRANT SELECT, UPDATE ON log_head TO ledger_writer;
GRANT SELECT ON events, log_head TO ledger_reader;
