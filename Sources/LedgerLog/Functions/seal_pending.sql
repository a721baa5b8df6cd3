-- Seals every pending event (a claim with content, committed by a writer that found the append
-- lock taken): gives each a position and its hash, in the order they were claimed, under the append
-- lock. A stream's next version is claimed only after its previous one committed, so versions keep
-- their order in the log.
--
-- Where it looks: seal_state names the transactions that may hold claims no seal has seen (those
-- running at the last seal, this one, those whose claims the last seal left pending, and every id
-- from the snapshot's xmax, the first it did not see completed: a transaction still running at or
-- above it is not listed as running). The snapshot is read before the claims: a claim this seal
-- cannot see is one of its running transactions' or a later one's, which the state it records names.
--
-- seal_pending_passes(n) seals at most n passes of 5,000 (all of them when n is null), so that a
-- sealer facing writers that never stop commits what it sealed as it goes: sealing everything
-- pending, it would seal for as long as they write, in one transaction nobody sees. The pending
-- claims are read and sorted once for all the passes their read finds (a backlog of 100,000 was
-- read again for each of its twenty passes, sealed ones included). A call that stops with claims
-- still pending records their writers among the running, so that the next reads from this
-- snapshot on, not from the last seal that left nothing.
CREATE OR REPLACE FUNCTION seal_pending_passes(max_passes integer) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    snap pg_snapshot;
    head record;
    r record;
    previous bytea;
    next_position bigint;
    recorded timestamptz;
    new_row events;
    batch events[];
    sealed bigint;
    total bigint := 0;
    passes integer := 0;
    stopped boolean := false;
    left_pending bigint[] := '{}';
    last_writer bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema()));
    -- The rows inserted below are this function's, hashed here from their claims: the head trigger
    -- does not hash them again nor compare them with their claims while seal_state names this
    -- transaction as sealing (a writer may not update seal_state; the mark is cleared below, before
    -- the function returns, and rolled back with it if it fails).
    UPDATE seal_state SET sealing_xid = (pg_current_xact_id()::text)::bigint;
    LOOP
        -- Read before each read of the claims: the one before the last read, which found nothing
        -- (or before the read a bound stopped), is recorded.
        snap := pg_current_snapshot();
        batch := '{}';
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO head FROM log_head h;
        recorded := greatest(clock_timestamp(), head.last_recorded_at);
        previous := head.last_hash;
        next_position := head.last_position;
        FOR r IN SELECT * FROM pending_claims() c ORDER BY c.seq LOOP
            IF stopped THEN
                -- Past the bound: only the writers of what stays pending (a writer once for each
                -- run of its claims in claim order; concurrent writers' claims interleave, and the
                -- state's UNION keeps each once).
                IF r.writer_xid IS DISTINCT FROM last_writer THEN
                    left_pending := left_pending || r.writer_xid;
                    last_writer := r.writer_xid;
                END IF;
                CONTINUE;
            END IF;
            next_position := next_position + 1;
            new_row := ROW(next_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload,
                           r.metadata, r.occurred_at, recorded, r.idempotency_key, NULL, NULL, NULL)::events;
            new_row.hash := chain_hash(previous, new_row);
            previous := new_row.hash;
            batch := batch || new_row;
            IF cardinality(batch) = 5000 THEN
                INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload,
                                    metadata, occurred_at, recorded_at, idempotency_key, hash)
                SELECT b.position, b.event_id, b.stream_id, b.stream_version, b.event_type, b.schema_version, b.payload,
                       b.metadata, b.occurred_at, b.recorded_at, b.idempotency_key, b.hash
                FROM unnest(batch) AS b ORDER BY b.position;
                batch := '{}';
                passes := passes + 1;
                stopped := max_passes IS NOT NULL AND passes >= max_passes;
            END IF;
        END LOOP;
        IF cardinality(batch) > 0 THEN
            INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, payload,
                                metadata, occurred_at, recorded_at, idempotency_key, hash)
            SELECT b.position, b.event_id, b.stream_id, b.stream_version, b.event_type, b.schema_version, b.payload,
                   b.metadata, b.occurred_at, b.recorded_at, b.idempotency_key, b.hash
            FROM unnest(batch) AS b ORDER BY b.position;
            passes := passes + 1;
        END IF;
        sealed := next_position - head.last_position;
        EXIT WHEN sealed = 0;
        total := total + sealed;
        PERFORM pg_notify('ledger_events_' || current_schema(), next_position::text);
        EXIT WHEN max_passes IS NOT NULL AND passes >= max_passes;
    END LOOP;
    -- Every claim committed before the snapshot is sealed now or written by a transaction named
    -- here (left pending, running then, or from xmax on).
    UPDATE seal_state SET sealing_xid = NULL, next_xid = (pg_snapshot_xmax(snap)::text)::bigint,
        running = ARRAY(SELECT (x::text)::bigint FROM pg_snapshot_xip(snap) AS x
                        UNION SELECT (pg_current_xact_id_if_assigned()::text)::bigint WHERE pg_current_xact_id_if_assigned() IS NOT NULL
                        UNION SELECT w FROM unnest(left_pending) AS w WHERE w < (pg_snapshot_xmax(snap)::text)::bigint);
    RETURN total;
END
$$;

-- Every event pending, sealed.
CREATE OR REPLACE FUNCTION seal_pending() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    RETURN seal_pending_passes(NULL);
END
$$;
