-- POST /v1/notifications/appstore: distinct signed notifications from the fixture file (three JWS
-- and their chains verified per request); each thread takes its own share, in turn.
package.path = package.path .. ";" .. (os.getenv("LEDGER_BENCH_LUA") or "tools/bench") .. "/?.lua"
local report = require("report")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local bodies = nil
local i = 0
function init(args)
  bodies = {}
  for line in io.lines(os.getenv("LEDGER_BENCH_BODIES")) do bodies[#bodies + 1] = line end
  i = tid - 1
end
function request()
  i = i + tonumber(os.getenv("LEDGER_BENCH_THREADS") or "2")
  local body = bodies[(i % #bodies) + 1]
  return wrk.format("POST", "/v1/notifications/appstore", {["Content-Type"] = "application/json"}, body)
end
done = report.done
