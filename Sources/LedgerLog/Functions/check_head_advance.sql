-- The head moves forward only, and must name the event that is really last.
-- SET search_path FROM CURRENT: the function finds this schema's tables whatever the caller's path.
CREATE OR REPLACE FUNCTION check_head_advance() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    stored bytea;
BEGIN
    IF NEW.last_position < OLD.last_position THEN
        RAISE EXCEPTION 'log head may not move back from % to %', OLD.last_position, NEW.last_position
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.last_position > 0 THEN
        SELECT e.hash INTO stored FROM events e WHERE e.position = NEW.last_position;
        IF stored IS DISTINCT FROM NEW.last_hash
           OR EXISTS (SELECT 1 FROM events e WHERE e.position = NEW.last_position + 1) THEN
            RAISE EXCEPTION 'log head % does not name the last stored event', NEW.last_position
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    RETURN NEW;
END
$$;
