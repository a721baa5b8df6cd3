#!/usr/bin/env bash
# Appends through the SQL function append_events (one round trip, every guarantee: idempotency,
# expected version, gap-free positions, the hash chain), driven by pgbench as independent writers
# would drive it (each connection a session of its own, as separate services in any language),
# beside a raw INSERT of the same row shape into a table with no constraint, in the same run, at 1
# and 16 connections; and by the path a writer that must scale takes: the claim and the event
# committed pending, then seal_events for its position. Prints a markdown table.
# With MESSAGE_DB set to a checkout of Message DB (github.com/message-db/message-db), its
# write_message runs in the same run, on the same cluster and the same baseline, installed in its
# own schema `message_store` (removed afterwards when this script made it): the peer's ratio beside
# the ledger's.
# Options (environment): LEDGER_BENCH_SECONDS (default 10) per measurement; LEDGER_BIN (default:
# builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the private cluster under
# .ledger/); MESSAGE_DB.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh >&2
seconds=${LEDGER_BENCH_SECONDS:-10}
if [ -z "${LEDGER_BIN:-}" ]; then
  swift build -c release --product ledger >&2
  LEDGER_BIN=.build/release/ledger
fi
if [ -z "${LEDGER_DATABASE_URL:-}" ]; then LEDGER_DATABASE_URL="$("$LEDGER_BIN" db start)"; fi
pgbench=$(command -v pgbench || { ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1; } || true)
[ -n "$pgbench" ] && [ -x "$pgbench" ] || { echo "bench-sql-append: pgbench not found (it comes with Debian's postgresql package)" >&2; exit 1; }
schema="bench_sql_$(date +%s)"
work=$(mktemp -d)
made_message_store=false
cleanup() {
  psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
  if [ "$made_message_store" = true ]; then
    psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS message_store CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
"$LEDGER_BIN" migrate --database-url "$LEDGER_DATABASE_URL" --schema "$schema" >&2
psql "$LEDGER_DATABASE_URL" -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE "$schema".raw_events (position bigserial, event_id uuid, stream_id text, stream_version bigint, event_type text,
    schema_version integer, payload jsonb, metadata jsonb, occurred_at timestamptz, recorded_at timestamptz,
    idempotency_key text, hash bytea);
GRANT INSERT ON "$schema".raw_events TO ledger_writer;
GRANT USAGE ON SEQUENCE "$schema".raw_events_position_seq TO ledger_writer;
SQL
# The same event each side: its own stream, an idempotency key, a small payload.
cat > "$work/append.sql" <<'SQL'
\set n random(1, 1000000000000000000)
SELECT count(*) FROM append_events(jsonb_build_array(jsonb_build_object(
    'stream', 'bench-' || :client_id || '-' || :n, 'type', 'CoinsSpent', 'expectedVersion', 'no-stream',
    'idempotencyKey', 'bench:' || :client_id || ':' || :n, 'payload', jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1),
    'occurredAt', now()::text)));
SQL
# The same event by the path a writer that must scale takes (docs/library.md): claim it and commit
# it pending, then seal_events for its position (whoever seals next seals every pending event).
cat > "$work/pending.sql" <<'SQL'
\set n random(1, 1000000000000000000)
BEGIN;
INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
VALUES (md5('p' || :client_id || '-' || :n)::uuid, 'pending:' || :client_id || ':' || :n, 'pending-' || :client_id || '-' || :n, 0);
INSERT INTO pending_events (event_id, stream_id, stream_version, event_type, schema_version, payload, occurred_at, idempotency_key)
VALUES (md5('p' || :client_id || '-' || :n)::uuid, 'pending-' || :client_id || '-' || :n, 0, 'CoinsSpent', 1,
        jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), now(), 'pending:' || :client_id || ':' || :n);
COMMIT;
SELECT count(*) FROM seal_events(ARRAY[md5('p' || :client_id || '-' || :n)::uuid]);
SQL
cat > "$work/raw.sql" <<'SQL'
\set n random(1, 1000000000000000000)
INSERT INTO raw_events (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, recorded_at,
                        idempotency_key, hash)
