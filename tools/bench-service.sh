#!/usr/bin/env bash
# The HTTP service benchmark, on loopback: wrk drives `ledger serve` (a release build) with one new
# fact per POST /v1/events at 16 and 64 connections, then distinct signed App Store, Google Play and
# WeChat Pay notifications (verification included; keys the script makes); the library append and raw INSERT are measured in the same run by
# `ledger bench append`. Prints a markdown table. Options (environment):
#   LEDGER_BENCH_SECONDS (default 10) per wrk run; LEDGER_BENCH_PORT (default 18181);
#   LEDGER_BENCH_INSTANCES (default 1): that many `ledger serve` processes on the same log, on
#   consecutive ports, the connections shared between them (one wrk each, its latencies merged;
#   with LEDGER_BENCH_ONLY=events); LEDGER_BENCH_RESPOND_ASYNC=1: the facts posted with
#   `Prefer: respond-async` (answered at their commit); LEDGER_BENCH_SEALING=sealer: the instances
#   run with `--sealing sealer` (what is answered at commit is sealed by one elected among them);
#   LEDGER_BENCH_ONLY=events: the POST /v1/events rows only (no notifications, no library run), for
#   alternate runs of two builds;
#   LEDGER_BIN (default: builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the
#   private cluster under .ledger/).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh wrk
seconds=${LEDGER_BENCH_SECONDS:-10}
port=${LEDGER_BENCH_PORT:-18181}
if [ -z "${LEDGER_BIN:-}" ]; then
  swift build -c release --product ledger >&2
  LEDGER_BIN=.build/release/ledger
