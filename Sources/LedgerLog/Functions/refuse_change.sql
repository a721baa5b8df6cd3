-- Refuses UPDATE, DELETE and TRUNCATE on the log's tables: facts are corrected by appending
-- new facts, never by changing stored ones.
CREATE OR REPLACE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'the event log is append-only: % on %.% is refused', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'facts are corrected by appending new facts, never by changing stored ones';
END
$$;