VALUES (gen_random_uuid(), 'bench-' || :client_id || '-' || :n, 0, 'CoinsSpent', 1,
        jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), '{}', now(), now(),
        'bench:' || :client_id || ':' || :n, sha256(convert_to(:n::text, 'UTF8')));
SQL
# Message DB, as its own install script lays it out (schema, table, type, functions, indexes), with
# its role; written to by the database's own user, each client into streams of its own category
# (Message DB locks a category per write).
if [ -n "${MESSAGE_DB:-}" ]; then
  db="$MESSAGE_DB/database"
  [ -f "$db/functions/write-message.sql" ] || { echo "bench-sql-append: MESSAGE_DB=$MESSAGE_DB is not a Message DB checkout (no database/functions/write-message.sql)" >&2; exit 1; }
  if [ "$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM pg_namespace WHERE nspname = 'message_store'")" != 0 ]; then
    echo "bench-sql-append: schema message_store exists already; drop it or use another database" >&2; exit 1
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
fi
export PGOPTIONS="-c search_path=$schema"
# The writer role's login: LEDGER_WRITER_DATABASE_URL, else the database URL (a URL or a keyword
# string) with that user.
if [ -n "${LEDGER_WRITER_DATABASE_URL:-}" ]; then
  writer="$LEDGER_WRITER_DATABASE_URL"
elif [[ "$LEDGER_DATABASE_URL" == *"://"* ]]; then
  if [[ "$LEDGER_DATABASE_URL" == *"?"* ]]; then writer="$LEDGER_DATABASE_URL&user=ledger_writer"; else writer="$LEDGER_DATABASE_URL?user=ledger_writer"; fi
else
  writer="$LEDGER_DATABASE_URL user=ledger_writer"
fi
measure() { # script clients [url]: sets tps and latency, or stops the script with pgbench's own message
  if ! "$pgbench" -n -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$seconds" -f "$work/$1.sql" "${3:-$writer}" >"$work/out" 2>"$work/err"; then
    echo "bench-sql-append: pgbench failed on $1 with $2 connection(s):" >&2; cat "$work/err" >&2; exit 1
  fi
  tps=$(awk '/^tps/ {printf "%.0f", $3}' "$work/out"); latency=$(awk '/^latency average/ {print $4}' "$work/out")
  failed=$(awk '/^number of failed transactions/ {print $5}' "$work/out")
  if [ -z "$tps" ] || [ "${failed:-0}" != 0 ]; then
    echo "bench-sql-append: pgbench on $1 with $2 connection(s) reported ${failed:-no} failed transactions:" >&2; cat "$work/out" "$work/err" >&2; exit 1
  fi
}
ratio() { echo "$(( $1 * 100 / ($2 > 0 ? $2 : 1) )) %"; }
if [ -n "${MESSAGE_DB:-}" ]; then
  echo "| writers (connections) | append_events/s | avg latency ms | raw INSERT/s | avg latency ms | ratio | pending + seal_events/s | avg latency ms | ratio | Message DB write_message/s | avg latency ms | its ratio |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
  echo "| writers (connections) | append_events/s | avg latency ms | raw INSERT/s | avg latency ms | ratio | pending + seal_events/s | avg latency ms | ratio |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
for c in 1 16; do
  measure append "$c"; at=$tps; al=$latency
  measure raw "$c"; rt=$tps; rl=$latency
  measure pending "$c"; pt=$tps; pl=$latency
  row="| $c | $at | $al | $rt | $rl | $(ratio "$at" "$rt") | $pt | $pl | $(ratio "$pt" "$rt") |"
  if [ -n "${MESSAGE_DB:-}" ]; then
    PGOPTIONS="-c search_path=message_store,public" measure message-db "$c" "$LEDGER_DATABASE_URL"; mt=$tps; ml=$latency
    row="$row $mt | $ml | $(ratio "$mt" "$rt") |"
  fi
  echo "$row"
done
positions=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) || ' events, positions ' || min(position) || '-' || max(position) FROM \"$schema\".events")
pending=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM \"$schema\".pending_events")
echo "both ledger paths stored $positions (gap-free: the count equals the last position), $pending left pending"
[ "$pending" = 0 ] || { echo "bench-sql-append: $pending events were left pending" >&2; exit 1; }
