-- Server-side append, for writers in any language (psql, Go, Java, Node...) that connect as
-- ledger_writer: `SELECT * FROM append_events('[{...}, ...]'::jsonb)`. Each element has the fields
-- of a JSON line of `ledger append` (eventId, stream, type, schemaVersion, payload, metadata,
-- occurredAt, idempotencyKey, expectedVersion). The batch is atomic and keeps the log's guarantees
-- exactly as the Swift library does, under the same per-schema append lock:
--   * an event whose id or idempotency key is stored with the same content is not stored again:
--     its original position comes back with already_stored = true (a safe retry);
--   * the same id or key with other content: SQLSTATE LK409, nothing from the batch is written;
--   * a stream not at expectedVersion ("any", "no-stream" or a version): SQLSTATE LV409, nothing written;
--   * positions are gap-free in commit order, recordedAt is the server clock, and each row's hash
--     chains onto the one before (computed here with chain_hash; the head trigger checks it again).
-- It does not check payloads against the fact catalogue (that lives in the application): use the
-- HTTP service (POST /v1/events) to have every fact validated too.

-- function: append_events.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION append_events(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION append_events(jsonb) TO ledger_writer;
