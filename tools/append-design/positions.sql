-- Applied after split.sql or inbox.sql (it reads their sealed_log). An append that answers
-- positions: after its commit, a writer asks for its facts' positions, waiting (polling each
-- millisecond, at most 10 s) for the sealer's round that gives them.
CREATE FUNCTION sealed_positions(ids uuid[]) RETURNS TABLE (event_id uuid, "position" bigint)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
    FOR i IN 1..10000 LOOP
        IF (SELECT count(*) FROM sealed_log s WHERE s.event_id = ANY (ids)) = cardinality(ids) THEN
            RETURN QUERY SELECT s.event_id, s.position FROM sealed_log s WHERE s.event_id = ANY (ids);
            RETURN;
        END IF;
        PERFORM pg_sleep(0.001);
    END LOOP;
    RAISE EXCEPTION 'facts % not sealed within 10 s: is a sealer running?', ids USING ERRCODE = 'lock_not_available';
END $$;
GRANT EXECUTE ON FUNCTION sealed_positions(uuid[]) TO ledger_writer;
GRANT SELECT ON sealed_log TO ledger_writer;
