-- A claim without its event is refused at commit (a deferred constraint trigger): a writer cannot
-- jam event_claims with claims of events it never stored. A pending claim carries its event's
-- content, and its own writer's transaction id, which the sealer finds it by.
CREATE OR REPLACE FUNCTION claim_has_event() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.payload IS NOT NULL THEN
        IF NEW.writer_xid IS DISTINCT FROM (pg_current_xact_id()::text)::bigint THEN
            RAISE EXCEPTION 'event % is claimed pending with writer_xid %, not its own transaction''s id', NEW.event_id,
                coalesce(NEW.writer_xid::text, 'null')
                USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_have_events';
        END IF;
    ELSIF NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = NEW.event_id) THEN
        RAISE EXCEPTION 'event % is claimed without an event: a claim is written only with its event', NEW.event_id
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_have_events';
    END IF;
    RETURN NULL;
END $$;
