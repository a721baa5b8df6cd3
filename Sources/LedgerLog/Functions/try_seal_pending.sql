-- Seals pending events if the append lock is free now; says whether it could.
CREATE OR REPLACE FUNCTION try_seal_pending() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN false;
    END IF;
    PERFORM seal_pending();
    RETURN true;
END
$$;
