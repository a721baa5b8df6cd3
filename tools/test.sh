#!/usr/bin/env bash
# The whole test suite, against a real PostgreSQL: LEDGER_TEST_DATABASE_URL if set, otherwise the
# private cluster under .ledger/ (started, or reused, here). Each test uses its own schema.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/ensure-deps.sh
# Tests that need a program from Debian: when it can be installed, the test is required to run.
# When not: in CI (CI=true) that is a failure, unless LEDGER_SKIP_<NAME>=1 opts out explicitly;
# locally the test shows as skipped.
#   optional_program NAME PACKAGE-ARGUMENT WHAT
optional_program() {
  local name=$1 package=$2 what=$3 skip="LEDGER_SKIP_$1" require="LEDGER_REQUIRE_$1"
  if [ "${!skip:-}" = 1 ]; then
    echo "note: $skip=1: $what is skipped" >&2
  elif tools/ensure-deps.sh "$package"; then
    export "$require=1"
  elif [ "${CI:-}" = true ]; then
    echo "error: $package could not be installed, and CI=true requires $what (set $skip=1 to opt out)" >&2
    exit 1
  else
    echo "warning: $package could not be installed; $what will show as skipped" >&2
  fi
}
# The HTML report, checked in a real headless browser (Debian's chromium).
optional_program CHROMIUM chromium "the HTML report test"
# The live tail's Node client.
optional_program NODE node "the Node client test"

# The sources' format (.swift-format: swift-format from the toolchain, lines of at most 120 characters
# but for string literals it cannot break, one statement per line). `swift format -i -r Sources Tests
# Package.swift` fixes what this reports.
echo "== format" >&2
if swift format --version >/dev/null 2>&1; then
  swift format lint --strict --parallel -r Sources Tests Package.swift
elif [ "${CI:-}" = true ]; then
  echo "error: this toolchain has no swift-format, and CI=true requires the format check" >&2
  exit 1
else
  echo "warning: this toolchain has no swift-format; the format check is skipped" >&2
fi

echo "== build (warnings are errors)" >&2
swift build --build-tests -Xswiftc -warnings-as-errors

if [ -z "${LEDGER_TEST_DATABASE_URL:-}" ] && [ -z "${LEDGER_DATABASE_URL:-}" ]; then
  LEDGER_TEST_DATABASE_URL="$(.build/debug/ledger db start)"
  export LEDGER_TEST_DATABASE_URL
fi
echo "== test (PostgreSQL: ${LEDGER_TEST_DATABASE_URL:-$LEDGER_DATABASE_URL})" >&2

# The HTTP service's contract test (schemathesis from PyPI against schema/openapi.yaml): required in
# CI, a visible skip locally when it cannot be installed. Before the suite, so its summary stays last.
tools/contract-test.sh

# Prints every thread's backtrace of the test processes under this script (the test bundle, and
# any `ledger` it runs) to stderr. gdb first (this toolchain's lldb may lack its libpython), else lldb.
dump_backtraces() {
  local queue=("$$") pids=() p c exe
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}; queue=("${queue[@]:1}")
    for c in $(pgrep -P "$p" || true); do pids+=("$c"); queue+=("$c"); done
  done
  for p in "${pids[@]}"; do
    exe=$(readlink "/proc/$p/exe" 2>/dev/null || true)
    case "$exe" in *.xctest|*/ledger) ;; *) continue ;; esac
    echo "== hang: backtraces of pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" >&2
    if command -v gdb >/dev/null; then
      timeout 180 gdb -p "$p" -batch -nx -ex "info threads" -ex "thread apply all bt" </dev/null >&2 2>&1 || true
    elif lldb=$(command -v lldb || ls /opt/swift/usr/bin/lldb 2>/dev/null); then
      timeout 180 "$lldb" -p "$p" --batch -o "thread backtrace all" </dev/null >&2 2>&1 || true
    else
      echo "(neither gdb nor lldb found)" >&2
    fi
  done
  if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" != 0 ]; then
    echo "(if attaching failed: kernel.yama.ptrace_scope only lets a non-root debugger attach to its own children)" >&2
  fi
}

# Each database test has a 2-minute limit; the whole run gets 20 minutes, so a hang fails loudly
# (timeout's status, 124). A watchdog dumps the test processes' threads first, after 15 minutes
# (LEDGER_TEST_DUMP_AFTER seconds), so the log shows where a hang is.
dump_after=${LEDGER_TEST_DUMP_AFTER:-900}
( for ((waited = 0; waited < dump_after; waited += 5)); do sleep 5; done
  echo "== tests still running after ${dump_after}s: dumping backtraces" >&2
  dump_backtraces ) &
watchdog=$!
# swift test block-buffers its output when it is not a terminal; line-buffered, a log cut by a hang
# ends where the tests stopped, not up to 4 KiB earlier.
linebuffered=()
if command -v stdbuf >/dev/null; then linebuffered=(stdbuf -oL -eL); fi
# How many tests run at once: four per core unless set. With no bound, every test of the suite
# starts at once; on two cores shared with other work, tests then ran past their 2-minute limits
# and CLI children were killed, where the same suite bounded to eight passed.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$(( $(nproc) * 4 ))}"
echo "== at most $SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH tests at once" >&2
status=0
timeout --signal=INT --kill-after=30 1200 "${linebuffered[@]}" swift test --skip-build "$@" || status=$?
kill "$watchdog" 2>/dev/null || true
wait "$watchdog" 2>/dev/null || true
exit "$status"
