#!/usr/bin/env bash
# Appends through the SQL function append_events (one round trip, every guarantee: idempotency,
# expected version, gap-free positions, the hash chain), driven by pgbench as independent writers
# would drive it (each connection a session of its own, as separate services in any language),
# beside a raw INSERT of the same row shape into a table with no constraint, in the same run, at 1
# and 16 connections; and by the path a writer that must scale takes: the claim and the event
# committed pending, then seal_events for its position; and by append_events_at_commit, which
# commits pending when another writer holds the append lock and answers without a position (what
# it leaves pending is sealed by the next writer to take the lock; the script seals the rest at the
# end and says how many). Prints a markdown table.
# With MESSAGE_DB set to a checkout of Message DB (github.com/message-db/message-db), its
# write_message runs in the same run, on the same cluster and the same baseline, installed in its
# own schema `message_store` (removed afterwards when this script made it): the peer's ratio beside
# the ledger's.
# Options (environment): LEDGER_BENCH_SECONDS (default 10) per measurement; LEDGER_BIN (default:
# builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the private cluster under
# .ledger/); MESSAGE_DB.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bench/pgbench-common.sh
bench_setup bench-sql-append
schema="bench_sql_$(date +%s)"
cleanup() {
  psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
  drop_message_store
  rm -rf "$work"
}
trap cleanup EXIT
"$LEDGER_BIN" migrate --database-url "$LEDGER_DATABASE_URL" --schema "$schema" >&2
create_raw_events "$schema"
# The pending path asks seal_events for its position after its commit (whoever seals next seals
# every pending event).
{ cat "$work/pending-claim.sql"; echo "SELECT count(*) FROM seal_events(ARRAY[md5('p' || :client_id || '-' || :n)::uuid]);"; } > "$work/pending.sql"
# append_events answered at its commit: the same event as append.sql.
sed 's/append_events(/append_events_at_commit(/' "$work/append.sql" > "$work/at-commit.sql"
if [ -n "${MESSAGE_DB:-}" ]; then install_message_db; fi
export PGOPTIONS="-c search_path=$schema"
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
if [ -n "${MESSAGE_DB:-}" ]; then
  echo "| writers (connections) | append_events/s | avg latency ms | raw INSERT/s | avg latency ms | ratio | pending + seal_events/s | avg latency ms | ratio | append_events_at_commit/s | avg latency ms | ratio | Message DB write_message/s | avg latency ms | its ratio |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
  echo "| writers (connections) | append_events/s | avg latency ms | raw INSERT/s | avg latency ms | ratio | pending + seal_events/s | avg latency ms | ratio | append_events_at_commit/s | avg latency ms | ratio |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
for c in 1 16; do
  measure append "$c"; at=$tps; al=$latency
  measure raw "$c"; rt=$tps; rl=$latency
  measure pending "$c"; pt=$tps; pl=$latency
  measure at-commit "$c"; ct=$tps; cl=$latency
  row="| $c | $at | $al | $rt | $rl | $(ratio "$at" "$rt") | $pt | $pl | $(ratio "$pt" "$rt") | $ct | $cl | $(ratio "$ct" "$rt") |"
  if [ -n "${MESSAGE_DB:-}" ]; then
    PGOPTIONS="-c search_path=message_store,public" measure message-db "$c" "$LEDGER_DATABASE_URL"; mt=$tps; ml=$latency
    row="$row $mt | $ml | $(ratio "$mt" "$rt") |"
  fi
  echo "$row"
done
# What the at-commit writers left pending when they stopped (no writer came after them to seal it).
left=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM \"$schema\".pending_events")
psql "$LEDGER_DATABASE_URL" -qAtc "SELECT \"$schema\".seal_pending()" >/dev/null
positions=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) || ' events, positions ' || min(position) || '-' || max(position) FROM \"$schema\".events")
pending=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM \"$schema\".pending_events")
echo "the ledger's paths stored $positions (gap-free: the count equals the last position); $left left pending by the last at-commit writers, sealed then; $pending pending after"
[ "$pending" = 0 ] || { echo "bench-sql-append: $pending events were left pending" >&2; exit 1; }
