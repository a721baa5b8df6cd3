-- One item of an append batch (append_events, append_events_at_commit), read and checked: its
-- fields, with their defaults (a new event id, schema version 1, metadata {}, expected version
-- "any"), or an error that names the item. It reads no table.
CREATE OR REPLACE FUNCTION batch_event(
    item jsonb, n integer,
    OUT event_id uuid, OUT stream_id text, OUT event_type text, OUT schema_version integer, OUT payload jsonb,
    OUT metadata jsonb, OUT occurred_at timestamptz, OUT idempotency_key text, OUT expected jsonb)
LANGUAGE plpgsql AS $$
BEGIN
    IF jsonb_typeof(item) <> 'object' THEN
        RAISE EXCEPTION 'batch item %: each event is a JSON object', n USING ERRCODE = 'invalid_parameter_value';
    END IF;
    event_id := coalesce((item->>'eventId')::uuid, gen_random_uuid());
    stream_id := item->>'stream';
    event_type := item->>'type';
    schema_version := coalesce((item->>'schemaVersion')::integer, 1);
    payload := item->'payload';
    metadata := coalesce(item->'metadata', '{}'::jsonb);
    occurred_at := (item->>'occurredAt')::timestamptz;
    idempotency_key := item->>'idempotencyKey';
    expected := coalesce(item->'expectedVersion', '"any"'::jsonb);
    IF stream_id IS NULL OR event_type IS NULL OR payload IS NULL OR occurred_at IS NULL THEN
        RAISE EXCEPTION 'batch item %: stream, type, payload and occurredAt are required', n USING ERRCODE = 'not_null_violation';
    END IF;
    IF NOT (expected IN ('"any"'::jsonb, '"no-stream"'::jsonb) OR jsonb_typeof(expected) = 'number') THEN
        RAISE EXCEPTION 'batch item %: expectedVersion must be "any", "no-stream" or a version >= 0', n USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;
