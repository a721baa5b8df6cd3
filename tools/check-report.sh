#!/usr/bin/env bash
# Checks an HTML audit report in a real headless browser (Debian's chromium): it renders (the
# screenshots are decoded and must show more than a background), and what it shows, as visible text,
# equals the JSON report of the same audit: the cards, the kind table and bar chart, the money
# chart, the daily chart's points on a true time axis, every finding row's cells and amount in
# triage order (severity, then money), every row of the sandbox and grants-by-policy sections, and
# with statements their periods in the store's own zone and the revenue rows with their difference.
# Laid out at 1024 and 1400 px wide, the page shows its content, nothing overflows the page, no
# table cell is clipped, and no figure (a period, an amount) wraps. With SCREENSHOT.png, also
# screenshots at both widths (SCREENSHOT-1024.png, SCREENSHOT-1400.png), decoded and checked not blank.
# Usage: tools/check-report.sh REPORT.html REPORT.json [SCREENSHOT.png]
set -euo pipefail
html="$1"; json="$2"; png="${3:-}"
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
# The layout probe: a copy of the page with a script that, once laid out, writes into the DOM what
# overflows the page, which table cells are clipped, and which figures wrap onto a second line.
probe='<script>
addEventListener("load", () => {
  const out = [], W = document.documentElement.clientWidth;
  const shown = [...document.querySelectorAll("main *")].filter(e => {
    const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility === "visible" && getComputedStyle(e).opacity !== "0";
  });
  if (shown.length < 20) out.push("the page shows almost nothing (" + shown.length + " visible elements)");
  if (document.documentElement.scrollWidth > W + 1) out.push("the page is " + document.documentElement.scrollWidth + " px wide, wider than the window");
  const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) if (p.classList.contains("wide")) return true; return false; };
  const name = (e) => (e.closest("table") ? "#" + (e.closest("table").id || "table") + " " : "") + e.tagName.toLowerCase() + "." + e.className + " \"" + e.textContent.slice(0, 40) + "\"";
  for (const e of document.querySelectorAll("main *")) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1 && !scrolls(e)) out.push(name(e) + " ends at " + Math.round(r.right) + " px, past the window");
  }
  for (const td of document.querySelectorAll("td, th")) {
    if (td.scrollWidth > td.clientWidth + 1) out.push(name(td) + " is clipped (" + td.scrollWidth + " > " + td.clientWidth + " px)");
  }
  for (const td of document.querySelectorAll("table.figures td, table.figures th, td.money, td.num, td.period, td.kind")) {
    const range = document.createRange(); range.selectNodeContents(td);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) out.push(name(td) + " wraps onto " + tops.size + " lines");
  }
  document.body.setAttribute("data-layout", JSON.stringify(out));
});
</script>'
python3 -c 'import sys; page = open(sys.argv[1], encoding="utf-8").read(); open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", sys.argv[3] + "</body>"))' \
  "$abs" "$work/probe.html" "$probe"
layouts=()
for width in 1024 1400; do
  timeout 120 "$browser" "${flags[@]}" --window-size=$width,1600 --virtual-time-budget=5000 --dump-dom "file://$work/probe.html" \
    > "$work/layout-$width.html" 2>> "$work/chromium.log" || {
    echo "check-report: chromium could not lay out $html at $width px:" >&2; tail -5 "$work/chromium.log" >&2; exit 1; }
  if [ -n "$png" ]; then
    # Paint everything before the shot (under load a headless shot can otherwise come out blank).
    timeout 120 "$browser" "${flags[@]}" --window-size=$width,1600 --run-all-compositor-stages-before-draw --virtual-time-budget=5000 \
      --screenshot="${png%.png}-$width.png" "file://$abs" >> "$work/chromium.log" 2>&1 || {
      echo "check-report: chromium could not take a screenshot of $html:" >&2; tail -5 "$work/chromium.log" >&2; exit 1; }
  fi
  layouts+=("$width=$work/layout-$width.html")
done
# What the page shows is read from the DOM the browser built (at 1400 px).
python3 - "$work/layout-1400.html" "$json" "${png%.png}" "${layouts[@]}" <<'PY'
import datetime, json, re, struct, sys, zlib
from html.parser import HTMLParser

dom_path, json_path, png_base = sys.argv[1:4]
layouts = dict(a.split("=", 1) for a in sys.argv[4:])
report = json.load(open(json_path, encoding="utf-8"))

class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []
    def all_text(self):
        return "".join(t if isinstance(t, str) else t.all_text() for t in self.text).strip()
    def find(self, pred):
        out = [self] if pred(self) else []
        for c in self.children: out += c.find(pred)
        return out
    def cls(self): return self.attrs.get("class", "").split()

