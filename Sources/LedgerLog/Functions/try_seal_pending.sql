-- Seals pending events if the append lock is free now; says whether it could.
CREATE OR REPLACE FUNCTION try_seal_pending() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(4243, hashtext('ledger-append:' || current_schema())) THEN
        RETURN false;
    END IF;
    -- With the lock: what is pending now is sealed (rows committed after this look wait for the
    -- next writer to take the lock, as they would after the seal).
    IF EXISTS (SELECT 1 FROM pending_events) THEN
        PERFORM seal_pending();
    END IF;
    RETURN true;
END
$$;
