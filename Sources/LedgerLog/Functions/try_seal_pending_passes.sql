-- try_seal_pending() with at most max_passes passes of 5,000 (seal_pending_passes): a candidate
-- standing in for an elected sealer that seals nothing, beside writers that never take the lock,
-- would otherwise seal for as long as they write, in one transaction nobody sees. Says whether the
-- append lock was free.
CREATE OR REPLACE FUNCTION try_seal_pending_passes(max_passes integer) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM pending_events) THEN
        PERFORM seal_pending_passes(max_passes);
    END IF;
    RETURN true;
END
$$;