VOID = {"meta", "br", "img", "input", "link", "hr", "line", "rect", "polyline", "path", "circle"}
class Tree(HTMLParser):
    def __init__(self):
        super().__init__(); self.root = Node("root", [], None); self.cur = self.root
    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur); self.cur.children.append(n); self.cur.text.append(n)
        if tag not in VOID: self.cur = n
    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur); self.cur.children.append(n); self.cur.text.append(n)
    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag: n = n.parent
        if n is not self.root: self.cur = n.parent
    def handle_data(self, d): self.cur.text.append(d)

t = Tree(); t.feed(open(dom_path, encoding="utf-8").read()); root = t.root
problems = []
def check(what, page, want):
    if page != want: problems.append(f"{what}: the page shows {page!r}, the JSON has {want!r}")

def money(text):
    """Visible money text ('18.00 CNY', '600 JPY') as (minor units, currency)."""
    m = re.fullmatch(r"(-?)(\d+)(?:\.(\d+))? ([A-Z]{3})", text.strip())
    if not m: return None
    return (int((m.group(1) or "") + m.group(2) + (m.group(3) or "")), m.group(4))

def jm(part, key, currency):
    """A JSON revenue amount as the page shows it: its exact decimal when it is not whole minor units."""
    exact = part.get("exact") or {}
    return money(exact[key] + " " + currency) if key in exact else (part[key], currency)

summary = report["summary"]
# Cards: the visible numbers.
total = root.find(lambda n: n.attrs.get("id") == "total-findings")
check("total findings (visible)", total[0].all_text() if total else None, str(summary["findings"]))
sev = {n.attrs["data-severity"]: n.all_text() for n in root.find(lambda n: "data-severity" in n.attrs)}
check("findings by severity (visible)", sev, {k: str(v) for k, v in summary["bySeverity"].items()})
cards = sorted(money(n.all_text()) for n in root.find(lambda n: n.tag == "div" and "data-currency" in n.attrs))
check("money at risk cards (visible)", cards, sorted((m["amount"], m["currency"]) for m in summary["atRisk"]))

# Findings by kind: the table's visible cells and the bar chart's labels and values.
rows = [[td.all_text() for td in r.find(lambda n: n.tag == "td")] for r in root.find(lambda n: n.tag == "tr" and "kind-row" in n.cls())]
check("findings by kind table (visible)", [(r[0], r[2]) for r in rows], [(k["kind"], str(k["count"])) for k in summary["byKind"]])
charts = root.find(lambda n: n.tag == "svg")
def bars(aria):
    svg = [c for c in charts if c.attrs.get("aria-label") == aria]
    if not svg: return None
    labels = [n.all_text() for n in svg[0].find(lambda n: n.tag == "text" and "label" in n.cls())]
    values = [n.all_text() for n in svg[0].find(lambda n: n.tag == "text" and "value" in n.cls())]
    return list(zip(labels, values))
if summary["byKind"]:
    check("findings by kind chart", bars("findings by kind"), [(k["kind"], str(k["count"])) for k in summary["byKind"]])
if summary["atRisk"]:
    page = bars("money at risk by currency")
    check("money at risk chart", page and [(l, money(v)) for l, v in page], [(m["currency"], (m["amount"], m["currency"])) for m in summary["atRisk"]])

# The daily chart: each point (over every run of the line) is the day's value on the chart's scale,
# at the day's place on a true time axis (days without facts are gaps, not squeezed out).
daily = report.get("daily", [])
if daily:
    svg = [c for c in charts if c.attrs.get("aria-label") == "payments and grants per day"]
    if not svg: problems.append("the daily chart is missing")
    else:
        maxY = max(1, max(max(d["payments"], d["grants"]) for d in daily))
        day = lambda d: datetime.date.fromisoformat(d).toordinal()
        first, span = day(daily[0]["day"]), max(1, day(daily[-1]["day"]) - day(daily[0]["day"]))
        want_x = [48 + (760 - 48 - 12) * (day(d["day"]) - first) / span for d in daily]
        for series in ("payments", "grants"):
            lines = svg[0].find(lambda n: n.tag == "polyline" and series in n.cls())
            if not lines: problems.append(f"daily chart: no {series} line"); continue
            points = [p.split(",") for line in lines for p in line.attrs.get("points", "").split()]
            values = [round(maxY * (1 - (float(y) - 12) / (220 - 12 - 28))) for _, y in points]
            check(f"daily chart, {series} per day", values, [d[series] for d in daily])
            if len(daily) > 1:
                xs = [float(x) for x, _ in points]
                if len(xs) != len(want_x) or any(abs(a - b) > 1 for a, b in zip(xs, want_x)):
                    problems.append(f"daily chart, {series}: the days' places on the time axis are {[round(x) for x in xs]}, their dates give {want_x}")
            runs = sum(1 for a, b in zip(daily, daily[1:]) if day(b["day"]) - day(a["day"]) > 1) + 1
            check(f"daily chart, {series}: runs of consecutive days", len(lines), runs)

