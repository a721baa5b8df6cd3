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
-- function: chain_hash.sql (its current text, from Sources/LedgerLog/Functions)

-- Runs once per INSERT or COPY into events, after the rows are in (and after the foreign keys
-- have checked them), with the new rows as a transition table.
-- function: advance_head.sql (its current text, from Sources/LedgerLog/Functions)

REVOKE ALL ON FUNCTION advance_head() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION chain_field(bytea), chain_field(text), chain_microseconds(timestamptz), chain_hash(bytea, events)
    TO ledger_projector, ledger_reader, ledger_auditor, ledger_writer;

CREATE TRIGGER events_advance_head AFTER INSERT ON events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION advance_head();
