-- One row a pending event: an event committed without the append lock is its claim, content and
-- all, where it was a claim and a row of pending_events. The claim's unique constraints still hold
-- its id, key and stream version; the sealer no longer deletes anything.
--
--   event_claims  gains the pending event's content (type, schema version, payload, metadata,
--                 occurredAt), its insertion order (seq) and its writer's transaction id
--                 (writer_xid). A claim written with its event in `events` (under the lock) has no
--                 content; a claim with content is pending until `events` holds its id, and keeps
--                 its content after (a pending event is stored twice once sealed).
--   seal_state    where the next seal looks: the transaction ids that may still hold unsealed
--                 claims. A seal reads the snapshot first, seals every pending claim it can see,
--                 then records that snapshot's running transactions and its xmax (the first id
--                 it did not see completed; running ones at or above it are not listed).
--                 Any claim it could not see was written by one of those, so the next seal looks
--                 at those ids only (an index of content claims by writer_xid), whatever other
--                 transaction is open in the cluster meanwhile.
--   pending_events  now a view of the claims not sealed yet, with the columns the table had, so
--                 that readers (retries, counts, `seal_events`) ask it as before.
--
-- The deferred check that a claim has its event (0018) now also accepts a claim that carries its
-- content, and only with its own writer's transaction id, so no writer can hide one from the sealer.

-- Writers of the former layout wait, and those in flight commit first: their pending rows are
-- moved below with the order they were given, and the new sequence starts after all of them.
LOCK TABLE event_claims, pending_events IN EXCLUSIVE MODE;
SELECT pg_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema()));

CREATE SEQUENCE event_claims_seq;
SELECT setval('event_claims_seq', coalesce((SELECT max(seq) FROM pending_events), 0) + 1, false);

ALTER TABLE event_claims
    ADD COLUMN seq bigint,
    ADD COLUMN writer_xid bigint,
    ADD COLUMN event_type text,
    ADD COLUMN schema_version integer,
    ADD COLUMN payload jsonb,
    ADD COLUMN metadata jsonb,
    ADD COLUMN occurred_at timestamptz;
-- Checked on every new claim; the claims stored have none of these columns (NOT VALID: no scan of
-- them under the table's lock).
ALTER TABLE event_claims
    ADD CONSTRAINT event_claims_event_type CHECK (event_type ~ '^[A-Z][A-Za-z0-9]{0,99}$') NOT VALID,
    ADD CONSTRAINT event_claims_schema_version CHECK (schema_version BETWEEN 1 AND 1000) NOT VALID,
    ADD CONSTRAINT event_claims_payload CHECK (jsonb_typeof(payload) = 'object') NOT VALID,
    ADD CONSTRAINT event_claims_metadata CHECK (jsonb_typeof(metadata) = 'object') NOT VALID,
    ADD CONSTRAINT event_claims_content CHECK (
        (payload IS NULL AND event_type IS NULL AND schema_version IS NULL AND metadata IS NULL AND occurred_at IS NULL)
        OR (payload IS NOT NULL AND event_type IS NOT NULL AND schema_version IS NOT NULL AND metadata IS NOT NULL
            AND occurred_at IS NOT NULL AND seq IS NOT NULL AND writer_xid IS NOT NULL)) NOT VALID;
-- Defaults set after the columns exist: the claims already stored keep nulls (no table rewrite).
ALTER TABLE event_claims
    ALTER COLUMN seq SET DEFAULT nextval('event_claims_seq'),
    ALTER COLUMN writer_xid SET DEFAULT (pg_current_xact_id()::text)::bigint;
ALTER SEQUENCE event_claims_seq OWNED BY event_claims.seq;

CREATE INDEX event_claims_pending ON event_claims (writer_xid) WHERE payload IS NOT NULL;

CREATE TABLE seal_state (
    singleton boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
    next_xid  bigint   NOT NULL,
    running   bigint[] NOT NULL
);
COMMENT ON TABLE seal_state IS 'The transaction ids whose claims the next seal looks at: running ones and every id from next_xid.';
-- Events pending now become content claims written by transaction 0, which the first seal looks at.
INSERT INTO seal_state VALUES (true, 0, '{}');

ALTER TABLE event_claims DISABLE TRIGGER event_claims_append_only;
UPDATE event_claims c
SET seq = p.seq, writer_xid = 0, event_type = p.event_type, schema_version = p.schema_version, payload = p.payload,
    metadata = p.metadata, occurred_at = p.occurred_at
FROM pending_events p WHERE p.event_id = c.event_id;
ALTER TABLE event_claims ENABLE TRIGGER event_claims_append_only;

DROP TABLE pending_events;

-- function: pending_claims.sql (its current text, from Sources/LedgerLog/Functions)
REVOKE ALL ON FUNCTION pending_claims() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pending_claims() TO ledger_writer, ledger_projector, ledger_reader, ledger_auditor;

CREATE VIEW pending_events AS
SELECT c.seq, c.event_id, c.stream_id, c.stream_version, c.event_type, c.schema_version, c.payload, c.metadata,
       c.occurred_at, c.idempotency_key
FROM pending_claims() c;
COMMENT ON VIEW pending_events IS 'Committed appends waiting for the sealer to give them positions: claims with content not in events yet.';

REVOKE ALL ON seal_state, pending_events FROM PUBLIC;
GRANT SELECT ON pending_events TO ledger_writer, ledger_projector, ledger_reader, ledger_auditor;
-- A writer names every column of a claim but its order and its transaction id, which come from their
-- defaults: it cannot place a pending event before the events it follows.
REVOKE INSERT ON event_claims FROM ledger_writer;
GRANT INSERT (event_id, idempotency_key, stream_id, stream_version, event_type, schema_version, payload, metadata,
              occurred_at) ON event_claims TO ledger_writer;
GRANT USAGE ON SEQUENCE event_claims_seq TO ledger_writer;

-- function: seal_events.sql (its current text, from Sources/LedgerLog/Functions)
-- function: claim_has_event.sql (its current text, from Sources/LedgerLog/Functions)
-- function: seal_pending.sql (its current text, from Sources/LedgerLog/Functions)
-- function: append_batch.sql (its current text, from Sources/LedgerLog/Functions)
