-- Checks the log ran twice on the same rows, run once; nothing a writer can do is checked less.
--
-- 1. The deferred check of each claim (claim_has_event) fires only for a claim it could refuse: one
--    without content (its event must be in the log at commit), a pending claim of a version above
--    0 (its previous version's order), or a pending claim whose writer's transaction id is not
--    this transaction's. A pending version 0 claimed by its own transaction, which is every pending
--    append of a new stream, passes the check by construction, and calling it cost about a fifth
--    of such a claim's insert. A constraint trigger's condition is evaluated at the insert, in the
--    transaction whose commit would run the check.
DROP TRIGGER event_claims_have_events ON event_claims;
CREATE CONSTRAINT TRIGGER event_claims_have_events AFTER INSERT ON event_claims
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.payload IS NULL OR NEW.stream_version > 0
          OR NEW.writer_xid IS DISTINCT FROM (pg_current_xact_id()::text)::bigint)
    EXECUTE FUNCTION claim_has_event();

-- 2. The rows a seal writes into events were hashed by the seal itself and copied from their claims:
--    while seal_pending_passes (SECURITY DEFINER) inserts them, seal_state names its transaction,
--    and the head trigger (advance_head) does not hash them again nor compare them with their claims.
--    A writer may not update seal_state, and the seal clears the mark before it returns, so a row a
--    writer inserts itself, even in the transaction of a seal, is checked as before. Both functions'
--    current texts are applied after the migrations.
ALTER TABLE seal_state ADD COLUMN sealing_xid bigint;
COMMENT ON COLUMN seal_state.sealing_xid IS 'The transaction a seal is writing rows in, while it writes them; null otherwise.';
