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
-- function: seal_pending.sql (its current text, from Sources/LedgerLog/Functions)

-- function: try_seal_pending.sql (its current text, from Sources/LedgerLog/Functions)

-- After a writer's commit. When the lock is free, take it and seal everything pending. When another
-- session holds it (sealing, or writing under it), wait for that session to commit and look again,
-- rather than queue for the lock behind every other waiter: most often it has sealed these events
-- too. After three looks, queue for the lock.
-- function: seal_events.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION seal_pending(), try_seal_pending(), seal_events(uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION seal_pending(), try_seal_pending(), seal_events(uuid[]) TO ledger_writer;

-- append_events as in 0012, on the claims: under the lock it first seals what is pending, reads
-- versions from the sealed log, and claims each new event before writing it. When a writer that
-- did not hold the lock has meanwhile committed the same id, key or stream version as pending, it
-- seals that event and decides again: a retry returns it, a version that moved is a conflict only
-- if the item expected another one.
-- append_events was redefined here; its current text is Functions/append_events.sql, which every `ledger migrate` applies
