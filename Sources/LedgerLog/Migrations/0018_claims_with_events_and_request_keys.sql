-- Two things the writer role could get wrong, made impossible by the database.
--
-- 1. A claim without its event. The writer may INSERT into event_claims (the append path writes
--    claims and events, or pending events, in one transaction). A claim written alone would hold
--    the event's id, key and stream version forever with nothing to compare a later append with:
--    every append of that fact would fail. Each claim must now have its event (pending or sealed)
--    when its transaction commits.
-- function: claim_has_event.sql (its current text, from Sources/LedgerLog/Functions)

CREATE CONSTRAINT TRIGGER event_claims_have_events AFTER INSERT ON event_claims
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION claim_has_event();

-- 2. An append request's idempotency key (the HTTP API's Idempotency-Key), per caller, with the
--    SHA-256 of the request's body: the same key again with another body is a conflict, whatever
--    the body's lines carry. A key names one body for good.
CREATE TABLE append_requests (
    caller      text        NOT NULL,
    request_key text        NOT NULL,
    body_digest bytea       NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT append_requests_pkey PRIMARY KEY (caller, request_key),
    CONSTRAINT append_requests_digest CHECK (length(body_digest) = 32),
    CONSTRAINT append_requests_key CHECK (length(request_key) BETWEEN 1 AND 200)
);
COMMENT ON TABLE append_requests IS 'Idempotency keys of append requests, per caller, with the digest of the body each names.';

CREATE TRIGGER append_requests_append_only BEFORE UPDATE OR DELETE ON append_requests
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER append_requests_no_truncate BEFORE TRUNCATE ON append_requests
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

REVOKE ALL ON append_requests FROM PUBLIC;
GRANT SELECT, INSERT ON append_requests TO ledger_writer;
GRANT SELECT ON append_requests TO ledger_reader, ledger_auditor;
