#!/usr/bin/env bash
# The scale goals in one run: every benchmark that measures one, run one after the other on the same
# build and the same cluster, then one table with each figure beside its baseline from the same run,
# the goal, and whether it is met. The whole output of each benchmark is kept beside the table.
#
#   ledger bench append          appends, 1 client / 16 stores (answered with positions, and at
#                                commit) / batches, beside INSERT and COPY
#   tools/bench-sql-append.sh    16 independent writers (pgbench; append_events, and answered at
#                                commit), beside INSERT and Message DB
#   ledger bench rebuild         pure fold and a full rebuild, beside COPY TO of the log
#   ledger bench audit           the audit, beside COPY TO
#   ledger bench project         the projector's start from a snapshot
#   ledger bench rebuild / audit --ids store: both again on the same history with ids as long as
#                                the stores' (their peak memory)
#   tools/bench-service.sh       the HTTP service at 64 connections (LEDGER_BENCH_ONLY=events)
#   ledger bench fold            first and last, a canary: the pure fold alone (no database, the
#                                same code whatever the run), to tell a slow host from a slow build
#
# Options (environment):
#   LEDGER_BENCH_EVENTS (default 10000000) and LEDGER_BENCH_USERS (default 200000): the generated log
#     of the projection benchmarks (made once, then reused);
#   LEDGER_BENCH_LOG_SCHEMA (default: the benchmarks' own, bench_rebuild): the schema that log is in;
#   LEDGER_BENCH_STORE_SCHEMA (default bench_store): the schema of the log with the stores' ids;
#   LEDGER_BENCH_SECONDS (default 10) per append and HTTP measurement;
#   MESSAGE_DB: a checkout of Message DB (github.com/message-db/message-db); without it the peer's
#     row says so and its goal is not judged;
#   LEDGER_BENCH_OUT (default: a new directory under /tmp): where each benchmark's output is kept;
#   LEDGER_BIN (default: builds and uses .build/release/ledger); LEDGER_DATABASE_URL (default: the
#     private cluster under .ledger/).
set -euo pipefail
cd "$(dirname "$0")/.."
events=${LEDGER_BENCH_EVENTS:-10000000}
users=${LEDGER_BENCH_USERS:-200000}
seconds=${LEDGER_BENCH_SECONDS:-10}
if [ -n "${LEDGER_BIN:-}" ]; then
  build="$LEDGER_BIN"
else
  build="a release build of $(git describe --always --dirty 2>/dev/null || echo "an unknown commit")"
  swift build -c release --product ledger >&2
  LEDGER_BIN=.build/release/ledger
fi
export LEDGER_BIN
if [ -z "${LEDGER_DATABASE_URL:-}" ]; then LEDGER_DATABASE_URL="$("$LEDGER_BIN" db start)"; fi
export LEDGER_DATABASE_URL
out=${LEDGER_BENCH_OUT:-$(mktemp -d /tmp/ledger-goals.XXXXXX)}
mkdir -p "$out"
log_options=(--events "$events" --users "$users")
if [ -n "${LEDGER_BENCH_LOG_SCHEMA:-}" ]; then log_options+=(--schema "$LEDGER_BENCH_LOG_SCHEMA"); fi

step() { # name, command...: runs it, keeps its output in $out/name.txt, stops the script if it fails
  local name=$1; shift
  echo "bench-goals: $name ($*)" >&2
  if ! "$@" > "$out/$name.txt" 2> "$out/$name.err"; then
    echo "bench-goals: $name failed; its output is in $out/$name.txt and $out/$name.err:" >&2
    tail -20 "$out/$name.err" >&2
    exit 1
  fi
}
step canary-before "$LEDGER_BIN" bench fold --rounds 3
step append "$LEDGER_BIN" bench append --seconds "$seconds"
step sql-append env LEDGER_BENCH_SECONDS="$seconds" tools/bench-sql-append.sh
step rebuild "$LEDGER_BIN" bench rebuild "${log_options[@]}"
step audit "$LEDGER_BIN" bench audit "${log_options[@]}"
step project "$LEDGER_BIN" bench project "${log_options[@]}"
# The same history with ids as long as the stores' (on the heap, where the short ones lie inline),
# in a schema of its own: the memory a view takes depends on them.
store_options=(--events "$events" --users "$users" --ids store --schema "${LEDGER_BENCH_STORE_SCHEMA:-bench_store}")
step rebuild-store "$LEDGER_BIN" bench rebuild "${store_options[@]}"
step audit-store "$LEDGER_BIN" bench audit "${store_options[@]}"
step service env LEDGER_BENCH_ONLY=events LEDGER_BENCH_SECONDS="$seconds" tools/bench-service.sh
step canary-after "$LEDGER_BIN" bench fold --rounds 3

