-- The hash chain in SQL: the canonical bytes of an event, exactly as LedgerCore's EventChain
-- builds them (length-prefixed fields: a 4-byte big-endian length, then UTF-8), and SHA-256 of the
-- previous hash and those bytes. STABLE (what convert_to and extract are), so the planner inlines
-- chain_hash into the statements that call it. A test checks these bytes against the Swift layout.
CREATE OR REPLACE FUNCTION chain_field(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT int4send(length(b)) || b
$$;

CREATE OR REPLACE FUNCTION chain_field(t text) RETURNS bytea LANGUAGE sql STABLE STRICT AS $$
    SELECT chain_field(convert_to(t, 'UTF8'))
$$;

CREATE OR REPLACE FUNCTION chain_microseconds(t timestamptz) RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT ((extract(epoch FROM t) * 1000000)::numeric(30, 0))::text
$$;

-- The event's canonical bytes from each field's chain text, in their order, and their hash. The
-- head trigger, which re-hashes a statement's rows, gives it texts it computed once, in a subquery
-- of its own: chain_field names its argument twice (its length, then its bytes), and an inlined
-- function's argument is an expression evaluated wherever it is named, so chain_hash(previous,
-- row) turns each jsonb into text twice, each time into a number twice, and so on (a fifth of the
-- re-hash's time).
CREATE OR REPLACE FUNCTION chain_hash_texts(previous bytea, "position" text, event_id text, stream_id text,
    stream_version text, event_type text, schema_version text, occurred_at text, recorded_at text, idempotency_key text,
    payload text, metadata text) RETURNS bytea LANGUAGE sql STABLE AS $$
    SELECT sha256(previous
        || chain_field('ledger-event-v1'::text)
        || chain_field("position")
        || chain_field(event_id)
        || chain_field(stream_id)
        || chain_field(stream_version)
        || chain_field(event_type)
        || chain_field(schema_version)
        || chain_field(occurred_at)
        || chain_field(recorded_at)
        || CASE WHEN idempotency_key IS NULL THEN '\x00'::bytea ELSE '\x01'::bytea || chain_field(idempotency_key) END
        || chain_field(payload)
        || chain_field(metadata))
$$;

-- The hash of a row of events: its fields as their chain texts (position::text, event_id::text,
-- stream_version::text, schema_version::text, chain_microseconds(occurred_at),
-- chain_microseconds(recorded_at), payload::text, metadata::text), hashed by chain_hash_texts.
CREATE OR REPLACE FUNCTION chain_hash(previous bytea, e events) RETURNS bytea LANGUAGE sql STABLE AS $$
    SELECT chain_hash_texts(previous, e.position::text, e.event_id::text, e.stream_id, e.stream_version::text,
        e.event_type, e.schema_version::text, chain_microseconds(e.occurred_at), chain_microseconds(e.recorded_at),
        e.idempotency_key, e.payload::text, e.metadata::text)
$$;