fi
if [ -z "${LEDGER_DATABASE_URL:-}" ]; then LEDGER_DATABASE_URL="$("$LEDGER_BIN" db start)"; fi
export LEDGER_DATABASE_URL
work=$(mktemp -d)
run="b$(date +%s)"
export LEDGER_SCHEMA="bench_http_$run"
instances=${LEDGER_BENCH_INSTANCES:-1}
servers=()
stop_servers() {
  local p
  for p in "${servers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${servers[@]}"; do wait "$p" 2>/dev/null || true; done
  servers=()
}
cleanup() {
  stop_servers
  psql "$LEDGER_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS \"$LEDGER_SCHEMA\" CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$LEDGER_BIN" migrate >&2
"$LEDGER_BIN" serve token --name bench --scopes append,read > "$work/token"
export LEDGER_BENCH_TOKEN=$(awk '/^token:/ {print $2}' "$work/token")
awk '/^line:/ {print $2, $3, $4}' "$work/token" > "$work/tokens"
only=${LEDGER_BENCH_ONLY:-}
if [ "$instances" -gt 1 ] && [ "$only" != events ]; then
  echo "LEDGER_BENCH_INSTANCES=$instances needs LEDGER_BENCH_ONLY=events (the notification fixtures are one sequence)" >&2
  exit 64
fi
verifiers=()  # the notification routes' settings, with the keys and chains of the fixture
if [ "$only" != events ]; then
  # Enough distinct notifications that none repeats within a run.
  python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install -q cryptography >&2
  notifications=${LEDGER_BENCH_NOTIFICATIONS:-$((seconds * 2500))}
  python3 tools/bench/appstore_fixture.py "$work/fixture" "$notifications" >&2
  python3 tools/bench/stores_fixture.py "$work/fixture" "$notifications" >&2
  verifiers=(
    LEDGER_APPSTORE_ROOT_CERT="$work/fixture/root.pem" LEDGER_APPSTORE_BUNDLE_ID=com.example.ledgerbench
    LEDGER_GOOGLE_JWKS="$work/fixture/google-jwks.json" LEDGER_GOOGLE_AUDIENCE=https://ledger.example.test/v1/notifications/googleplay
    LEDGER_GOOGLE_SERVICE_ACCOUNT=rtdn-push@example-project.iam.gserviceaccount.com LEDGER_GOOGLE_PACKAGE_NAME=com.example.ledgerbench
    LEDGER_WECHAT_PLATFORM_CERTS="$work/fixture/wechat-platform.pem" LEDGER_WECHAT_APIV3_KEY_FILE="$work/fixture/wechat-apiv3.key"
    LEDGER_WECHAT_APPID=wxbench0000000001 LEDGER_WECHAT_MCHID=1900000109
  )
fi
for ((i = 0; i < instances; i++)); do
  env "${verifiers[@]}" "$LEDGER_BIN" serve --port "$((port + i))" --tokens-file "$work/tokens" \
    --sealing "${LEDGER_BENCH_SEALING:-writers}" 2> "$work/serve.$i.log" &
  servers+=($!)
done
for ((i = 0; i < instances; i++)); do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$((port + i))/healthz" >/dev/null && break; sleep 0.1; done
done
export LEDGER_BENCH_LUA="$PWD/tools/bench" LEDGER_BENCH_BODIES="$work/fixture/bodies.jsonl" LEDGER_BENCH_THREADS=2 \
  LEDGER_BENCH_GOOGLE_BODIES="$work/fixture/google.jsonl" LEDGER_BENCH_GOOGLE_TOKEN="$work/fixture/google-token" \
  LEDGER_BENCH_WECHAT="$work/fixture/wechat.tsv"

# CPU time (ms) of the service and of the database's processes (those of pg_stat_activity that run
# on this machine: the embedded cluster's), and the database's commits, read before and after each
# run: a shared machine moves the rates, less what each request costs. (PostgreSQL publishes its
# commit counts about once a second: the commits are exact for runs of several seconds, not for 2-3.)
tick=$(getconf CLK_TCK)
cpu_ms() {  # pids...: user + system CPU in ms, of those that are still running
  local t=0 p
  for p in "$@"; do
    if [ -r "/proc/$p/stat" ]; then t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); fi
  done
  echo $((t * 1000 / tick))
}
db_pids() {
  local p
  for p in $(psql "$LEDGER_DATABASE_URL" -Atc "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()" 2>/dev/null); do
    if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = postgres ]; then echo "$p"; fi
  done
}
commits() { psql "$LEDGER_DATABASE_URL" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
drive() {  # connections, script, wrk options...: wrk against every instance; one RESULT line
  local c=$1 script=$2 i
  shift 2
  if [ "$instances" -eq 1 ]; then
    wrk -t2 -c"$c" "$@" -s "$script" "http://127.0.0.1:$port"
    return
  fi
  # One wrk an instance, the connections shared out; each writes its latency histogram, merged here.
  for ((i = 0; i < instances; i++)); do
    LEDGER_BENCH_HISTOGRAM="$work/latency.$i" LEDGER_BENCH_RUN="${LEDGER_BENCH_RUN:-$run}-i$i" \
      wrk -t1 -c"$(( (c + instances - 1 - i) / instances ))" "$@" -s "$script" "http://127.0.0.1:$((port + i))" \
      > "$work/wrk.$i" &
  done
  wait  # (a subshell: its children are the wrk runs)
  sed 's/^RESULT /instance: /' "$work"/wrk.*  # the merged RESULT line below is the one a row reads
  python3 - "$work" "$instances" <<'PY'
import re, sys
work, n = sys.argv[1], int(sys.argv[2])
runs = [dict(re.findall(r"(\w+)=([\d.]+)", next(l for l in open(f"{work}/wrk.{i}") if l.startswith("RESULT")))) for i in range(n)]
counts = {}
for i in range(n):
    for line in open(f"{work}/latency.{i}"):
        us, k = map(int, line.split())
        counts[us] = counts.get(us, 0) + k
total = sum(counts.values())
def percentile(p):
    seen = 0
    for us in sorted(counts):
        seen += counts[us]
        if seen >= total * p / 100:
            return us / 1000
    return 0.0
print("RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f errors=%d non2xx=%d" % (
    sum(int(r["requests"]) for r in runs), max(float(r["seconds"]) for r in runs), sum(float(r["rps"]) for r in runs),
    percentile(50), percentile(99), percentile(99.9), sum(int(r["errors"]) for r in runs), sum(int(r["non2xx"]) for r in runs)))
PY
  rm -f "$work"/wrk.* "$work"/latency.*
}
measure() {  # connections, script, wrk options...: runs wrk, prints its output and a MEASURED line
  local before after s0 d0 c0 out
  before=$(db_pids)
  s0=$(cpu_ms "${servers[@]}"); d0=$(cpu_ms $before); c0=$(commits)
  out=$(drive "$@")
  # Connections opened during the run count from 0 (the pool opens them on demand).
  after=$(printf '%s\n' $before $(db_pids) | sort -u)
  echo "$out"
  echo "MEASURED service_ms=$(( $(cpu_ms "${servers[@]}") - s0 )) db_ms=$(( $(cpu_ms $after) - d0 )) db_local=$([ -n "$after" ] && echo 1 || echo 0) commits=$(( $(commits) - c0 ))"
}

row() {  # name, connections, output of measure
  local r m n
  r=$(grep '^RESULT' <<< "$3")
  m=$(grep '^MEASURED' <<< "$3")
  n=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<< "$r")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$(sed 's/.*rps=\([0-9]*\).*/\1/' <<< "$r")" \
    "$(sed 's/.*p50_ms=\([0-9.]*\).*/\1/' <<< "$r")" "$(sed 's/.*p99_ms=\([0-9.]*\).*/\1/' <<< "$r")" \
    "$(sed 's/.*p999_ms=\([0-9.]*\).*/\1/' <<< "$r")" "$(sed 's/.*errors=\([0-9]*\).*/\1/' <<< "$r")" \
    "$(awk -v ms="$(sed 's/.*service_ms=\([0-9]*\).*/\1/' <<< "$m")" -v n="$n" 'BEGIN { printf "%.3f", n ? ms / n : 0 }')" \
    "$(awk -v ms="$(sed 's/.*db_ms=\([0-9]*\).*/\1/' <<< "$m")" -v n="$n" -v local="$(sed 's/.*db_local=\([01]\).*/\1/' <<< "$m")" \
        'BEGIN { if (local == 1 && n) printf "%.3f", ms / n; else printf "-" }')" \
    "$(awk -v c="$(sed 's/.*commits=\([0-9]*\).*/\1/' <<< "$m")" -v n="$n" 'BEGIN { printf "%.2f", n ? c / n : 0 }')"
}
[ "$instances" -gt 1 ] && echo "$instances instances of ledger serve on one log, the connections shared between them:"
echo "| workload | connections | requests/s | p50 ms | p99 ms | p99.9 ms | errors (non-2xx) | service CPU ms/request | database CPU ms/request | database commits per request |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in 16 64; do
  out=$(LEDGER_BENCH_RUN="$run-$c" measure "$c" tools/bench/append.lua -d"${seconds}s" --timeout 10s)
  row "POST /v1/events (1 fact)" "$c" "$out"
done
if [ "$only" != events ]; then
  out=$(measure 16 tools/bench/appstore.lua -d"${seconds}s" --timeout 10s)
  row "POST /v1/notifications/appstore (verify 3 JWS, 2 facts)" 16 "$out"
  out=$(measure 16 tools/bench/googleplay.lua -d"${seconds}s" --timeout 10s)
  row "POST /v1/notifications/googleplay (verify OIDC token, 1 fact)" 16 "$out"
  out=$(measure 16 tools/bench/wechatpay.lua -d"${seconds}s" --timeout 10s)
  row "POST /v1/notifications/wechatpay (verify RSA, decrypt, 1 fact)" 16 "$out"
fi
stored=$(curl -s -H "Authorization: Bearer $LEDGER_BENCH_TOKEN" "http://127.0.0.1:$port/readyz" | sed 's/.*"head":\([0-9]*\).*/\1/')
echo
echo "events in the log after the HTTP runs: $stored"
stop_servers
[ "$only" = events ] && exit 0
echo
echo "library append and raw INSERT, same run (ledger bench append --seconds $((seconds / 2 > 1 ? seconds / 2 : 2))):"
"$LEDGER_BIN" bench append --seconds "$((seconds / 2 > 1 ? seconds / 2 : 2))"
