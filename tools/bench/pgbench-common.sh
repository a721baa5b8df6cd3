# Sourced by the pgbench append benchmarks (tools/bench-sql-append.sh, tools/bench-append-design.sh):
# what they share. `bench_setup NAME` sets seconds, LEDGER_BIN, LEDGER_DATABASE_URL, pgbench, work
# (a directory the caller removes), writer (the writer role's login) and writes the event scripts
# every side uses into $work: raw.sql, append.sql and pending-claim.sql. Errors name NAME.

bench_setup() {
  bench_name=$1
  tools/ensure-deps.sh >&2
  seconds=${LEDGER_BENCH_SECONDS:-10}
  if [ -z "${LEDGER_BIN:-}" ]; then
    swift build -c release --product ledger >&2
    LEDGER_BIN=.build/release/ledger
  fi
  if [ -z "${LEDGER_DATABASE_URL:-}" ]; then LEDGER_DATABASE_URL="$("$LEDGER_BIN" db start)"; fi
  pgbench=$(command -v pgbench || { ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1; } || true)
  [ -n "$pgbench" ] && [ -x "$pgbench" ] || { echo "$bench_name: pgbench not found (it comes with Debian's postgresql package)" >&2; exit 1; }
  work=$(mktemp -d)
  made_message_store=false
  # The writer role's login: LEDGER_WRITER_DATABASE_URL, else the database URL (a URL or a keyword
  # string) with that user.
  if [ -n "${LEDGER_WRITER_DATABASE_URL:-}" ]; then
    writer="$LEDGER_WRITER_DATABASE_URL"
  elif [[ "$LEDGER_DATABASE_URL" == *"://"* ]]; then
    if [[ "$LEDGER_DATABASE_URL" == *"?"* ]]; then writer="$LEDGER_DATABASE_URL&user=ledger_writer"; else writer="$LEDGER_DATABASE_URL?user=ledger_writer"; fi
  else
    writer="$LEDGER_DATABASE_URL user=ledger_writer"
  fi
  # The same event each side: its own stream, an idempotency key, a small payload.
  cat > "$work/raw.sql" <<'SQL'
\set n random(1, 1000000000000000000)
INSERT INTO raw_events (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, recorded_at,
                        idempotency_key, hash)
VALUES (gen_random_uuid(), 'bench-' || :client_id || '-' || :n, 0, 'CoinsSpent', 1,
        jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), '{}', now(), now(),
        'bench:' || :client_id || ':' || :n, sha256(convert_to(:n::text, 'UTF8')));
SQL
  cat > "$work/append.sql" <<'SQL'
\set n random(1, 1000000000000000000)
SELECT count(*) FROM append_events(jsonb_build_array(jsonb_build_object(
    'stream', 'bench-' || :client_id || '-' || :n, 'type', 'CoinsSpent', 'expectedVersion', 'no-stream',
    'idempotencyKey', 'bench:' || :client_id || ':' || :n, 'payload', jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1),
    'occurredAt', now()::text)));
SQL
  # The path a writer that must scale takes (docs/library.md): the claim and the event committed
  # pending (the caller adds what follows the commit).
  cat > "$work/pending-claim.sql" <<'SQL'
\set n random(1, 1000000000000000000)
BEGIN;
INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at)
VALUES (md5('p' || :client_id || '-' || :n)::uuid, 'pending:' || :client_id || ':' || :n, 'pending-' || :client_id || '-' || :n, 0,
        'CoinsSpent', 1, jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), '{}', now());
COMMIT;
SQL
}

# A table of raw_events in `schema` (a ledger schema), which the writer role may insert into.
create_raw_events() {
  psql "$LEDGER_DATABASE_URL" -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE "$1".raw_events (position bigserial, event_id uuid, stream_id text, stream_version bigint, event_type text,
    schema_version integer, payload jsonb, metadata jsonb, occurred_at timestamptz, recorded_at timestamptz,
    idempotency_key text, hash bytea);
GRANT INSERT ON "$1".raw_events TO ledger_writer;
GRANT USAGE ON SEQUENCE "$1".raw_events_position_seq TO ledger_writer;
SQL
}

# Message DB, from the checkout in MESSAGE_DB, as its own install script lays it out (schema, table,
# type, functions, indexes), with its role, and $work/message-db.sql: written to by the database's
# own user, each client into streams of its own category (Message DB locks a category per write).
install_message_db() {
  local db="$MESSAGE_DB/database"
  [ -f "$db/functions/write-message.sql" ] || { echo "$bench_name: MESSAGE_DB=$MESSAGE_DB is not a Message DB checkout (no database/functions/write-message.sql)" >&2; exit 1; }
  if [ "$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM pg_namespace WHERE nspname = 'message_store'")" != 0 ]; then
    echo "$bench_name: schema message_store exists already; drop it or use another database" >&2; exit 1
  fi
  made_message_store=true
  for f in roles/message-store.sql schema/message-store.sql extensions/pgcrypto.sql tables/messages.sql types/message.sql \
      functions/message-store-version.sql functions/hash-64.sql functions/acquire-lock.sql functions/category.sql \
      functions/is-category.sql functions/id.sql functions/cardinal-id.sql functions/stream-version.sql \
      functions/write-message.sql indexes/messages-id.sql indexes/messages-stream.sql indexes/messages-category.sql; do
    PGOPTIONS='-c client_min_messages=warning' psql "$LEDGER_DATABASE_URL" -q -v ON_ERROR_STOP=1 -f "$db/$f" >&2
  done
  cat > "$work/message-db.sql" <<'SQL'
\set n random(1, 1000000000000000000)
SELECT message_store.write_message(gen_random_uuid()::varchar, 'bench' || :client_id || '-' || :n, 'CoinsSpent',
    jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), '{}'::jsonb, -1);
SQL
}

# Drops what install_message_db made (for the caller's exit trap).
drop_message_store() {
  if [ "${made_message_store:-false}" = true ]; then
    psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS message_store CASCADE" >/dev/null 2>&1 || true
  fi
}

ratio() { echo "$(( $1 * 100 / ($2 > 0 ? $2 : 1) )) %"; }
