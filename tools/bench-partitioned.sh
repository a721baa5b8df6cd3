#!/usr/bin/env bash
# The log partitioned by position range, measured beside the same log unpartitioned, at two sizes,
# in one run: does a fact cost the same to read, verify, audit and append when the log is ten
# times longer, and when it is partitioned?
#
# For each size, two copies of the benchmark log that `ledger bench rebuild` generates (the facts,
# their claims and the head, copied as they are, with triggers off):
#   plain        the ledger's own layout (`ledger migrate`), every constraint as it is;
#   partitioned  `events` partitioned by position, LEDGER_BENCH_PARTITION_SIZE positions a partition
#                (default 1,000,000). PostgreSQL has no unique index across partitions, so `events`
#                keeps its position (primary key, gap-free by foreign key, the head trigger's
#                checks) and plain indexes on event id, stream and idempotency key; `event_claims`
#                holds ids, keys and versions unique as it does in the plain layout. One guarantee
#                the plain layout gets from a unique index, one row of `events` per claimed event,
#                is a statement trigger here that looks each new id up in every partition's index:
#                its cost is measured with the rest.
# Then, one layout after the other: binary COPY TO of the whole log (the baseline), `ledger
# verify-chain`, `ledger audit` (default memory) and `append_events` from pgbench at 1 and 16
# writers, each session with the plans the library's writer uses (plan_cache_mode =
# force_generic_plan: planning a statement over every partition at each call costs more than
# running it). Prints one table; per-fact costs are in microseconds of wall time.
#
# Not a layout the ledger migrates to: the partitioned copy is made for this measurement (see
# docs/operations.md for the design it would need).
#
# Options (environment):
#   LEDGER_BENCH_SIZES (default "1000000 10000000") with LEDGER_BENCH_USERS_PER_FACT (default 50:
#     users = facts / 50), the generated logs (schema bench_rebuild for 10 M facts and 200,000 users,
#     as `ledger bench rebuild` makes it; bench_log_N for other sizes);
#   LEDGER_BENCH_PARTITION_SIZE (default 1000000); LEDGER_BENCH_SECONDS (default 10) per pgbench run;
#   LEDGER_BENCH_KEEP=1 keeps the copies (they take about as much disk as the logs they copy), and
#   LEDGER_BENCH_REUSE=1 measures copies an earlier run kept instead of copying again (and keeps
#   them);
#   LEDGER_BIN (default: builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the
#     private cluster under .ledger/; the user must be a superuser, to copy with triggers off).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bench/pgbench-common.sh
bench_setup bench-partitioned
sizes=${LEDGER_BENCH_SIZES:-1000000 10000000}
per_user=${LEDGER_BENCH_USERS_PER_FACT:-50}
partition=${LEDGER_BENCH_PARTITION_SIZE:-1000000}
made=()
cleanup() {
  if [ "${LEDGER_BENCH_KEEP:-0}" != 1 ]; then
    for s in "${made[@]}"; do psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || true; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
sql() { psql "$LEDGER_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }
columns="position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, recorded_at, idempotency_key, hash"

# The generated log of n facts: its schema, made by `ledger bench rebuild` when missing.
log_schema() {
  local n=$1 users=$(( $1 / per_user )) schema
  if [ "$1" = 10000000 ] && [ "$users" = 200000 ]; then schema=bench_rebuild; else schema="bench_log_$1"; fi
  if [ "$(sql -Atc "SELECT count(*) FROM pg_namespace WHERE nspname = '$schema'")" = 0 ] \
      || [ "$(sql -Atc "SELECT last_position FROM \"$schema\".log_head" 2>/dev/null)" != "$n" ]; then
    echo "bench-partitioned: generating $n facts in $schema (ledger bench rebuild)" >&2
    "$LEDGER_BIN" bench rebuild --events "$n" --users "$users" --schema "$schema" --fold-events 1000 >&2
  fi
  echo "$schema"
}

# A copy of the log in `target`, in the ledger's own layout or partitioned.
copy_log() { # source target layout
  local from=$1 to=$2 layout=$3 n
  sql -c "DROP SCHEMA IF EXISTS \"$to\" CASCADE" 2>/dev/null
  "$LEDGER_BIN" migrate --database-url "$LEDGER_DATABASE_URL" --schema "$to" >/dev/null
  made+=("$to")
  n=$(sql -Atc "SELECT last_position FROM \"$from\".log_head")
  if [ "$layout" = partitioned ]; then
    {
      echo "SET search_path = \"$to\";"
      echo "ALTER TABLE events RENAME TO events_unpartitioned;"
      echo "CREATE TABLE events (LIKE events_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED) PARTITION BY RANGE (position);"
      # Room for the appends the benchmark makes: one partition more.
      for ((i = 0; i * partition < n + partition; i++)); do
        echo "CREATE TABLE events_$i PARTITION OF events FOR VALUES FROM ($((i * partition + 1))) TO ($(((i + 1) * partition + 1)));"
      done
      echo "GRANT SELECT, INSERT ON events TO ledger_writer;"
      echo "GRANT SELECT ON events TO ledger_projector, ledger_reader, ledger_auditor;"
    } | sql
    # The chain's SQL function for the new table's row type (the head trigger calls it by name).
    { echo "SET search_path = \"$to\";"; cat Sources/LedgerLog/Functions/chain_hash.sql; } | sql
  fi
  sql <<SQL
SET search_path = "$to";
SET session_replication_role = replica;
INSERT INTO events ($columns) SELECT $columns FROM "$from".events;
INSERT INTO event_claims (event_id, idempotency_key, stream_id, stream_version)
    SELECT event_id, idempotency_key, stream_id, stream_version FROM "$from".event_claims;
UPDATE log_head SET last_position = h.last_position, last_hash = h.last_hash, last_recorded_at = h.last_recorded_at
    FROM "$from".log_head h;
SQL
  if [ "$layout" = partitioned ]; then
    sql <<SQL
SET search_path = "$to";
ALTER TABLE events ADD CONSTRAINT events_position PRIMARY KEY (position);
CREATE INDEX events_event_id ON events (event_id);
CREATE INDEX events_stream_version ON events (stream_id, stream_version);
CREATE INDEX events_idempotency_key ON events (idempotency_key);
-- (PostgreSQL 15 validates a partitioned table's foreign keys when they are added: no NOT VALID.)
ALTER TABLE events ADD CONSTRAINT events_gapless_position FOREIGN KEY (previous_position) REFERENCES events (position);
ALTER TABLE events ADD CONSTRAINT events_claimed FOREIGN KEY (event_id) REFERENCES event_claims (event_id);
CREATE TRIGGER events_advance_head AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION advance_head();
CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE ON events FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
-- One row of events per claimed event, as the plain layout's unique index on event_id holds it.
CREATE FUNCTION one_event_per_claim() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS \$\$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows n JOIN events e ON e.event_id = n.event_id AND e.position <> n.position) THEN
        RAISE EXCEPTION 'an event is already in the log' USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NULL;
END \$\$;
CREATE TRIGGER events_one_per_claim AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION one_event_per_claim();
SQL
  fi
  sql -c "VACUUM ANALYZE \"$to\".events, \"$to\".event_claims"
}

elapsed() { local t0; t0=$(now); "$@" >/dev/null; awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
copy_to() { sql -c "COPY (SELECT $columns FROM \"$1\".events ORDER BY position) TO STDOUT (FORMAT binary)" > /dev/null; }
per_fact() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.2f", s * 1000000 / n }'; }
appends() { # schema writers: append_events per second
  PGOPTIONS="-c search_path=$1 -c plan_cache_mode=force_generic_plan" "$pgbench" -n -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$seconds" -f "$work/append.sql" "$writer" 2>/dev/null \
    | awk '/^tps/ { printf "%.0f", $3 }'
}

echo "| facts | layout | COPY TO s (µs/fact) | verify-chain s (µs/fact) | audit s (µs/fact) | append_events/s, 1 writer | 16 writers |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for n in $sizes; do
  source_schema=$(log_schema "$n")
  plain="bench_part_${n}_plain"; parted="bench_part_${n}_partitioned"
  if [ "${LEDGER_BENCH_REUSE:-0}" = 1 ] && [ "$(sql -Atc "SELECT count(*) FROM pg_namespace WHERE nspname IN ('$plain', '$parted')")" = 2 ]; then
    echo "bench-partitioned: measuring the copies $plain and $parted an earlier run kept" >&2
  else
    echo "bench-partitioned: copying $n facts into $plain and $parted" >&2
    copy_log "$source_schema" "$plain" plain
    copy_log "$source_schema" "$parted" partitioned
  fi
  for layout in plain partitioned; do
    s="bench_part_${n}_$layout"
    c=$(elapsed copy_to "$s")
    v=$(elapsed "$LEDGER_BIN" verify-chain --database-url "$LEDGER_DATABASE_URL" --schema "$s")
    a=$(elapsed "$LEDGER_BIN" audit --database-url "$LEDGER_DATABASE_URL" --schema "$s" --format json)
    one=$(appends "$s" 1); sixteen=$(appends "$s" 16)
    echo "| $n | $layout | $c ($(per_fact "$c" "$n")) | $v ($(per_fact "$v" "$n")) | $a ($(per_fact "$a" "$n")) | $one | $sixteen |"
  done
  for s in "$plain" "$parted"; do
    after=$(sql -Atc "SELECT count(*) = max(position) AND max(position) = (SELECT last_position FROM \"$s\".log_head) FROM \"$s\".events")
    [ "$after" = t ] || { echo "bench-partitioned: $s is not gap-free after the appends" >&2; exit 1; }
  done
done
