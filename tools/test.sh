#!/usr/bin/env bash
# The whole test suite, against a real PostgreSQL: LEDGER_TEST_DATABASE_URL if set, otherwise the
# private cluster under .ledger/ (started, or reused, here). Each test uses its own schema.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh

echo "== build (warnings are errors)" >&2
swift build --build-tests -Xswiftc -warnings-as-errors

if [ -z "${LEDGER_TEST_DATABASE_URL:-}" ] && [ -z "${LEDGER_DATABASE_URL:-}" ]; then
  LEDGER_TEST_DATABASE_URL="$(.build/debug/ledger db start)"
  export LEDGER_TEST_DATABASE_URL
fi
echo "== test (PostgreSQL: ${LEDGER_TEST_DATABASE_URL:-$LEDGER_DATABASE_URL})" >&2
# Each database test has a 2-minute limit; the whole run gets 20 minutes, so a hang fails loudly.
timeout --signal=INT --kill-after=30 1200 swift test --skip-build "$@"
