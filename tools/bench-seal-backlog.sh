#!/usr/bin/env bash
# A backlog of pending events (claims with content, as writers answered at commit leave them when
# no sealer keeps up: a sealer stopped, or frozen until a candidate stands in) sealed in rounds, each
# its own transaction, as an elected sealer seals them: rounds of one pass of 5,000, rounds of up to
# eight passes (what the sealer grows its rounds to while every pass is full), and one seal_pending()
# (what a writer that takes the append lock, or `ledger seal`, does). Beside it, in the same run, a
# raw INSERT ... SELECT of the same rows into a table with no constraint, trigger or hash. Each
# measurement makes its backlog afresh in a schema of its own. Prints a markdown table.
# Options (environment): LEDGER_BENCH_BACKLOG (default 100000) events, in LEDGER_BENCH_WRITERS
# (default 200) transactions; LEDGER_BIN (default: builds and uses .build/release/ledger);
# LEDGER_DATABASE_URL (default: the private cluster under .ledger/).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/bench/pgbench-common.sh
bench_setup bench-seal-backlog
backlog=${LEDGER_BENCH_BACKLOG:-100000}
transactions=${LEDGER_BENCH_WRITERS:-200}
[[ "$backlog" =~ ^[1-9][0-9]*$ && "$transactions" =~ ^[1-9][0-9]*$ && "$backlog" -ge "$transactions" ]] \
  || { echo "bench-seal-backlog: LEDGER_BENCH_BACKLOG and LEDGER_BENCH_WRITERS must be whole numbers, the backlog at least the writers" >&2; exit 1; }
schema="bench_backlog_$(date +%s)"
cleanup() {
  psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fresh() { # a migrated schema holding the backlog, committed by the writer role in $transactions transactions
  psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1
  "$LEDGER_BIN" migrate --database-url "$LEDGER_DATABASE_URL" --schema "$schema" >/dev/null 2>&1 \
    || { echo "bench-seal-backlog: could not migrate schema $schema" >&2; exit 1; }
  create_raw_events "$schema"
  local per=$(( backlog / transactions )) extra=$(( backlog % transactions )) i n
  for (( i = 1; i <= transactions; i++ )); do
    n=$(( per + (i <= extra ? 1 : 0) ))
    echo "INSERT INTO \"$schema\".event_claims (event_id, idempotency_key, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at) SELECT gen_random_uuid(), 'backlog:$i:' || g, 'backlog-$i-' || g, 0, 'CoinsSpent', 1, jsonb_build_object('spendId', 's' || g, 'userId', 'u$i', 'amount', 1), '{}', now() FROM generate_series(1, $n) AS g;"
  done | psql "$writer" -q -v ON_ERROR_STOP=1
  psql "$LEDGER_DATABASE_URL" -qc "VACUUM ANALYZE \"$schema\".event_claims"
}
seal() { # passes (a number, or NULL for seal_pending()): prints "rounds seconds sealed"
  psql "$writer" -Atq -v ON_ERROR_STOP=1 -c "SET search_path TO \"$schema\"" -c "
DO \$\$
DECLARE started timestamptz := clock_timestamp(); n bigint; rounds integer := 0; total bigint := 0;
BEGIN
    LOOP
        n := seal_pending_passes($1);
        COMMIT;
        rounds := rounds + 1;
        total := total + n;
        EXIT WHEN n < 5000 * coalesce($1, 1) OR n = 0;
    END LOOP;
    RAISE NOTICE '% % %', rounds, extract(epoch FROM clock_timestamp() - started), total;
END
\$\$" 2>&1 | sed -n 's/^NOTICE: *//p'
}
raw() { # seconds of one INSERT ... SELECT of the backlog's rows into raw_events
  psql "$writer" -Atq -v ON_ERROR_STOP=1 -c "SET search_path TO \"$schema\"" -c "
DO \$\$
DECLARE started timestamptz := clock_timestamp();
BEGIN
    INSERT INTO raw_events (event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at,
                            recorded_at, idempotency_key, hash)
    SELECT event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, now(),
           idempotency_key, sha256(convert_to(event_id::text, 'UTF8'))
    FROM event_claims ORDER BY seq;
    RAISE NOTICE '%', extract(epoch FROM clock_timestamp() - started);
END
\$\$" 2>&1 | sed -n 's/^NOTICE: *//p'
}
echo "A backlog of $backlog pending events from $transactions transactions, sealed in rounds (one transaction each):"
echo
echo "| rounds of | rounds | seconds | events/s | raw INSERT ... SELECT, same run | ratio of the time |"
echo "|---|---:|---:|---:|---:|---:|"
for passes in 1 8 NULL; do
  fresh
  raw_seconds=$(raw)
  read -r rounds secs total < <(seal "$passes")
  [ "$total" = "$backlog" ] || { echo "bench-seal-backlog: $total of $backlog events sealed" >&2; exit 1; }
  left=$(psql "$LEDGER_DATABASE_URL" -Atc "SELECT count(*) FROM \"$schema\".pending_events")
  [ "$left" = 0 ] || { echo "bench-seal-backlog: $left events still pending" >&2; exit 1; }
  case $passes in 1) label="one pass of 5,000";; NULL) label="every pass (seal_pending())";; *) label="up to $passes passes";; esac
  awk -v l="$label" -v r="$rounds" -v s="$secs" -v n="$backlog" -v b="$raw_seconds" \
    'BEGIN { printf "| %s | %d | %.2f | %d | %.2f s | %.1fx |\n", l, r, s, n / s, b, s / b }'
done
"$LEDGER_BIN" verify-chain --database-url "$LEDGER_DATABASE_URL" --schema "$schema" >&2
