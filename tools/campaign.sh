#!/usr/bin/env bash
# A fault campaign against a private PostgreSQL of its own (under /tmp; no other server is touched):
# racing writers append batches with idempotency keys through `ledger append` (each retried until it
# succeeds, as a service would), a tail follows the log with `ledger read --follow`, and every cycle
# kills -9 one running appender and then the server itself (the postmaster and its children, by
# pid), and restarts the server. At the end it compares what was acknowledged, what is stored and
# what the tail printed:
#
#   lost      acknowledged events not stored at their acknowledged position
#   doubled   events stored twice (by id or key), acknowledged at two positions, or printed twice by the tail
#   skipped   positions the tail never printed, or a gap in the stored positions
#
# and exits 1 if any is not 0 (or the chain does not verify).
#
# With --failover, two private clusters on their own sockets, a primary and its synchronous hot
# standby (`ledger db start --standby-of`); every client is given both in one URL
# (`host=a,b target_session_attrs=read-write`). Each cycle kills -9 the primary's postmaster and
# backends instead, promotes the standby (`ledger db promote`), and makes the dead one a new
# synchronous standby of it: a failover per cycle. The head anchored after the first cycle must
# still verify at the end.
#
# With --http, the writers are HTTP clients of `ledger serve` (curl, each batch with its own
# Idempotency-Key, retried until answered 200 or 201), and each cycle kills -9 the service (then
# starts it again) besides the server; with --failover too, the service follows the new primary.
#
# With --slow-clients N (with --http), N more clients meanwhile hold connections open, each
# sending a request's head a byte every half second (at most 60 bytes): the service must cut every
# one off (its header deadline) while the writers' appends go on.
#
# With --async (and --failover) the standby is asynchronous: what the campaign then reports lost is
# what asynchronous replication loses on a failover.
#
# Usage: tools/campaign.sh [--short | --long] [--failover [--async]] [--http] [--slow-clients N] [--cycles N] [--writers N] [--batches N] [--batch-size N] [--seed N]
#   --short  3 cycles, 3 writers, 4 batches of 5 per writer per cycle (run by the test suite)
#   --long   40 cycles, 6 writers, 10 batches of 20 (by hand; a few minutes)
# CAMPAIGN_STUCK_AFTER=S (default 120): a batch not acknowledged, or a server not started again, after
# S seconds stops the campaign with the last errors (exit 1). CAMPAIGN_KEEP=1 keeps its directory.
set -euo pipefail
cd "$(dirname "$0")/.."

cycles=10; writers=4; batches=6; size=10; seed=$$; failover=0; http=0; slow=0; replication=()
while [ $# -gt 0 ]; do
  case "$1" in
    --failover) failover=1 ;;
    --async) replication=(--async) ;;
    --http) http=1 ;;
    --slow-clients) slow="$2"; shift ;;
    --short) cycles=3; writers=3; batches=4; size=5 ;;
    --long) cycles=40; writers=6; batches=10; size=20 ;;
    --cycles) cycles="$2"; shift ;;
    --writers) writers="$2"; shift ;;
    --batches) batches="$2"; shift ;;
    --batch-size) size="$2"; shift ;;
    --seed) seed="$2"; shift ;;
    *) echo "usage: $0 [--short|--long] [--failover] [--http] [--slow-clients N] [--cycles N] [--writers N] [--batches N] [--batch-size N] [--seed N]" >&2; exit 64 ;;
  esac
  shift
done
RANDOM=$seed

