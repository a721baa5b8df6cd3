-- Least privilege. Applied by the owner of the schema (`ledger migrate`); the application never
-- connects as the owner again.
--
--   * Login roles for the application, cluster-wide and created once (idempotent, serialized):
--       ledger_writer     appends: SELECT, INSERT on events; SELECT on log_head
--       ledger_projector  reads the log, writes the read models (granted by 0005)
--       ledger_reader     reads the log and the read models
--       ledger_auditor    reads the log and the read models (audit, verify-chain, anchor)
--     None owns anything, so none can ALTER, DISABLE TRIGGER, DROP or TRUNCATE.
--   * The head is moved by the database, not by the writer: an AFTER INSERT trigger running as the
--     owner (SECURITY DEFINER) checks that the new rows sit right after the head, that each one's
--     hash chains onto the one before (SHA-256, as the writer computed it), and that their
--     recordedAt is the server's clock (not before the head's, not after now), then moves the head
--     to the last new row. The writer no longer has UPDATE on log_head: it cannot forge the time,
--     and a row inserted at head+1 by hand moves the head with it instead of jamming the log.

SELECT pg_advisory_xact_lock(4242, hashtext('ledger-roles'));

DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['ledger_writer', 'ledger_projector', 'ledger_reader', 'ledger_auditor'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
        ELSIF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('ALTER ROLE %I LOGIN', r);
        END IF;
    END LOOP;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ledger_writer, ledger_projector, ledger_reader, ledger_auditor', current_schema());
END
$$;

REVOKE ALL ON events, log_head, schema_migrations FROM PUBLIC;
REVOKE UPDATE ON log_head FROM ledger_writer;
GRANT SELECT, INSERT ON events TO ledger_writer;
GRANT SELECT ON log_head TO ledger_writer;
GRANT SELECT ON events, log_head TO ledger_projector, ledger_reader, ledger_auditor;
GRANT SELECT ON schema_migrations TO ledger_writer, ledger_projector, ledger_reader, ledger_auditor;

-- The canonical bytes of an event, exactly as LedgerCore's EventChain builds them: length-prefixed
-- fields (4-byte big-endian length, then UTF-8). The stored payload and metadata print as the
-- canonical text the writer hashed (jsonb's own text form).
CREATE FUNCTION chain_field(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT int4send(length(b)) || b
$$;

CREATE FUNCTION chain_field(t text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT chain_field(convert_to(t, 'UTF8'))
$$;

CREATE FUNCTION chain_microseconds(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT ((extract(epoch FROM t) * 1000000)::numeric(30, 0))::text
$$;

CREATE FUNCTION chain_hash(previous bytea, e events) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(previous
        || chain_field('ledger-event-v1'::text)
        || chain_field(e.position::text)
        || chain_field(e.event_id::text)
        || chain_field(e.stream_id)
        || chain_field(e.stream_version::text)
        || chain_field(e.event_type)
        || chain_field(e.schema_version::text)
        || chain_field(chain_microseconds(e.occurred_at))
        || chain_field(chain_microseconds(e.recorded_at))
        || CASE WHEN e.idempotency_key IS NULL THEN '\x00'::bytea ELSE '\x01'::bytea || chain_field(e.idempotency_key) END
        || chain_field(e.payload::text)
        || chain_field(e.metadata::text))
$$;

-- Runs once per INSERT or COPY into events, after the rows are in (and after the foreign keys
-- have checked them), with the new rows as a transition table.
CREATE FUNCTION advance_head() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    head log_head%ROWTYPE;
    first_position bigint;
    top bigint;
    n bigint;
    last_row record;
    broken bigint;
BEGIN
    SELECT min(position), max(position), count(*) INTO first_position, top, n FROM new_rows;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    SELECT * INTO head FROM log_head FOR UPDATE;
    IF first_position <> head.last_position + 1 OR top - first_position + 1 <> n THEN
        RAISE EXCEPTION 'events must be appended right after the head (position %): got positions % to %',
            head.last_position, first_position, top
            USING ERRCODE = 'check_violation';
    END IF;
    -- recordedAt is the server clock: not before the head's time, not after now, not before this
    -- transaction began (unless it equals the head's time, when the clock stepped back).
    IF EXISTS (SELECT 1 FROM new_rows r
               WHERE r.recorded_at <> head.last_recorded_at
                 AND (r.recorded_at < head.last_recorded_at OR r.recorded_at < transaction_timestamp()
                      OR r.recorded_at > clock_timestamp())) THEN
        RAISE EXCEPTION 'recorded_at must be the database clock, at or after the head''s % and not in the future',
            head.last_recorded_at
            USING ERRCODE = 'check_violation';
    END IF;
    IF EXISTS (SELECT 1 FROM (SELECT r.recorded_at, lag(r.recorded_at) OVER (ORDER BY r.position) AS before FROM new_rows r) t
               WHERE t.recorded_at < t.before) THEN
        RAISE EXCEPTION 'recorded_at goes back inside one append' USING ERRCODE = 'check_violation';
    END IF;
    -- Each new row must chain onto the one before it (the head for the first): a row inserted by
    -- hand with any other hash is refused. One set-based pass: each row against its predecessor.
    -- (lag() over one sort: a join of the transition table with itself has no index to use.)
    SELECT c.position INTO broken
    FROM (SELECT r.position, r.hash, chain_hash(coalesce(lag(r.hash) OVER w, head.last_hash), r::events) AS expected
          FROM new_rows r WINDOW w AS (ORDER BY r.position)) c
    WHERE c.hash IS DISTINCT FROM c.expected
    ORDER BY c.position LIMIT 1;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'the event at position % does not chain onto the log (its hash is not SHA-256 of the previous hash and its content)', broken
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT r.hash, r.recorded_at INTO last_row FROM new_rows r WHERE r.position = top;
    UPDATE log_head SET last_position = top, last_hash = last_row.hash,
                        last_recorded_at = last_row.recorded_at;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION advance_head() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION chain_field(bytea), chain_field(text), chain_microseconds(timestamptz), chain_hash(bytea, events)
    TO ledger_projector, ledger_reader, ledger_auditor, ledger_writer;

CREATE TRIGGER events_advance_head AFTER INSERT ON events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION advance_head();
