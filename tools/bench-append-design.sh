#!/usr/bin/env bash
# Measures a candidate design for the append path (tools/append-design/), not the ledger's own: a
# writer's append is one row, committed with no global lock, and a sealer positions and chains
# every finished writer's facts in rounds. Two ways to keep the sealed log:
#   split  positions in a narrow table of their own (a reader joins it with the facts);
#   inbox  each fact copied into `events` as the ledger lays it out today (readers unchanged).
# Each runs with its sealer looping beside the writers (pgbench, one more connection), answered at
# commit and answered with the position (the writer polls for it); inbox also from one process
# (`ledger bench sealer`: a connection for each writer, and a sealer task beside them that either
# loops or hands each waiting writer its position as its round commits, as the library would), in
# the same run as a raw INSERT
# of the same row shape, the ledger's append_events, today's tables answered at commit (a pending
# claim, the event's one row, with today's sealer beside) and, with MESSAGE_DB set to a checkout of
# Message DB, its write_message: every side one event per transaction, each connection its own
# writer, at 1 and 16 writers. Then every candidate is checked: a round of 16
# writers on 8 shared streams, everything sealed, each fact once, positions gap-free, the hash chain
# recomputed, each stream's versions in log order. Prints a markdown table; exits non-zero when a
# check fails.
# Options (environment): LEDGER_BENCH_SECONDS (default 10) per measurement; LEDGER_BIN (default:
# builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the private cluster under
# .ledger/); MESSAGE_DB.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bench/pgbench-common.sh
bench_setup bench-append-design
stamp=$(date +%s)
schemas=("design_raw_$stamp" "design_split_$stamp" "design_inbox_$stamp")
cleanup() {
  for s in "${schemas[@]}"; do psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || true; done
  drop_message_store
  rm -rf "$work"
}
trap cleanup EXIT
raw=${schemas[0]} split=${schemas[1]} inbox=${schemas[2]}
for s in "${schemas[@]}"; do "$LEDGER_BIN" migrate --database-url "$LEDGER_DATABASE_URL" --schema "$s" >&2; done
create_raw_events "$raw"
for c in split inbox; do
  PGOPTIONS="-c search_path=${!c} -c client_min_messages=warning" psql "$LEDGER_DATABASE_URL" -q -v ON_ERROR_STOP=1 \
    -f tools/append-design/candidate.sql -f "tools/append-design/$c.sql" -f tools/append-design/positions.sql >&2
done
# The candidates' writer: the same event as every side's (tools/bench/pgbench-common.sh).
cat > "$work/design.sql" <<'SQL'
\set n random(1, 1000000000000000000)
SELECT count(*) FROM append_fact(gen_random_uuid(), 'bench-' || :client_id || '-' || :n, 'CoinsSpent',
    jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), now(), 'bench:' || :client_id || ':' || :n, -1);
SQL
# The same, answering the fact's position: the append commits, then waits for the sealer's round.
cat > "$work/positioned.sql" <<'SQL'
\set n random(1, 1000000000000000000)
SELECT count(*) FROM append_fact(md5('w' || :client_id || '-' || :n)::uuid, 'bench-' || :client_id || '-' || :n, 'CoinsSpent',
    jsonb_build_object('spendId', 's' || :n, 'userId', 'u' || :client_id, 'amount', 1), now(), 'bench:' || :client_id || ':' || :n, -1);
SELECT count(*) FROM sealed_positions(ARRAY[md5('w' || :client_id || '-' || :n)::uuid]);
SQL
# The check's writers: 8 streams shared by 16 writers, any version, so versions race (a writer
# that loses one after its transaction took an id begins again).
cat > "$work/shared.sql" <<'SQL'
\set n random(1, 1000000000000000000)
\set s random(1, 8)
SELECT count(*) FROM append_fact(gen_random_uuid(), 'shared-' || :s, 'CoinsSpent',
    jsonb_build_object('spendId', 's' || :n, 'amount', 1), now(), 'shared:' || :n, NULL);