# Readers of the outputs above. Each stops the script, naming the file, when its figure is missing.
need() { # value, what, file
  [ -n "$1" ] || { echo "bench-goals: no $2 in $out/$3.txt (did its format change?)" >&2; exit 1; }
  echo "$1"
}
markdown_cell() { # file, row prefix (second cell), cell number (1 = the first cell)
  awk -F '|' -v p="$2" -v n="$3" '{ c = $2; gsub(/^ +| +$/, "", c) } index(c, p) == 1 { v = $(n + 1); gsub(/^ +| +$/, "", v); print v; exit }' "$out/$1.txt"
}
text_cell() { # file, row prefix, column number (columns are separated by two spaces or more)
  awk -v p="$2" -v n="$3" 'index($0, p) == 1 { split($0, f, /  +/); print f[n]; exit }' "$out/$1.txt"
}
number() { local v=${1//,/}; echo "${v%%[!0-9.]*}"; }   # the first number of a cell, without grouping
seconds_of() { sed 's/ s.*//' <<< "$1"; }                   # "4.1 s = ..." -> 4.1

# A figure from a file's markdown row or text row (named by its prefix), as a number or in seconds.
md() { need "$(number "$(markdown_cell "$1" "$2" "$3")")" "$4" "$1"; }       # file prefix cell what
tx() { need "$(number "$(text_cell "$1" "$2" "$3")")" "$4" "$1"; }           # file prefix column what
txs() { need "$(seconds_of "$(text_cell "$1" "$2" "$3")")" "$4" "$1"; }      # file prefix column what

a_ledger=$(md append '(a)' 2 "(a) row"); a_base=$(md append '(a)' 3 "(a) baseline")
bp_ledger=$(md append "(b')" 2 "(b') row"); bp_base=$(md append "(b')" 3 "(b') baseline")
bq_ledger=$(md append "(b'')" 2 "(b'') row"); bq_base=$(md append "(b'')" 3 "(b'') baseline")
br_ledger=$(md append "(b''')" 2 "(b''') row"); br_base=$(md append "(b''')" 3 "(b''') baseline")
ar_ledger=$(md append "(a'')" 2 "(a'') row"); ar_base=$(md append "(a'')" 3 "(a'') baseline")
c_ledger=$(md append '(c) batches of 1000' 2 "batches of 1000 row")
c_base=$(md append '(c) batches of 1000' 3 "batches of 1000 baseline")
s_ledger=$(md sql-append 16 2 "16-writer row"); s_base=$(md sql-append 16 4 "16-writer raw INSERT")
sc_ledger=$(md sql-append 16 10 "16-writer at-commit cell")
m_peer=$(markdown_cell sql-append 16 13)
fold=$(tx rebuild 'pure fold (' 2 "pure fold row"); fold_copy=$(tx rebuild 'pure fold (' 3 "pure fold's COPY TO rate")
rebuild=$(txs rebuild 'full rebuild' 2 "full rebuild row"); rebuild_copy=$(txs rebuild 'full rebuild' 3 "rebuild's COPY TO")
rebuild_peak=$(tx rebuild 'peak RSS' 2 "rebuild's peak RSS")
audit=$(txs audit 'audit (' 2 "audit row"); audit_copy=$(txs audit 'audit (' 3 "audit's COPY TO")
audit_peak=$(tx audit 'peak RSS' 2 "audit's peak RSS")
rebuild_store=$(txs rebuild-store 'full rebuild' 2 "full rebuild row"); rebuild_store_peak=$(tx rebuild-store 'peak RSS' 2 "rebuild's peak RSS")
audit_store=$(txs audit-store 'audit (' 2 "audit row"); audit_store_peak=$(tx audit-store 'peak RSS' 2 "audit's peak RSS")
snap=$(txs project 'projector start from the snapshot' 2 "start from a snapshot")
snap_peak=$(need "$(sed 's/.*peak RSS \([0-9]*\).*/\1/' <<< "$(text_cell project 'projector start from the snapshot' 2)")" "snapshot start's peak" project)
http=$(need "$(awk -F '|' '$3 ~ /^ *64 *$/ { gsub(/ /, "", $4); print $4; exit }' "$out/service.txt")" "64-connection row" service)
http_p99=$(need "$(awk -F '|' '$3 ~ /^ *64 *$/ { gsub(/ /, "", $6); print $6; exit }' "$out/service.txt")" "64-connection p99" service)

best_round() { # file: the best round's rate of a bench fold output
  need "$(awk '/^round / { v = $3; gsub(/,/, "", v); if (v + 0 > best) best = v + 0 } END { if (best) print best }' "$out/$1.txt")" "round" "$1"
}
canary_before=$(best_round canary-before); canary_after=$(best_round canary-after)

calc() { awk "BEGIN { $1 }"; }
grouped() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<< "${1%.*}"; }   # 2000000 -> 2,000,000
pct() { calc "printf \"%d %%\", $1 * 100 / ($2 > 0 ? $2 : 1)"; }
times() { calc "printf \"%.2fx\", $1 / ($2 > 0 ? $2 : 1)"; }
met() { if calc "exit !($1)"; then echo "met"; else echo "**not met**"; fi }
per10m=$(calc "printf \"%.1f\", $snap * 10000000 / $events")

echo "Scale goals, one run of $build on $(nproc) cores, $(date -u +%Y-%m-%d); log of $(grouped "$events") facts, $(grouped "$users") users; $seconds s a measurement."
echo
echo "| goal | ledger | baseline, same run | ratio | goal | |"
echo "|---|---:|---:|---:|---:|---|"
echo "| audit of the log | $audit s | COPY TO $audit_copy s | $(times "$audit" "$audit_copy") the time | <= 1.00x | $(met "$audit <= $audit_copy") |"
echo "| rebuild of every read model | $rebuild s | COPY TO $rebuild_copy s | $(times "$rebuild" "$rebuild_copy") the time | <= 1.50x | $(met "$rebuild <= 1.5 * $rebuild_copy") |"
echo "| peak memory, audit / rebuild, default settings | $audit_peak / $rebuild_peak MiB | | | <= 256 MiB | $(met "$audit_peak <= 256 && $rebuild_peak <= 256") |"
echo "| the same, ids as long as the stores' (audit / rebuild $audit_store / $rebuild_store s) | $audit_store_peak / $rebuild_store_peak MiB | | | <= 256 MiB | $(met "$audit_store_peak <= 256 && $rebuild_store_peak <= 256") |"
echo "| projector start from a snapshot | $snap s ($per10m s per 10 M facts), peak $snap_peak MiB | | | <= 5 s per 10 M facts | $(met "$per10m <= 5") |"
echo "| pure fold | $(grouped "$fold") facts/s | COPY TO $(grouped "$fold_copy") rows/s | $(times "$fold" "$fold_copy") the rate | >= 2,000,000 facts/s | $(met "$fold >= 2000000") |"
echo "| append, 1 event a commit, 1 client | $(grouped "$a_ledger") ev/s | INSERT $(grouped "$a_base") ev/s | $(pct "$a_ledger" "$a_base") | >= 50 % | $(met "$a_ledger * 2 >= $a_base") |"
if [ -n "$m_peer" ]; then
  echo "| append, 16 independent writers (append_events, pgbench) | $(grouped "$s_ledger") ev/s | INSERT $(grouped "$s_base") ev/s; Message DB $(grouped "$m_peer") ev/s, $(pct "$m_peer" "$s_base") | $(pct "$s_ledger" "$s_base") | >= Message DB's $(pct "$m_peer" "$s_base") | $(met "$s_ledger >= $m_peer") |"
else
  echo "| append, 16 independent writers (append_events, pgbench) | $(grouped "$s_ledger") ev/s | INSERT $(grouped "$s_base") ev/s; Message DB not run (set MESSAGE_DB) | $(pct "$s_ledger" "$s_base") | >= Message DB's | not judged |"
fi
echo "| the same, append_events_at_commit | $(grouped "$sc_ledger") ev/s | INSERT $(grouped "$s_base") ev/s | $(pct "$sc_ledger" "$s_base") | | |"
echo "| append, 16 independent stores in one process (library) | $(grouped "$bp_ledger") ev/s | INSERT $(grouped "$bp_base") ev/s | $(pct "$bp_ledger" "$bp_base") | | |"
echo "| the same, answered at commit (library) | $(grouped "$bq_ledger") ev/s | INSERT $(grouped "$bq_base") ev/s | $(pct "$bq_ledger" "$bq_base") | | |"
echo "| the same, a sealer elected among the stores (library) | $(grouped "$br_ledger") ev/s | INSERT $(grouped "$br_base") ev/s | $(pct "$br_ledger" "$br_base") | | |"
echo "| append, 1 client answered at commit, a sealer (library) | $(grouped "$ar_ledger") ev/s | INSERT $(grouped "$ar_base") ev/s | $(pct "$ar_ledger" "$ar_base") | | |"
echo "| append, batches of 1,000 | $(grouped "$c_ledger") ev/s | COPY $(grouped "$c_base") ev/s | $(pct "$c_ledger" "$c_base") | >= 70 % | $(met "$c_ledger * 10 >= $c_base * 7") |"
echo "| HTTP, one fact a POST, 64 connections | $(grouped "$http") facts/s, p99 $http_p99 ms | | | >= 8,000 facts/s, p99 <= 20 ms | $(met "$http >= 8000 && $http_p99 <= 20") |"
echo
echo "Host canary (\`ledger bench fold\`, no database, best of 3 rounds): $(grouped "$canary_before") facts/s before the benchmarks, $(grouped "$canary_after") after. The fold's code is the same in every run: when these move between runs, or between the two, the host's speed moved with them."
echo
echo "Each benchmark's whole output: $out"
