#!/usr/bin/env bash
# The main job, end to end: PostgreSQL (the private embedded cluster unless LEDGER_DATABASE_URL is
# set), migrations, a realistic sample of purchase facts appended (twice: the second time every fact
# is recognized as already stored), read back, the hash chain verified, the projector run, the read
# models rebuilt and verified, and a user shown with the facts behind what they hold. Then the
# audit's story: a simulated month for thousands of users with injected faults, appended through the
# same path services use, rebuilt, audited against the simulator's ground truth, and reported in HTML
# (checked in headless chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh
# A debug build, with the test command's flags: on a fresh clone it takes about half the time of a
# release build (the demo's work is small enough that the slower binary costs less than that), and
# the test command then reuses it and builds only the tests. Benchmarks use release builds.
swift build --product ledger -Xswiftc -warnings-as-errors >&2
ledger=".build/debug/ledger"

step() { printf '\n== %s\n' "$*" >&2; }
step "database"
if [ -z "${LEDGER_DATABASE_URL:-}" ]; then url=$("$ledger" db start); else url=$LEDGER_DATABASE_URL; echo "using LEDGER_DATABASE_URL" >&2; fi
echo "$url"

# The demo works in two schemas of its own, made afresh on every run: a schema kept from an older
# version would hold facts that the example file of this version retries with other content, which
# the ledger refuses (an idempotency conflict), as it should. A schema of that name that the demo did
# not make is never dropped: the demo stops and says so.
export LEDGER_SCHEMA=demo
story=demo_story
marker="made by tools/demo.sh, dropped and made again by its next run"
fresh_schema() {
  # Empty when there is no such schema; its comment (or "-") when there is.
  local found
  found=$(psql "$url" -XAtq -v ON_ERROR_STOP=1 -v s="$1" <<<"
    SELECT coalesce(obj_description(oid, 'pg_namespace'), '-') FROM pg_namespace WHERE nspname = :'s'")
  if [ -n "$found" ]; then
    if [ "$found" != "$marker" ]; then
      echo "demo: schema $1 exists and was not made by the demo: it is left as it is (drop it, or give the demo another database)" >&2
      exit 1
    fi
    psql "$url" -XAtq -v ON_ERROR_STOP=1 <<<"SET client_min_messages = warning; DROP SCHEMA \"$1\" CASCADE"
  fi
  "$ledger" migrate --schema "$1"
  psql "$url" -XAtq -v ON_ERROR_STOP=1 -v m="$marker" <<<"COMMENT ON SCHEMA \"$1\" IS :'m'"
}
step "migrate (schema $LEDGER_SCHEMA, made afresh)"
fresh_schema "$LEDGER_SCHEMA"
step "append schema/examples/purchase-facts.jsonl"
"$ledger" append --file schema/examples/purchase-facts.jsonl
step "append the same file again (an idempotent retry: original positions come back)"
"$ledger" append --file schema/examples/purchase-facts.jsonl | head -n 2
step "read the user's stream back"
"$ledger" read --stream user:u_1001
step "read the global log from position 8"
"$ledger" read --from 8 --limit 2
step "verify the hash chain"
"$ledger" verify-chain
step "append the release scenarios (ledger sample | ledger append), then their re-deliveries"
"$ledger" sample | "$ledger" append > /dev/null
"$ledger" sample --redeliveries | "$ledger" append > /dev/null
step "run the projector (read models: orders, transactions, subscriptions, entitlements, anomalies)"
"$ledger" project
step "rebuild every read model from the log into shadow tables and prove they equal the live ones"
"$ledger" rebuild all --verify
step "rebuild and swap in atomically"
"$ledger" rebuild all
step "show a user: coin balance and the facts behind it"
"$ledger" show user u_1001
step "show the user of scenario 8: a VIP month that renews and a VIP quarter, stacked"
"$ledger" show user u08-ivan

reports="reports"
mkdir -p "$reports"
step "simulate a month of purchases by 3,000 users with faults injected (schema $story), through the append path"
fresh_schema "$story"
"$ledger" simulate --schema "$story" --users 3000 --days 30 --seed 2026 --faults all=0.004,chain-broken=1 --truth "$reports/story-truth.json"
step "rebuild the read models of that history"
"$ledger" rebuild all --schema "$story"
step "audit it: every finding with its evidence, checked against the simulator's ground truth"
"$ledger" audit --schema "$story" --expect "$reports/story-truth.json" --output "$reports/audit.txt"
sed -n '1,30p' "$reports/audit.txt"
echo "... (the whole table: $reports/audit.txt)"
step "the reports for finance: JSON, CSV and a self-contained HTML page"
"$ledger" audit --schema "$story" --format json --output "$reports/audit.json"
"$ledger" audit --schema "$story" --format csv --output "$reports/audit.csv"
"$ledger" audit --schema "$story" --format html --output "$reports/audit.html"
if command -v chromium >/dev/null 2>&1; then
  tools/check-report.sh "$reports/audit.html" "$reports/audit.json" "$reports/audit.png"
else
  echo "(install chromium to check the HTML in a headless browser: tools/ensure-deps.sh chromium)" >&2
fi
echo
echo "HTML report: $reports/audit.html (open it in a browser)"