SQL
cat > "$work/sealer.sql" <<'SQL'
SELECT seal_round();
\sleep 1 ms
SQL
# Today's tables, as a writer that must scale uses them (docs/library.md), but answered at its
# commit: the claim and the event committed pending, sealed by a sealer beside the writers.
cp "$work/pending-claim.sql" "$work/pending.sql"
cat > "$work/pending-sealer.sql" <<'SQL'
SELECT try_seal_pending();
\sleep 1 ms
SQL
if [ -n "${MESSAGE_DB:-}" ]; then install_message_db; fi
run_pgbench() { # script clients seconds schema url: sets tps and latency
  # (serialization failures, a lost race on a shared stream, are tried again as a client would)
  if ! PGOPTIONS="-c search_path=$4" "$pgbench" -n --max-tries=1000 -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$3" -f "$work/$1.sql" "$5" >"$work/out.$1" 2>"$work/err.$1"; then
    echo "bench-append-design: pgbench failed on $1 with $2 connection(s):" >&2; cat "$work/err.$1" >&2; exit 1
  fi
  tps=$(awk '/^tps/ {printf "%.0f", $3}' "$work/out.$1"); latency=$(awk '/^latency average/ {print $4}' "$work/out.$1")
  local failed; failed=$(awk '/^number of failed transactions/ {print $5}' "$work/out.$1")
  if [ -z "$tps" ] || [ "${failed:-0}" != 0 ]; then
    echo "bench-append-design: pgbench on $1 with $2 connection(s) reported ${failed:-no} failed transactions:" >&2; cat "$work/out.$1" "$work/err.$1" >&2; exit 1
  fi
}
# Writers with the candidate's sealer looping beside them for as long (and a little longer).
with_sealer() { # script clients schema [sealer script]: sets tps, latency, rounds
  PGOPTIONS="-c search_path=$3" "$pgbench" -n -c 1 -T "$((seconds + 1))" -f "$work/${4:-sealer}.sql" "$writer" >"$work/out.sealer" 2>"$work/err.sealer" &
  local sealer=$!
  run_pgbench "$1" "$2" "$seconds" "$3" "$writer"
  wait "$sealer" || { echo "bench-append-design: the sealer failed:" >&2; cat "$work/err.sealer" >&2; exit 1; }
  rounds=$(awk '/^number of transactions actually processed/ {print $6}' "$work/out.sealer")
}
drain() { # schema: seals until a round seals nothing and no fact is left unsealed
  local left
  for _ in $(seq 1 100); do
    PGOPTIONS="-c search_path=$1" psql "$writer" -Atqc "SELECT seal_round()" >/dev/null
    left=$(PGOPTIONS="-c search_path=$1" psql "$LEDGER_DATABASE_URL" -Atc "SELECT (SELECT count(*) FROM facts) - (SELECT count(*) FROM sealed_log)")
    [ "$left" = 0 ] && return 0
    sleep 0.1
  done
  echo "bench-append-design: $left facts of $1 left unsealed" >&2; exit 1
}
in_process() { # schema writers answer: the candidate driven from one process (`ledger bench sealer`); sets tps, latency, rounds
  local out
  if ! out=$("$LEDGER_BIN" bench sealer --database-url "$writer" --schema "$1" --writers "$2" --seconds "$seconds" --answer "$3"); then
    echo "bench-append-design: ledger bench sealer failed on $1 with $2 writer(s)" >&2; exit 1
  fi
  tps=$(sed -n 's/.*events_per_second=\([0-9]*\).*/\1/p' <<<"$out")
  latency=$(sed -n 's/.*avg_ms=\([0-9.]*\).*/\1/p' <<<"$out")
  rounds=$(sed -n 's/.*rounds=\([0-9]*\).*/\1/p' <<<"$out")
  backlog=$(sed -n 's/.*backlog=\([0-9]*\).*/\1/p' <<<"$out")
}
line() { # side writers rate latency [rounds]
  echo "| $1 | $2 | $3 | $4 | $(ratio "$3" "$rt") | ${5:--} |"
}
echo "| side | writers | events/s | avg ms | ratio to raw INSERT | sealer rounds |"
echo "|---|---:|---:|---:|---:|---:|"
for c in 1 16; do
  run_pgbench raw "$c" "$seconds" "$raw" "$writer"; rt=$tps
  line "raw INSERT" "$c" "$tps" "$latency"
  run_pgbench append "$c" "$seconds" "$raw" "$writer"
  line "append_events (today)" "$c" "$tps" "$latency"
  with_sealer pending "$c" "$raw" pending-sealer
  line "today's pending claim, a sealer beside, no wait" "$c" "$tps" "$latency" "$rounds"
  with_sealer design "$c" "$split"
  line "split" "$c" "$tps" "$latency" "$rounds"
  with_sealer positioned "$c" "$split"
  line "split, waiting for the position" "$c" "$tps" "$latency" "$rounds"
  with_sealer design "$c" "$inbox"
  line "inbox" "$c" "$tps" "$latency" "$rounds"
  with_sealer positioned "$c" "$inbox"
  line "inbox, waiting for the position" "$c" "$tps" "$latency" "$rounds"
  in_process "$inbox" "$c" commit
  line "inbox, one process, answered at commit ($backlog left to seal at the end)" "$c" "$tps" "$latency" "$rounds"
  in_process "$inbox" "$c" position
  line "inbox, one process, the sealer hands each writer its position" "$c" "$tps" "$latency" "$rounds"
  if [ -n "${MESSAGE_DB:-}" ]; then
    run_pgbench message-db "$c" "$seconds" "message_store,public" "$LEDGER_DATABASE_URL"
    line "Message DB write_message" "$c" "$tps" "$latency"
  fi
