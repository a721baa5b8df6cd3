-- Seals every pending event (committed by a writer that found the append lock taken): gives each a
-- position and its hash, in commit order, under the append lock.
CREATE OR REPLACE FUNCTION seal_pending() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    head record;
    r record;
    previous bytea;
    next_position bigint;
    recorded timestamptz;
    new_row events;
    batch events[];
    seqs bigint[];
    total bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema()));
    LOOP
        batch := '{}';
        seqs := '{}';
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
        recorded := greatest(clock_timestamp(), head.last_recorded_at);
        previous := head.last_hash;
        next_position := head.last_position;
        FOR r IN SELECT * FROM pending_events p ORDER BY p.seq LIMIT 5000 LOOP
            next_position := next_position + 1;
            new_row := ROW(next_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload,
                           r.metadata, r.occurred_at, recorded, r.idempotency_key, NULL, NULL, NULL)::events;
            new_row.hash := chain_hash(previous, new_row);
            previous := new_row.hash;
            batch := batch || new_row;
            seqs := seqs || r.seq;
        END LOOP;
        EXIT WHEN next_position = head.last_position;
        INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata,
                            occurred_at, recorded_at, idempotency_key, hash)
        SELECT b.position, b.event_id, b.stream_id, b.stream_version, b.event_type, b.schema_version, b.payload, b.metadata,
               b.occurred_at, b.recorded_at, b.idempotency_key, b.hash
        FROM unnest(batch) AS b ORDER BY b.position;
        DELETE FROM pending_events p WHERE p.seq = ANY (seqs);
        total := total + (next_position - head.last_position);
        PERFORM pg_notify('ledger_events_' || current_schema(), next_position::text);
    END LOOP;
    RETURN total;
END
$$;