# Findings: every row's visible cells against the JSON finding, in triage order: severity, then
# money at risk (largest first within a currency; amounts before none), then key.
rank = {"critical": 0, "error": 1, "warning": 2, "info": 3}
def triage(f):
    a = f.get("amountAtRisk")
    return (rank[f["severity"]], 0 if a else 1, a["currency"] if a else "", -a["amount"] if a else 0, f["key"])
want = sorted(report["findings"], key=triage)
got = root.find(lambda n: n.tag == "tr" and "finding" in n.cls())
if len(got) != len(want):
    problems.append(f"findings table: {len(got)} rows on the page, {len(want)} in the JSON")
for row, f in zip(got, want):
    cells = [td.all_text() for td in row.find(lambda n: n.tag == "td")]
    if len(cells) != 8: problems.append(f"finding {f['key']}: {len(cells)} cells"); continue
    kind, severity, user, order, tx, positions, risk, detail = cells
    # The transaction's app beside its id where another channel or app uses the same id.
    expect = [f["kind"], f["severity"], f.get("userId") or "-", f.get("orderId") or "-",
              (f.get("transactionId") or "-") + (f" ({f['app']})" if f.get("app") else ""),
              ", ".join(str(p) for p in f["positions"])]
    check(f"finding {f['key']} (kind, severity, user, order, transaction, positions)", [kind, severity, user, order, tx, positions], expect)
    a = f.get("amountAtRisk")
    check(f"finding {f['key']} amount at risk", money(risk) if risk != "-" else None, (a["amount"], a["currency"]) if a else None)
    check(f"finding {f['key']} detail", detail, f["detail"])

# The sections set apart from the findings: every sandbox purchase and grant by policy, cell by cell.
def set_apart_rows(cls):
    return [[td.all_text() for td in r.find(lambda n: n.tag == "td")] for r in root.find(lambda n: n.tag == "tr" and cls in n.cls())]
sandbox = report.get("sandbox", [])
check("sandbox purchases (visible)", [r[:5] + [money(r[5]) if r[5] != "-" else None] for r in set_apart_rows("sandbox")],
      [[p["transactionId"], p.get("channel") or "-", p["environment"], p.get("productId") or "-", p.get("userId") or "-",
        (p["price"]["amount"], p["price"]["currency"]) if p.get("price") else None] for p in sandbox])
grants = report.get("policyGrants", [])
check("grants by policy (visible)", set_apart_rows("policy-grant"),
      [[g["grantId"], g["userId"], g["reason"], g.get("authorizedBy") or "-", f"{g['units']} {g['unit']}", str(g["unitsLeft"])] for g in grants])