done
# Today's tables: nothing left pending, positions gap-free.
for _ in $(seq 1 100); do
  left=$(PGOPTIONS="-c search_path=$raw" psql "$writer" -Atqc "SELECT try_seal_pending()" -c "SELECT count(*) FROM pending_events" | tail -1)
  [ "$left" = 0 ] && break
  sleep 0.1
done
today=$(PGOPTIONS="-c search_path=$raw" psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) || ' ' || coalesce(max(position), 0) FROM events")
[ "$left" = 0 ] && [ "${today% *}" = "${today#* }" ] || { echo "bench-append-design: today's tables: $left pending, events and last position: $today" >&2; exit 1; }
echo "today's tables: ${today% *} events, positions gap-free, nothing pending"
# The checks, on everything each candidate stored (the measurements' facts and a round on shared streams).
for c in split inbox; do
  s=${!c}
  seconds=3 with_sealer shared 16 "$s"
  drain "$s"
  PGOPTIONS="-c search_path=$s" psql "$LEDGER_DATABASE_URL" -Atq -v ON_ERROR_STOP=1 >"$work/check" <<'SQL'
DO $$
DECLARE
    r record;
    previous bytea := decode(repeat('00', 32), 'hex');
    expected bytea;
    n bigint := 0;
BEGIN
    FOR r IN SELECT * FROM sealed_log ORDER BY position LOOP
        n := n + 1;
        IF r.position <> n THEN
            RAISE EXCEPTION 'position % follows %: the log has a gap or a repeat', r.position, n - 1;
        END IF;
        expected := chain_hash(previous, ROW(r.position, r.event_id, r.stream_id, r.stream_version, r.event_type,
            r.schema_version, r.payload, r.metadata, r.occurred_at, r.recorded_at, r.idempotency_key, NULL, NULL, NULL)::events);
        IF r.hash <> expected THEN
            RAISE EXCEPTION 'the hash at position % does not chain', r.position;
        END IF;
        previous := r.hash;
    END LOOP;
END $$;
SELECT (SELECT count(*) FROM facts) || ' facts, ' || (SELECT count(*) FROM sealed_log) || ' sealed, '
    || (SELECT count(DISTINCT event_id) FROM sealed_log) || ' distinct, '
    || (SELECT count(*) FROM (SELECT stream_version - (row_number() OVER (PARTITION BY stream_id ORDER BY position) - 1) AS off
                              FROM sealed_log) t WHERE off <> 0) || ' out of stream order, '
    || (SELECT coalesce(max(stream_version) + 1, 0) FROM facts WHERE stream_id LIKE 'shared-%') || ' versions on the busiest shared stream';
SQL
  line=$(cat "$work/check")
  echo "$c: $line; positions gap-free, chain recomputed"
  case "$line" in
    *" 0 out of stream order"*) ;;
    *) echo "bench-append-design: $c failed its check: $line" >&2; exit 1 ;;
  esac
  total=${line%% facts,*}; sealed=${line#*facts, }; sealed=${sealed%% sealed,*}; distinct=${line#*sealed, }; distinct=${distinct%% distinct,*}
  [ "$total" = "$sealed" ] && [ "$sealed" = "$distinct" ] || { echo "bench-append-design: $c: $total facts, $sealed sealed, $distinct distinct" >&2; exit 1; }
done
