-- Seals pending events if the append lock is free now; says whether it could.
--
-- Whether anything is pending is first asked of the newest claim with content
-- (newest_claim_writer: one descent of the pending claims' index): when its writer is no
-- transaction the seal state names (below next_xid, below every id of running),
-- pending_claims() would find nothing, and is not called. A writer that holds the lock asks this
-- at every append, and pending_claims() returns a set of rows from a function with planner
-- settings of its own, a tenth of a lone writer's append. When the newest claim may be one the
-- state names, or the state was recorded by another cluster (as pending_claims() also tells), the
-- pending events are looked for as before: after a seal that recorded a transaction running below
-- the newest claim (one left open elsewhere in the cluster), every look is the full one until a
-- later seal records a newer state.
CREATE OR REPLACE FUNCTION try_seal_pending() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    newest bigint;
    from_xid bigint;
    running bigint[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN false;
    END IF;
    newest := newest_claim_writer();
    IF newest IS NULL THEN
        RETURN true;
    END IF;
    SELECT s.next_xid, s.running INTO from_xid, running FROM seal_state s;
    IF newest < from_xid AND from_xid <= (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
       AND NOT newest >= ANY (running) THEN
        RETURN true;
    END IF;
    -- With the lock: what is pending now is sealed (rows committed after this look wait for the
    -- next writer to take the lock, as they would after the seal).
    IF EXISTS (SELECT 1 FROM pending_events) THEN
        PERFORM seal_pending();
    END IF;
    RETURN true;
END
$$;
