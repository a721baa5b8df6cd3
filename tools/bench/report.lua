-- Shared by the benchmark scripts: prints one machine-readable line at the end of a wrk run.
local report = {}
function report.done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f errors=%d non2xx=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000, bad, summary.errors.status))
  -- Every latency seen (microseconds and how many), for a script that merges several wrk runs.
  local path = os.getenv("LEDGER_BENCH_HISTOGRAM")
  if path then
    local f = assert(io.open(path, "w"))
    for i = 1, #latency do
      local us, n = latency(i)  -- the i-th latency seen, and how many requests took it
      f:write(string.format("%d %d\n", us, n))
    end
    f:close()
  end
end
return report
