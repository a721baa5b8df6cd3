-- The transaction id of the newest claim with content (a pending event, sealed since or not), or
-- null when there is none: one descent, backward, of the pending claims' index
-- (event_claims_pending), whatever the statistics of a young table would make the planner choose.
-- Sequential scans are off in here (a plan made while the table was one page, kept for the session,
-- read the whole table at every call once it had grown), and so is JIT compilation, which the cost
-- of a disabled scan would otherwise set off; try_seal_pending asks it before pending_claims().
CREATE OR REPLACE FUNCTION newest_claim_writer() RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off SET jit = off AS $$
BEGIN
    RETURN (SELECT c.writer_xid FROM event_claims c WHERE c.payload IS NOT NULL ORDER BY c.writer_xid DESC LIMIT 1);
END
$$;
