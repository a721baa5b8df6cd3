-- Candidate "inbox": `facts` is every event's claim and first copy; the sealer writes each into
-- `events` as the ledger lays it out today (every constraint, the head trigger's checks and its
-- re-hash), so readers are unchanged. Each event is written twice.
ALTER TABLE events DROP CONSTRAINT events_claimed;
ALTER TABLE events ADD CONSTRAINT events_claimed FOREIGN KEY (event_id) REFERENCES facts (event_id);

CREATE FUNCTION seal_round() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    st facts_seal_state%ROWTYPE;
    head record;
    v_horizon bigint;
    r record;
    previous bytea;
    next_position bigint;
    recorded timestamptz;
    e events;
    batch events[] := '{}';
BEGIN
    SELECT * INTO st FROM facts_seal_state FOR UPDATE;
    v_horizon := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
    IF v_horizon <= st.horizon THEN
        RETURN 0;
    END IF;
    SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
    previous := head.last_hash;
    next_position := head.last_position;
    recorded := greatest(clock_timestamp(), head.last_recorded_at);
    FOR r IN SELECT * FROM facts f WHERE f.writer_xid >= st.horizon AND f.writer_xid < v_horizon
             ORDER BY f.writer_xid, f.seq LOOP
        next_position := next_position + 1;
        e := ROW(next_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload,
                 r.metadata, r.occurred_at, recorded, r.idempotency_key, NULL, NULL, NULL)::events;
        e.hash := chain_hash(previous, e);
        previous := e.hash;
        batch := batch || e;
    END LOOP;
    INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                        occurred_at, recorded_at, idempotency_key, hash)
    SELECT b.position, b.event_id, b.stream_id, b.stream_version, b.event_type, b.schema_version, b.payload, b.metadata,
           b.occurred_at, b.recorded_at, b.idempotency_key, b.hash
    FROM unnest(batch) AS b ORDER BY b.position;
    UPDATE facts_seal_state SET horizon = v_horizon;
    RETURN next_position - head.last_position;
END $$;
GRANT EXECUTE ON FUNCTION seal_round() TO ledger_writer;

CREATE VIEW sealed_log AS
SELECT position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at,
       recorded_at, idempotency_key, hash
FROM events;
