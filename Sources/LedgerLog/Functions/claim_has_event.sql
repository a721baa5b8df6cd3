-- A claim without its event is refused at commit (a deferred constraint trigger): a writer cannot
-- jam event_claims with claims of events it never stored.
CREATE OR REPLACE FUNCTION claim_has_event() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pending_events p WHERE p.event_id = NEW.event_id)
       AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = NEW.event_id) THEN
        RAISE EXCEPTION 'event % is claimed without an event: a claim is written only with its event', NEW.event_id
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_have_events';
    END IF;
    RETURN NULL;
END $$;
