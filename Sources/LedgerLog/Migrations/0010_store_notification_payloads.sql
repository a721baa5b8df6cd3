-- The raw signed payloads of verified store notifications, kept beside the facts they became (the
-- facts carry the payload's sha256 digest as rawDigest), so an auditor can verify them again:
-- the Apple signedPayload, the Google Pub/Sub push body, the WeChat Pay body with the headers that
-- sign it. Written by the HTTP service as the writer role before the facts are appended;
-- append-only like the log (a re-delivery of the same payload is not stored twice).

CREATE TABLE store_notification_payloads (
    channel         text        NOT NULL CHECK (channel IN ('appstore', 'googleplay', 'wechat')),
    notification_id text        NOT NULL CHECK (length(notification_id) BETWEEN 1 AND 200),
    raw_digest      text        NOT NULL CHECK (raw_digest ~ '^sha256:[0-9a-f]{64}$'),
    raw             bytea       NOT NULL,
    raw_headers     jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(raw_headers) = 'object'),
    received_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT store_notification_payloads_pkey PRIMARY KEY (channel, notification_id, raw_digest),
    CONSTRAINT store_notification_payloads_digest CHECK (raw_digest = 'sha256:' || encode(sha256(raw), 'hex'))
);

CREATE TRIGGER store_notification_payloads_append_only BEFORE UPDATE OR DELETE ON store_notification_payloads
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER store_notification_payloads_no_truncate BEFORE TRUNCATE ON store_notification_payloads
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

REVOKE ALL ON store_notification_payloads FROM PUBLIC;
GRANT SELECT, INSERT ON store_notification_payloads TO ledger_writer;
GRANT SELECT ON store_notification_payloads TO ledger_reader, ledger_auditor, ledger_projector;
