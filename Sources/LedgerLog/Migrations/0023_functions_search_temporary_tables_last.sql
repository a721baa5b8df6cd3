-- The log's functions search the session's temporary tables last. Each function that sets its
-- search_path took it FROM CURRENT when it was created, and `ledger migrate` set the path to the
-- ledger's schema alone: a path that does not name pg_temp searches it first for a table named
-- without its schema. A writer, which may create temporary tables, could then make its own
-- `event_claims`, `events` or `log_head` stand in for the log's inside those functions (the
-- SECURITY DEFINER ones included) and pass their checks: a claim without its event, or versions
-- out of order that would stop every seal after them. Each such function now names pg_temp last,
-- as `ledger migrate` now creates functions under `schema, pg_temp`.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())
          AND EXISTS (SELECT 1 FROM unnest(p.proconfig) AS c WHERE c LIKE 'search_path=%')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;