# Reconciliation (when statements were imported): the statements table, the revenue totals and the
# revenue chart per currency (each bar's height is the period's net on the chart's scale).
recon = report.get("reconciliation")
if recon:
    section = root.find(lambda n: n.attrs.get("id") == "reconciliation")
    if not section: problems.append("the reconciliation section is missing")
    else:
        srows = [[td.all_text() for td in r.find(lambda n: n.tag == "td")] for r in section[0].find(lambda n: n.tag == "tr" and "statement" in n.cls())]
        check("statements table (source, lines, position)", [(r[0], r[3], r[4]) for r in srows],
              [(st["source"], str(st["lines"]), str(st["position"])) for st in recon["statements"]])
        # Each period in the zone the store writes it in: WeChat Pay's Beijing days, Google Play's
        # Pacific months (from the system's time zone database), the rest UTC.
        from zoneinfo import ZoneInfo
        def local(t, source):
            t = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
            zone = {"wechat-tradebill": datetime.timezone(datetime.timedelta(hours=8)), "wechat-refundbill": datetime.timezone(datetime.timedelta(hours=8)),
                    "googleplay-earnings": ZoneInfo("America/Los_Angeles")}.get(source, datetime.timezone.utc)
            t = t.astimezone(zone); off = int(t.utcoffset().total_seconds()) // 60
            name = "UTC" if off == 0 else f"UTC{'+' if off > 0 else '-'}{abs(off) // 60:02d}:{abs(off) % 60:02d}"
            return t.strftime("%Y-%m-%d %H:%M"), name
        def period(st):
            (a, za), (b, zb) = local(st["periodStart"], st["source"]), local(st["periodEnd"], st["source"])
            return f"{a} to {b} {zb}" if za == zb else f"{a} {za} to {b} {zb}"
        check("statements table (period in the store's zone)", [r[2] for r in srows], [period(st) for st in recon["statements"]])
        trows = [[td.all_text() for td in r.find(lambda n: n.tag == "td")] for r in section[0].find(lambda n: n.tag == "tr" and "revenue-row" in n.cls())]
        # Where a row does not tie, its difference (the ledger's net less the statements') is shown.
        def net_difference(t):
            l, st = jm(t["ledger"], "net", t["currency"]), jm(t["statements"], "net", t["currency"])
            return None if l is None or st is None or l[0] == st[0] else l[0] - st[0]
        for r, t in zip(trows, recon["revenueTotals"]):
            shown = r[13] if len(r) > 13 else None
            d = net_difference(t)
            if t["ties"]: check(f"revenue {t['channel']} {t['currency']}: difference of a row that ties", shown, "")
            elif not shown: problems.append(f"revenue {t['channel']} {t['currency']}: does not tie but shows no difference")
            elif d is not None:
                m = re.search(r"net ([+-][0-9.]+ [A-Z]{3})", shown)
                check(f"revenue {t['channel']} {t['currency']}: net difference", money(m.group(1).lstrip("+")) if m else None, (d, t["currency"]))
        check("revenue totals (channel, currency, sales, gross, net, statement gross, ties)",
              [(r[1], r[2], r[3], money(r[4]), money(r[7]), money(r[9]), r[12]) for r in trows],
              [(t["channel"], t["currency"], str(t["ledger"]["sales"]), jm(t["ledger"], "gross", t["currency"]), jm(t["ledger"], "net", t["currency"]),
                jm(t["statements"], "gross", t["currency"]), "yes" if t["ties"] else "NO") for t in recon["revenueTotals"]])
        for cur in sorted({r["currency"] for r in recon["revenueByDay"]}):
            per = {}
            for r in recon["revenueByDay"]:
                if r["currency"] != cur: continue
                l, st = per.get(r["period"], (0, 0))
                per[r["period"]] = (l + r["ledger"]["net"], st + r["statements"]["net"])
            svg = section[0].find(lambda n: n.tag == "svg" and n.attrs.get("data-currency") == cur)
            if not svg: problems.append(f"no revenue chart for {cur}"); continue
            maxV = max(1, max(max(l, st, 0) for l, st in per.values()))
            got = [round(float(b.attrs.get("height", "nan")) * maxV / 162) for b in svg[0].find(lambda n: n.tag == "rect" and "revenue-bar" in n.cls())]
            bars_want = [max(0, per[p][0]) for p in sorted(per)]
            close = len(got) == len(bars_want) and all(abs(g - w) <= max(1, maxV // 1000) for g, w in zip(got, bars_want))
            if not close: problems.append(f"revenue chart {cur}: the bars show {got}, the JSON has {bars_want}")

# The screenshot shows something: decode the PNG and count pixels unlike the background.
def png_pixels(path):
    data = open(path, "rb").read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"): return None
    pos, idat, w, h, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]; pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6): return None
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT": idat += body
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append([bytes(line[j:j + 3]) for j in range(0, stride, bpp)]); prev = line
    return [px for row in out for px in row]
from collections import Counter
shots = []
for width in (layouts if png_base else []):
    png_path = f"{png_base}-{width}.png"
    pixels = png_pixels(png_path)
    if not pixels:
        problems.append(f"the screenshot {png_path} is missing or not an 8-bit RGB(A) PNG"); continue
    counts = Counter(pixels); background, n = counts.most_common(1)[0]
    drawn = 1 - n / len(pixels)
    shots.append(f"{png_path} ({drawn:.1%} drawn, {len(counts)} colours)")
    if drawn < 0.01 or len(counts) < 16:
        problems.append(f"the screenshot {png_path} is blank: {drawn:.2%} of pixels differ from the background, {len(counts)} colours")

# The layout at each width, as the probe measured it in the browser.
for width, path in layouts.items():
    m = re.search(r'<body[^>]*data-layout="([^"]*)"', open(path, encoding="utf-8").read())
    if not m: problems.append(f"at {width} px: the layout probe did not run"); continue
    import html as htmllib
    for p in json.loads(htmllib.unescape(m.group(1)))[:20]: problems.append(f"at {width} px: {p}")

if problems:
    print("check-report: the rendered page does not match the JSON report:", file=sys.stderr)
    for p in problems: print("  " + p, file=sys.stderr)
    sys.exit(1)
print(f"check-report: {json_path} and the rendered page agree: {summary['findings']} findings, {len(summary['byKind'])} kinds, "
      f"{len(want)} rows with their amounts, {len(daily)} days charted, {len(sandbox)} sandbox purchases, {len(grants)} grants by policy; "
      f"laid out at {' and '.join(f'{w} px' for w in layouts)} with nothing clipped, overflowing or wrapped"
      + (f"; screenshots {', '.join(shots)}" if shots else ""))
PY
