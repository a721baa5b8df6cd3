-- POST /v1/notifications/wechatpay: distinct signed notifications (signature, window, replay check
-- and AES-256-GCM decryption on every request). A line used twice is a replay (409), counted as non-2xx.
package.path = package.path .. ";" .. (os.getenv("LEDGER_BENCH_LUA") or "tools/bench") .. "/?.lua"
local report = require("report")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local rows, i = nil, 0
function init(args)
  rows = {}
  for line in io.lines(os.getenv("LEDGER_BENCH_WECHAT")) do
    local ts, nonce, sig, serial, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    rows[#rows + 1] = {ts = ts, nonce = nonce, sig = sig, serial = serial, body = body}
  end
  i = tid - 1
end
function request()
  i = i + tonumber(os.getenv("LEDGER_BENCH_THREADS") or "2")
  local r = rows[(i % #rows) + 1]
  return wrk.format("POST", "/v1/notifications/wechatpay", {
    ["Content-Type"] = "application/json", ["Wechatpay-Timestamp"] = r.ts, ["Wechatpay-Nonce"] = r.nonce,
    ["Wechatpay-Signature"] = r.sig, ["Wechatpay-Serial"] = r.serial}, r.body)
end
done = report.done
