-- Runs once per INSERT or COPY into events, after the rows are in (and after the foreign keys
-- have checked them), with the new rows as a transition table: every row follows the head, chains
-- onto it, carries the server clock, comes after its stream's previous version and is the event
-- its claim holds; then the head moves.
-- SECURITY DEFINER: the writer role may not update the head itself.
CREATE OR REPLACE FUNCTION advance_head() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    head log_head%ROWTYPE;
    first_position bigint;
    top bigint;
    n bigint;
    last_row record;
    broken bigint;
    sealed_here boolean;
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
    -- Rows the seal (seal_pending_passes, run as the owner) wrote from their claims, which it hashed
    -- itself: seal_state names this transaction while it inserts them, and nothing else can.
    SELECT s.sealing_xid = (pg_current_xact_id()::text)::bigint INTO sealed_here FROM seal_state s;
    -- Each new row must chain onto the one before it (the head for the first): a row inserted by
    -- hand with any other hash is refused. One set-based pass: each row against its predecessor.
    -- (lag() over one sort: a join of the transition table with itself has no index to use.) Each
    -- field is turned into its chain text once, in a subquery the planner keeps apart (OFFSET 0),
    -- and hashed by chain_hash_texts: chain_hash(previous, row) would turn each twice.
    IF sealed_here IS NOT TRUE THEN
        SELECT c.position INTO broken
        FROM (SELECT r.position, r.hash,
                     chain_hash_texts(coalesce(lag(r.hash) OVER w, head.last_hash), t.position, t.event_id, r.stream_id,
                                      t.stream_version, r.event_type, t.schema_version, t.occurred_at, t.recorded_at,
                                      r.idempotency_key, t.payload, t.metadata) AS expected
              FROM new_rows r,
                   LATERAL (SELECT r.position::text AS position, r.event_id::text AS event_id,
                                   r.stream_version::text AS stream_version, r.schema_version::text AS schema_version,
                                   chain_microseconds(r.occurred_at) AS occurred_at,
                                   chain_microseconds(r.recorded_at) AS recorded_at, r.payload::text AS payload,
                                   r.metadata::text AS metadata
                            OFFSET 0) t
              WINDOW w AS (ORDER BY r.position)) c
        WHERE c.hash IS DISTINCT FROM c.expected
        ORDER BY c.position LIMIT 1;
    END IF;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'the event at position % does not chain onto the log (its hash is not SHA-256 of the previous hash and its content)', broken
            USING ERRCODE = 'check_violation';
    END IF;
    -- A stream's versions follow the log's order: the foreign key on the previous version is
    -- checked once the statement's rows are all in, so within one statement only this tells that
    -- version 1 came before version 0 (a row's previous version from an earlier statement is
    -- below the head). Each row against the version before it in the statement (one sort; a join
    -- of the transition table with itself, which has no index, was a nested loop: a batch of 1,000
    -- took 0.1 s longer).
    SELECT t.position INTO broken
    FROM (SELECT r.position, lag(r.position) OVER (PARTITION BY r.stream_id ORDER BY r.stream_version) AS before
          FROM new_rows r) t
    WHERE t.before > t.position
    ORDER BY t.position LIMIT 1;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'the event at position % comes before the previous version of its stream', broken
            USING ERRCODE = 'check_violation';
    END IF;
    -- Each row is the event its claim holds (the foreign key says only that the claim exists): the
    -- same stream, version and idempotency key, and for a claim committed pending, which carries
    -- its event's content, the same content. Without this, a writer that wrote `events` itself
    -- under another writer's pending id sealed that event with content of its own. (The pending
    -- path, seal_pending, copies the claim's content, so it always passes, and is not compared.)
    -- Each row's claim is one probe of the claims' primary key (a scalar subquery): as a join, a
    -- young log's claims table was read whole and hashed for every statement of a batch, about a
    -- fifth of its insert's time. (A row without a claim gives null here, and is refused by the
    -- foreign key events_claimed, checked before this trigger runs.)
    IF sealed_here IS NOT TRUE THEN
        SELECT r.position INTO broken
        FROM new_rows r
        WHERE (SELECT c.stream_id <> r.stream_id OR c.stream_version <> r.stream_version
                      OR c.idempotency_key IS DISTINCT FROM r.idempotency_key
                      OR (c.payload IS NOT NULL
                          AND (c.event_type <> r.event_type OR c.schema_version <> r.schema_version
                               OR c.payload <> r.payload OR c.metadata <> r.metadata OR c.occurred_at <> r.occurred_at))
               FROM event_claims c WHERE c.event_id = r.event_id)
        ORDER BY r.position LIMIT 1;
    END IF;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'the event at position % is not the event its claim holds (stream, version, idempotency key, or the content it was committed pending with)', broken
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT r.hash, r.recorded_at INTO last_row FROM new_rows r WHERE r.position = top;
    UPDATE log_head SET last_position = top, last_hash = last_row.hash,
                        last_recorded_at = last_row.recorded_at;
    RETURN NULL;
END
$$;
