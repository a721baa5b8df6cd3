-- The trigger fires only where this function can refuse something (its WHEN, migration 0024: a
-- claim without content, a pending version above 0, or another transaction's id): a check added
-- here for a pending version 0 of its own transaction needs that condition widened too.
--
-- A claim without its event is refused at commit (a deferred constraint trigger): a writer cannot
-- jam event_claims with claims of events it never stored. A pending claim carries its event's
-- content, and its own writer's transaction id, which the sealer finds it by.
--
-- A stream's versions follow claim order: the sealer gives positions in claim order (seq), so a
-- pending claim whose stream's previous version was claimed pending too (sealed since or not) must
-- have been claimed after it. The library and the SQL functions claim a version only once the one
-- before it is committed (or earlier in the same statement), so they always do; a writer that
-- claims versions 1 and 0 of a new stream in one statement in that order, or version n+1 before
-- another writer's pending version n commits, is refused here, at its commit, before any seal could
-- put version 1 before version 0. (A previous version written with its event under the lock
-- already has its position.)
CREATE OR REPLACE FUNCTION claim_has_event() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    previous_seq bigint;
    previous_pending boolean;
BEGIN
    IF NEW.payload IS NOT NULL THEN
        IF NEW.writer_xid IS DISTINCT FROM (pg_current_xact_id()::text)::bigint THEN
            RAISE EXCEPTION 'event % is claimed pending with writer_xid %, not its own transaction''s id', NEW.event_id,
                coalesce(NEW.writer_xid::text, 'null')
                USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_have_events';
        END IF;
        -- One probe of the unique index (an EXISTS of the same took three times as long a claim).
        IF NEW.stream_version > 0 THEN
            SELECT p.seq, p.payload IS NOT NULL INTO previous_seq, previous_pending FROM event_claims p
            WHERE p.stream_id = NEW.stream_id AND p.stream_version = NEW.stream_version - 1;
            IF previous_pending AND previous_seq > NEW.seq THEN
                RAISE EXCEPTION 'version % of stream % is claimed pending before its version %', NEW.stream_version,
                    NEW.stream_id, NEW.stream_version - 1
                    USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_version_order';
            END IF;
        END IF;
    ELSIF NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = NEW.event_id) THEN
        RAISE EXCEPTION 'event % is claimed without an event: a claim is written only with its event', NEW.event_id
            USING ERRCODE = 'integrity_constraint_violation', CONSTRAINT = 'event_claims_have_events';
    END IF;
    RETURN NULL;
END $$;
