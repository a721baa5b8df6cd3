-- POST /v1/notifications/googleplay: distinct Pub/Sub pushes with the push subscription's OIDC token
-- (verified on every request).
package.path = package.path .. ";" .. (os.getenv("LEDGER_BENCH_LUA") or "tools/bench") .. "/?.lua"
local report = require("report")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local bodies, token, i = nil, nil, 0
function init(args)
  bodies = {}
  for line in io.lines(os.getenv("LEDGER_BENCH_GOOGLE_BODIES")) do bodies[#bodies + 1] = line end
  token = io.open(os.getenv("LEDGER_BENCH_GOOGLE_TOKEN")):read("*a")
  i = tid - 1
end
function request()
  i = i + tonumber(os.getenv("LEDGER_BENCH_THREADS") or "2")
  return wrk.format("POST", "/v1/notifications/googleplay",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, bodies[(i % #bodies) + 1])
end
done = report.done
