-- The pending events: claims with content that `events` does not hold yet, among the claims of the
-- transactions seal_state names (running at the last seal, or with an id from that seal's snapshot's
-- xmax, the first it did not see completed, on). Each part is an index scan of the content claims by
-- writer_xid, whatever the statistics of a young table would make the planner choose (sequential
-- scans are off in here, and so is JIT compilation, which the cost of a disabled scan would
-- otherwise set off; its plans are made once a session, not for each call).
-- Whether `events` holds a claim is one probe of its index per claim (a scalar subquery, which the
-- planner cannot turn into a join that reads the whole log).
CREATE OR REPLACE FUNCTION pending_claims() RETURNS SETOF event_claims
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off SET jit = off
    SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    from_xid bigint;
    running bigint[];
BEGIN
    SELECT s.next_xid, s.running INTO from_xid, running FROM seal_state s;
    -- Ids above every id this cluster has completed: the state was recorded by another cluster
    -- (a restore, a logical copy), whose ids this one does not continue. Every claim, once.
    IF from_xid > (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint THEN
        from_xid := 0;
    END IF;
    RETURN QUERY
        SELECT c.* FROM event_claims c
        WHERE c.payload IS NOT NULL AND c.writer_xid >= from_xid
          AND (SELECT 1 FROM events e WHERE e.event_id = c.event_id LIMIT 1) IS NULL
        UNION ALL
        SELECT c.* FROM event_claims c
        WHERE c.payload IS NOT NULL AND c.writer_xid = ANY (running) AND c.writer_xid < from_xid
          AND (SELECT 1 FROM events e WHERE e.event_id = c.event_id LIMIT 1) IS NULL;
END
$$;