ledger="${LEDGER_BIN:-.build/debug/ledger}"
[ -x "$ledger" ] || { echo "campaign: $ledger is not built (swift build)" >&2; exit 78; }
ledger="$(cd "$(dirname "$ledger")" && pwd)/$(basename "$ledger")"
work="$(mktemp -d /tmp/ledger-campaign-XXXXXX)"
chmod 755 "$work"
export LEDGER_HOME="$work/cluster"
unset LEDGER_DATABASE_URL LEDGER_WRITER_DATABASE_URL LEDGER_READER_DATABASE_URL
export LEDGER_SCHEMA=campaign
tail_pid=""
pids=()
# A batch not acknowledged, or a server not started again, after this many seconds is stuck: the
# campaign says where and stops, rather than hang until the test's time limit kills it silently.
stuck_after="${CAMPAIGN_STUCK_AFTER:-120}"
# True, after saying what is stuck and the last lines of `file`, once `started` (in $SECONDS) is
# more than stuck_after seconds ago.
stuck() {
  local started=$1 what=$2 file=$3
  (( SECONDS - started > stuck_after )) || return 1
  log "stuck: $what after $((SECONDS - started)) s; the last lines of $(basename "$file"):"
  tail -n 20 "$file" >&2 || true
}
serve_pid=""
cleanup() {
  [ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill -9 "$serve_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  "$ledger" db stop >/dev/null 2>&1 || true
  if [ "$failover" = 1 ]; then for h in "$work/a" "$work/b"; do LEDGER_HOME="$h" "$ledger" db stop >/dev/null 2>&1 || true; done; fi
  if [ -n "${CAMPAIGN_KEEP:-}" ]; then echo "campaign: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

log() { echo "campaign: $*" >&2; }
if [ "$failover" = 1 ]; then
  # Two clusters: a primary and its synchronous standby; clients follow whichever takes writes.
  primary="$work/a"; standby="$work/b"
  LEDGER_HOME="$primary" "$ledger" db start >/dev/null 2>"$work/start.log" || { cat "$work/start.log" >&2; exit 69; }
  LEDGER_HOME="$primary" "$ledger" migrate >/dev/null 2>&1
  LEDGER_HOME="$standby" "$ledger" db start ${replication[@]+"${replication[@]}"} --standby-of "$(LEDGER_HOME="$primary" "$ledger" db url)" >/dev/null 2>>"$work/start.log" \
    || { cat "$work/start.log" >&2; exit 69; }
  export LEDGER_DATABASE_URL="postgresql:///ledger?host=$work/a/run,$work/b/run&port=5432,5432&target_session_attrs=read-write&user=ledger"
  # (LEDGER_HOME stays $work/cluster, never started: no command here may reach another cluster.)
else
  "$ledger" db start >/dev/null 2>"$work/start.log" || { cat "$work/start.log" >&2; exit 69; }
  "$ledger" migrate >/dev/null 2>&1
fi

# The tail, from the start, for the whole campaign (it must survive every server kill).
"$ledger" read --follow > "$work/tail.jsonl" 2> "$work/tail.err" &
tail_pid=$!

# One batch file per writer, cycle and batch: unique event ids and idempotency keys.
python3 - "$work" "$cycles" "$writers" "$batches" "$size" "$http" <<'PY'
import sys, uuid
work, cycles, writers, batches, size, http = sys.argv[1], *map(int, sys.argv[2:])
for c in range(cycles):
    for w in range(writers):
        for b in range(batches):
            with open(f"{work}/batch-{c}-{w}-{b}.jsonl", "w") as f:
                for i in range(size):
                    key = f"campaign:{c}:{w}:{b}:{i}"
                    eid = uuid.uuid5(uuid.NAMESPACE_URL, key)
                    if http:
                        # Facts the service takes (it reads the fact catalogue, no unknown types).
                        order = f"c{c}-w{w}-b{b}-i{i}"
                        f.write(f'{{"eventId":"{eid}","stream":"order:{order}","type":"OrderCreated",'
                                f'"payload":{{"orderId":"{order}","userId":"u{w}","channel":"appstore","productId":"coins","amount":600,"currency":"CNY"}},'
                                f'"occurredAt":"2026-03-31T08:15:00Z","idempotencyKey":"order:{order}:created","expectedVersion":"no-stream"}}\n')
                    else:
                        f.write(f'{{"eventId":"{eid}","stream":"campaign:{w}:{i % 3}","type":"CampaignEvent",'
                                f'"payload":{{"cycle":{c},"writer":{w},"batch":{b},"i":{i}}},'
                                f'"occurredAt":"2026-03-31T08:15:00Z","idempotencyKey":"{key}"}}\n')
PY

# A writer: its batches in order, each retried until `ledger append` exits 0. Every line an
# appender printed counts as acknowledged, even if the appender was killed afterwards.
writer() {
  local c=$1 w=$2 b attempt started
  for ((b = 0; b < batches; b++)); do
    attempt=0
    started=$SECONDS
    while :; do
      attempt=$((attempt + 1))
      if "$ledger" append --allow-unknown-types --file "$work/batch-$c-$w-$b.jsonl" \
          >> "$work/ack-$c-$w-$b.$attempt.jsonl" 2>> "$work/writer-$c-$w.err"; then break; fi
      if stuck "$started" "writer $w of cycle $((c + 1)), batch $b, not acknowledged in $attempt attempts" "$work/writer-$c-$w.err"; then
        return 1
      fi
      sleep 0.2
    done
  done
}

# An HTTP writer: its batches in order, each POSTed with its own Idempotency-Key until the service
# answers 200 or 201; the events of a whole answer are acknowledged.
writer_http() {
  local c=$1 w=$2 b attempt started code
  for ((b = 0; b < batches; b++)); do
    attempt=0
    started=$SECONDS
    while :; do
      attempt=$((attempt + 1))
      code="$(curl -s -m 60 -o "$work/answer-$c-$w-$b.$attempt.json" -w '%{http_code}' -H "Authorization: Bearer $token" \
        -H "Idempotency-Key: campaign:$c:$w:$b" -H 'Content-Type: application/x-ndjson' \
        --data-binary @"$work/batch-$c-$w-$b.jsonl" "http://127.0.0.1:$port/v1/events" 2>> "$work/writer-$c-$w.err" || true)"
      if [ "$code" = 200 ] || [ "$code" = 201 ]; then
        python3 -c 'import json, sys; [print(json.dumps(e)) for e in json.load(open(sys.argv[1]))["events"]]' \
          "$work/answer-$c-$w-$b.$attempt.json" > "$work/ack-$c-$w-$b.$attempt.jsonl"
        break
      fi
      echo "attempt $attempt: HTTP $code" >> "$work/writer-$c-$w.err"
      if stuck "$started" "HTTP writer $w of cycle $((c + 1)), batch $b, not acknowledged in $attempt attempts" "$work/writer-$c-$w.err"; then
        return 1
      fi
      sleep 0.2
    done
  done
}

# `ledger serve` on $port, started again until it listens (the database may be down or failing over).
start_service() {
  local started=$SECONDS
  while :; do
    "$ledger" serve --port "$port" --tokens-file "$work/tokens" >> "$work/serve.log" 2>&1 &
    serve_pid=$!
    for _ in $(seq 1 100); do
      curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
      kill -0 "$serve_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$serve_pid" 2>/dev/null || true
    if stuck "$started" "the service does not start" "$work/serve.log"; then exit 1; fi
    sleep 0.5
  done
}

server_pids() {
  local pm home="${1:-${LEDGER_HOME:-}}"
  pm="$(head -1 "$home/postgres/postmaster.pid" 2>/dev/null || true)"
  [ -n "$pm" ] || return 0
  echo "$pm"; pgrep -P "$pm" || true
}

appender_kills=0; server_kills=0; failovers=0; service_kills=0
if [ "$http" = 1 ]; then
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$ledger" serve token --name campaign --scopes append,read > "$work/token.txt"
  token="$(sed -n 's/^token: //p' "$work/token.txt")"
  sed -n 's/^line: *//p' "$work/token.txt" > "$work/tokens"
  start_service
fi

for ((c = 0; c < cycles; c++)); do
  pids=()
  if [ "$http" = 1 ]; then
    for ((w = 0; w < writers; w++)); do writer_http "$c" "$w" & pids+=($!); done
    # Kill -9 the service mid-load, and start it again.
    sleep "0.$((RANDOM % 5 + 1))"
    kill -9 "$serve_pid" 2>/dev/null && service_kills=$((service_kills + 1))
    wait "$serve_pid" 2>/dev/null || true
    start_service
  else
    for ((w = 0; w < writers; w++)); do writer "$c" "$w" & pids+=($!); done
    # Kill -9 one running appender (a child of a writer loop, by pid).
    sleep "0.$((RANDOM % 5 + 1))"
    for p in "${pids[@]}"; do
      victim="$(pgrep -P "$p" | head -1 || true)"
      if [ -n "$victim" ]; then kill -9 "$victim" 2>/dev/null && appender_kills=$((appender_kills + 1)); break; fi
    done
  fi
  # Then kill -9 the server (postmaster and backends) and start it again (crash recovery); with
  # --failover, kill the primary, promote its standby and make the dead one its new standby.
  sleep "0.$((RANDOM % 5 + 1))"
  if [ "$failover" = 1 ]; then victims="$(server_pids "$primary")"; else victims="$(server_pids)"; fi
  if [ -n "$victims" ]; then
    kill -9 $victims 2>/dev/null || true
    server_kills=$((server_kills + 1))
    for _ in $(seq 1 100); do alive=0; for v in $victims; do kill -0 "$v" 2>/dev/null && alive=1; done; [ $alive = 0 ] && break; sleep 0.1; done
  fi
  started=$SECONDS
  if [ "$failover" = 1 ]; then
    LEDGER_HOME="$standby" "$ledger" db promote >/dev/null 2>>"$work/restart.log" || { cat "$work/restart.log" >&2; exit 1; }
    rm -rf "$primary/postgres"
    until LEDGER_HOME="$primary" "$ledger" db start ${replication[@]+"${replication[@]}"} --standby-of "$(LEDGER_HOME="$standby" "$ledger" db url)" >/dev/null 2>>"$work/restart.log"; do
      if stuck "$started" "the new standby does not start" "$work/restart.log"; then exit 1; fi
      rm -rf "$primary/postgres"; sleep 0.5
    done
    t="$primary"; primary="$standby"; standby="$t"
    failovers=$((failovers + 1))
  else
    until "$ledger" db start >/dev/null 2>>"$work/restart.log"; do
      if stuck "$started" "the server does not start again" "$work/restart.log"; then exit 1; fi
      sleep 0.5
    done
  fi
  for p in "${pids[@]}"; do wait "$p" || { log "a writer of cycle $((c + 1)) is stuck (above)"; exit 1; }; done
  # The head after the first cycle, kept outside the database: it must still verify at the end.
  [ "$c" = 0 ] && "$ledger" anchor > "$work/anchor.json" 2>>"$work/anchor.err"
  log "cycle $((c + 1))/$cycles done"
done

# Let the tail reach the head, then stop it.
head="$("$ledger" read | wc -l)"
# (At most 60 s: a tail still behind then has skipped what it has not printed, and is counted so.)
for _ in $(seq 1 300); do
  [ "$(wc -l < "$work/tail.jsonl")" -ge "$head" ] || ! kill -0 "$tail_pid" 2>/dev/null && break
  sleep 0.2
done
kill -TERM "$tail_pid" 2>/dev/null || true  # (a background job ignores SIGINT)
wait "$tail_pid" 2>/dev/null || true
tail_pid=""
"$ledger" read > "$work/stored.jsonl"
chain=0; "$ledger" verify-chain --anchor "$work/anchor.json" >/dev/null 2>"$work/verify.err" || { chain=1; cat "$work/verify.err" >&2; }
[ "$failover" = 1 ] && log "failovers $failovers (each: the primary killed -9, its $([ ${#replication[@]} = 0 ] && echo synchronous || echo ASYNCHRONOUS) standby promoted, a new standby made)"
[ "$http" = 1 ] && log "HTTP writers; service kills $service_kills"
slow_ok=0
if [ "$http" = 1 ] && [ "$slow" -gt 0 ]; then
  # Slow clients against the running service: each opens a connection and sends a head a byte
  # every 0.5 s, at most 60 bytes (30 s), while a well-behaved client asks /healthz each time.
  python3 - "$port" "$slow" > "$work/slow.txt" 2>&1 <<'PY' || true
import socket, sys, time, urllib.request
port, n = int(sys.argv[1]), int(sys.argv[2])
conns, opened = [], time.time()
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    s.send(b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"); conns.append(s)
cut, longest, open_, asked, answered = 0, 0.0, set(range(n)), 0, 0
for _ in range(60):
    time.sleep(0.5)
    asked += 1
    try: answered += urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status == 200
    except OSError: pass
    for i in list(open_):
        try:
            if conns[i].recv(1, socket.MSG_PEEK) == b"": raise ConnectionError
        except BlockingIOError:
            try: conns[i].send(b"X"); continue
            except OSError: pass
        except OSError: pass
        open_.discard(i); cut += 1; longest = max(longest, time.time() - opened)
    if not open_: break
print(f"slow clients {n}, cut off by the service {cut}, the last after {longest:.1f} s; /healthz answered {answered} of {asked} meanwhile")
PY
  log "$(cat "$work/slow.txt")"
  grep -q "slow clients $slow, cut off by the service $slow," "$work/slow.txt" || slow_ok=1
fi

cat > "$work/analyse.py" <<'PY'
import glob, json, sys
work, cycles, writers, akills, skills, chain = sys.argv[1], *map(int, sys.argv[2:7])
inject = sys.argv[7] if len(sys.argv) > 7 else ""
def lines(path):
    out = []
    for l in open(path, encoding="utf-8"):
        l = l.strip()
        if l:
            try: out.append(json.loads(l))
            except ValueError: pass  # a line cut by kill -9
    return out
acked = {}   # event id -> set of acknowledged positions
for path in glob.glob(f"{work}/ack-*.jsonl"):
    for a in lines(path):
        acked.setdefault(a["eventId"], set()).add(a["position"])
stored = lines(f"{work}/stored.jsonl")
tail = lines(f"{work}/tail.jsonl")
# Self-check of this analysis: a fault injected into what was read must be reported.
if inject == "lose": stored = stored[:len(stored) // 2] + stored[len(stored) // 2 + 1:]
if inject == "double": tail = tail + tail[-1:]
if inject == "skip": tail = tail[:len(tail) // 2] + tail[len(tail) // 2 + 1:]
by_id, by_key = {}, {}
for e in stored:
    by_id.setdefault(e["eventId"], []).append(e["position"])
    if e.get("idempotencyKey"): by_key.setdefault(e["idempotencyKey"], []).append(e["position"])
positions = [e["position"] for e in stored]
head = max(positions, default=0)
lost = sum(1 for i, ps in acked.items() if by_id.get(i, [None])[0] not in ps)
doubled = sum(len(v) - 1 for v in by_id.values()) + sum(len(v) - 1 for v in by_key.values()) \
        + sum(len(ps) - 1 for ps in acked.values())
tail_positions = [e["position"] for e in tail]
doubled += len(tail_positions) - len(set(tail_positions))
skipped = len(set(range(1, head + 1)) - set(tail_positions)) + len(set(range(1, head + 1)) - set(positions))
if tail_positions != sorted(tail_positions): doubled += 1
if inject:
    sys.exit(1 if lost or doubled or skipped else 0)
print(f"campaign: cycles {cycles}, writers {writers}, appender kills {akills}, server kills {skills}")
print(f"campaign: acknowledged {len(acked)}, stored {len(stored)}, tailed {len(tail)}, head {head}, chain {'intact' if chain == 0 else 'BROKEN'}")
print(f"campaign: lost {lost}, doubled {doubled}, skipped {skipped}")
sys.exit(1 if lost or doubled or skipped or chain or len(stored) != len(acked) else 0)
PY
# The analysis must see an injected loss, double and skip (else its zeros would mean nothing).
for fault in lose double skip; do
  if python3 "$work/analyse.py" "$work" "$cycles" "$writers" "$appender_kills" "$server_kills" "$chain" "$fault"; then
    echo "campaign: self-check FAILED: an injected '$fault' was not reported" >&2; exit 70
  fi
done
echo "campaign: self-check: an injected loss, double and skip are each reported"
python3 "$work/analyse.py" "$work" "$cycles" "$writers" "$appender_kills" "$server_kills" "$chain" || exit 1
[ "$slow_ok" = 0 ] || { echo "campaign: a slow client was not cut off" >&2; exit 1; }
