-- Candidate "split": the log is `facts` as writers wrote them plus `seals`, one narrow row per
-- position (the fact it gives the position to, the server clock, the chain's hash). A reader reads
-- seals in position order joined with facts. Nothing is written twice.
CREATE TABLE seals (
    position    bigint      PRIMARY KEY CHECK (position > 0),
    seq         bigint      NOT NULL UNIQUE,     -- a fact is sealed once
    recorded_at timestamptz NOT NULL,
    hash        bytea       NOT NULL CHECK (length(hash) = 32)
);
ALTER TABLE facts_seal_state ADD COLUMN last_position bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_hash bytea NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    ADD COLUMN last_recorded_at timestamptz NOT NULL DEFAULT '2000-01-01T00:00:00Z';

-- One round (sealers take turns on facts_seal_state's row): every fact of the writers finished since the
-- last round, in (writer_xid, seq) order, positioned after the last and chained onto it.
CREATE FUNCTION seal_round() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    st facts_seal_state%ROWTYPE;
    v_horizon bigint;
    r record;
    previous bytea;
    next_position bigint;
    recorded timestamptz;
    e events;
    positions bigint[] := '{}';
    seqs bigint[] := '{}';
    hashes bytea[] := '{}';
BEGIN
    SELECT * INTO st FROM facts_seal_state FOR UPDATE;
    v_horizon := (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint;
    IF v_horizon <= st.horizon THEN
        RETURN 0;
    END IF;
    previous := st.last_hash;
    next_position := st.last_position;
    recorded := greatest(clock_timestamp(), st.last_recorded_at);
    FOR r IN SELECT * FROM facts f WHERE f.writer_xid >= st.horizon AND f.writer_xid < v_horizon
             ORDER BY f.writer_xid, f.seq LOOP
        next_position := next_position + 1;
        e := ROW(next_position, r.event_id, r.stream_id, r.stream_version, r.event_type, r.schema_version, r.payload,
                 r.metadata, r.occurred_at, recorded, r.idempotency_key, NULL, NULL, NULL)::events;
        previous := chain_hash(previous, e);
        positions := positions || next_position;
        seqs := seqs || r.seq;
        hashes := hashes || previous;
    END LOOP;
    INSERT INTO seals (position, seq, recorded_at, hash)
    SELECT p, s, recorded, h FROM unnest(positions, seqs, hashes) AS u(p, s, h);
    UPDATE facts_seal_state SET horizon = v_horizon, last_position = next_position, last_hash = previous,
                          last_recorded_at = recorded;
    RETURN next_position - st.last_position;
END $$;
GRANT EXECUTE ON FUNCTION seal_round() TO ledger_writer;

-- The log as a reader sees it.
CREATE VIEW sealed_log AS
SELECT s.position, f.event_id, f.stream_id, f.stream_version, f.event_type, f.schema_version, f.payload, f.metadata,
       f.occurred_at, s.recorded_at, f.idempotency_key, s.hash
FROM seals s JOIN facts f ON f.seq = s.seq;
