#!/usr/bin/env bash
# Checks an HTML audit report in a real headless browser (Debian's chromium): it renders (a
# screenshot is taken and must not be blank), and the numbers it shows equal the JSON report of the
# same audit. Usage: tools/check-report.sh REPORT.html REPORT.json [SCREENSHOT.png]
set -euo pipefail
html="$1"; json="$2"; png="${3:-${html%.html}.png}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "check-report: chromium is not installed (tools/ensure-deps.sh chromium installs it)" >&2
  exit 78
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
flags=(--headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run --user-data-dir="$work/profile"
       --disable-extensions --disable-background-networking --hide-scrollbars)
abs="$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$abs" > "$work/dom.html" 2> "$work/chromium.log" || {
  echo "check-report: chromium could not render $html:" >&2; tail -5 "$work/chromium.log" >&2; exit 1; }
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$png" "file://$abs" >> "$work/chromium.log" 2>&1 || {
  echo "check-report: chromium could not take a screenshot of $html:" >&2; tail -5 "$work/chromium.log" >&2; exit 1; }
python3 - "$work/dom.html" "$json" "$png" <<'PY'
import json, sys
from html.parser import HTMLParser

dom_path, json_path, png_path = sys.argv[1:4]
report = json.load(open(json_path, encoding="utf-8"))

class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.total = None; self.kinds = {}; self.findings = []; self.severity = {}; self.money = {}; self.svgs = 0; self.title = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg": self.svgs += 1
        if a.get("id") == "total-findings": self.total = int(a["data-value"])
        if "data-severity" in a: self.severity[a["data-severity"]] = int(a["data-value"])
        if tag == "tr" and "kind-row" in a.get("class", ""): self.kinds[a["data-kind"]] = int(a["data-count"])
        if tag == "tr" and "finding" in a.get("class", "").split(): self.findings.append(a["data-key"])
        if tag == "div" and "data-currency" in a: self.money[a["data-currency"]] = int(a["data-minor-units"])

c = Collect()
c.feed(open(dom_path, encoding="utf-8").read())
problems = []
summary = report["summary"]
if c.total != summary["findings"]:
    problems.append(f"total findings: page shows {c.total}, JSON has {summary['findings']}")
want_kinds = {k["kind"]: k["count"] for k in summary["byKind"]}
if c.kinds != want_kinds:
    problems.append(f"findings by kind: page {c.kinds} != JSON {want_kinds}")
if c.severity != summary["bySeverity"]:
    problems.append(f"by severity: page {c.severity} != JSON {summary['bySeverity']}")
want_money = {m["currency"]: m["amount"] for m in summary["atRisk"]}
if c.money != want_money:
    problems.append(f"money at risk: page {c.money} != JSON {want_money}")
want_keys = [f["key"] for f in report["findings"]]
if c.findings != want_keys:
    problems.append(f"findings table: {len(c.findings)} rows on the page, {len(want_keys)} in the JSON, or in another order")
if c.svgs < 3:
    problems.append(f"expected 3 charts (SVG), the page has {c.svgs}")
png = open(png_path, "rb").read()
if not png.startswith(b"\x89PNG") or len(png) < 10000:
    problems.append(f"the screenshot {png_path} is missing or blank ({len(png)} bytes)")
if problems:
    print("check-report: the rendered page does not match the JSON report:", file=sys.stderr)
    for p in problems: print("  " + p, file=sys.stderr)
    sys.exit(1)
print(f"check-report: {json_path} and the rendered page agree: {c.total} findings, {len(c.kinds)} kinds, "
      f"money at risk {want_money or 'none'}; screenshot {png_path} ({len(png)} bytes)")
PY
