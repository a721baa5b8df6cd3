-- POST /v1/events: one new OrderCreated fact per request (a stream of its own, expectedVersion
-- no-stream, an Idempotency-Key), so every request is a full append with every guarantee.
package.path = package.path .. ";" .. (os.getenv("LEDGER_BENCH_LUA") or "tools/bench") .. "/?.lua"
local report = require("report")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local counter = 0
local run = os.getenv("LEDGER_BENCH_RUN") or "r"
-- LEDGER_BENCH_RESPOND_ASYNC=1: each request answered at its commit (Prefer: respond-async).
local prefer = os.getenv("LEDGER_BENCH_RESPOND_ASYNC") == "1" and "respond-async" or nil
function request()
  counter = counter + 1
  local id = string.format("%s-%d-%d", run, tid, counter)
  local body = '{"stream":"order:' .. id .. '","type":"OrderCreated","payload":{"orderId":"' .. id ..
    '","userId":"u-' .. id .. '","channel":"appstore","productId":"coins_100","amount":600,"currency":"CNY"},' ..
    '"occurredAt":"2026-03-31T08:15:00Z","idempotencyKey":"order:' .. id .. ':created","expectedVersion":"no-stream"}\n'
  return wrk.format("POST", "/v1/events", {
    ["Authorization"] = "Bearer " .. os.getenv("LEDGER_BENCH_TOKEN"),
    ["Content-Type"] = "application/x-ndjson",
    ["Idempotency-Key"] = id,
    ["Prefer"] = prefer,
  }, body)
end
done = report.done
