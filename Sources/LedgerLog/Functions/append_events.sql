-- Appends a batch of facts in one call, with every guarantee of the library: idempotency by event
-- id and business key (a retry returns the original positions), expected versions, gap-free
-- positions and the hash chain. What a writer in another language calls as ledger_writer. It waits
-- for the append lock; its body is append_batch's (PL/pgSQL, so that the migrations that create it
-- before append_batch exists need not find it).
CREATE OR REPLACE FUNCTION append_events(batch jsonb)
RETURNS TABLE (event_id uuid, stream_id text, stream_version bigint, "position" bigint, already_stored boolean)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RETURN QUERY SELECT * FROM append_batch(batch, false);
END
$$;
