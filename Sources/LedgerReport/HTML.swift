import LedgerCore
import LedgerDomain

extension AuditReport {
    static func esc(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func fmt(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int64(r)) : String(r)
    }

    /// The day number (days since 1970-01-01) of `2026-03-02`.
    static func dayNumber(_ day: String) -> Int64? {
        Timestamp(day + "T00:00:00Z").map { $0.microseconds / 86_400_000_000 }
    }

    /// Payments (verified and renewed) versus grants per day, as two lines on a true time axis:
    /// each day at its date, so days with no facts are gaps between the lines' runs, not a ramp.
    var dailyChart: String {
        let w = 760.0, h = 220.0, left = 48.0, bottom = 28.0, top = 12.0
        let days = daily.compactMap { d in Self.dayNumber(d.day).map { (n: $0, d: d) } }
        guard let first = days.first?.n, let last = days.last?.n else {
            return "<p class=\"empty\">No facts in range.</p>"
        }
        let maxY = Double(max(1, daily.map { max($0.payments, $0.grants) }.max() ?? 1))
        let span = Double(max(1, last - first))
        func x(_ day: Int64) -> Double {
            days.count == 1 ? (left + w - 12) / 2 : left + (w - left - 12) * Double(day - first) / span
        }
        func y(_ v: Int64) -> Double { top + (h - top - bottom) * (1 - Double(v) / maxY) }
        // Runs of consecutive days: one polyline each, and a dot on every day.
        var runs: [[(n: Int64, d: Day)]] = []
        for day in days {
            if let previous = runs.last?.last, previous.n + 1 == day.n {
                runs[runs.count - 1].append(day)
            } else {
                runs.append([day])
            }
        }
        func series(_ value: (Day) -> Int64, _ cls: String) -> String {
            var out = ""
            for run in runs {
                let pts = run.map { "\(Self.fmt(x($0.n))),\(Self.fmt(y(value($0.d))))" }.joined(separator: " ")
                out += "<polyline class=\"\(cls)\" points=\"\(pts)\"/>"
            }
            for day in days {
                out +=
                    "<circle class=\"dot \(cls)\" cx=\"\(Self.fmt(x(day.n)))\" cy=\"\(Self.fmt(y(value(day.d))))\" r=\"2.5\"/>"
            }
            return out
        }
        var s =
            "<svg class=\"chart\" viewBox=\"0 0 \(Int(w)) \(Int(h))\" role=\"img\" aria-label=\"payments and grants per day\" data-first-day=\"\(Self.esc(days[0].d.day))\" data-days=\"\(last - first + 1)\">"
        // Grid lines at quarters of the scale, each value once (a small scale rounds some together).
        var gridValues: [Int64] = []
        for k in 0...4 {
            let v = Int64((maxY * Double(k) / 4).rounded())
            guard !gridValues.contains(v) else { continue }
            gridValues.append(v)
            s +=
                "<line class=\"grid\" x1=\"\(Int(left))\" x2=\"\(Int(w - 8))\" y1=\"\(Self.fmt(y(v)))\" y2=\"\(Self.fmt(y(v)))\"/>"
            s +=
                "<text class=\"axis\" x=\"\(Int(left - 6))\" y=\"\(Self.fmt(y(v) + 4))\" text-anchor=\"end\">\(v)</text>"
        }
        // Date labels at even steps of time (about eight), whether or not those days had facts.
        let stepDays = max(1, (last - first) / 8)
        var label = first
        while label <= last {
            let (yy, mm, dd) = Timestamp.civilDate(fromDays: label)
            let text =
                (last - first > 300 ? "\(yy)-" : "") + (mm < 10 ? "0" : "") + "\(mm)-" + (dd < 10 ? "0" : "") + "\(dd)"
            s +=
                "<text class=\"axis\" x=\"\(Self.fmt(x(label)))\" y=\"\(Int(h - 8))\" text-anchor=\"middle\">\(text)</text>"
            label += stepDays
        }
        s += series(\.payments, "payments") + series(\.grants, "grants")
        s +=
            "</svg><p class=\"legend\"><span class=\"key payments\"></span>payments verified or renewed <span class=\"key grants\"></span>entitlements granted"
        s += runs.count > 1 ? " (the gaps are days with no facts)</p>" : "</p>"
        return s
    }

    /// Horizontal bars with a label and a value text.
    static func bars(_ items: [(label: String, value: Double, text: String, cls: String)], aria: String) -> String {
        guard !items.isEmpty else { return "<p class=\"empty\">None.</p>" }
        let maxV = max(items.map(\.value).max() ?? 1, 1)
        let rowH = 24.0, labelW = 190.0, barW = 420.0
        let h = Double(items.count) * rowH + 8
        var s = "<svg class=\"chart\" viewBox=\"0 0 760 \(Int(h))\" role=\"img\" aria-label=\"\(esc(aria))\">"
        for (i, it) in items.enumerated() {
            let yy = 4 + Double(i) * rowH
            let bw = max(2, barW * it.value / maxV)
            s +=
                "<text class=\"label\" x=\"\(Int(labelW - 8))\" y=\"\(fmt(yy + 16))\" text-anchor=\"end\">\(esc(it.label))</text>"
            s +=
                "<rect class=\"bar \(it.cls)\" x=\"\(Int(labelW))\" y=\"\(fmt(yy + 3))\" width=\"\(fmt(bw))\" height=\"\(Int(rowH - 8))\"/>"
            s += "<text class=\"value\" x=\"\(fmt(labelW + bw + 6))\" y=\"\(fmt(yy + 16))\">\(esc(it.text))</text>"
        }
        return s + "</svg>"
    }

    /// The page's inline style, shared by the audit and revenue pages.
    static let style = """
        body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;color:#1d2430;margin:0;background:#f5f6f8}
        main{max-width:1100px;margin:0 auto;padding:24px}
        h1{font-size:22px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px}
        .sub{color:#5b6472;margin:0 0 16px}
        .cards{display:flex;gap:12px;flex-wrap:wrap}
        .card{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px 16px;min-width:150px}
        .card .n{font-size:24px;font-weight:600} .card .t{color:#5b6472;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
        .critical{color:#b42318} .error{color:#c4320a} .warning{color:#b54708} .info{color:#475467}
        section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:12px 16px;margin-top:12px}
        .chart{width:100%;height:auto} .grid{stroke:#eef0f3} .axis,.label,.value{font-size:11px;fill:#5b6472}
        polyline{fill:none;stroke-width:2} polyline.payments{stroke:#2e90fa} polyline.grants{stroke:#12b76a;stroke-dasharray:6 4}
        .bar{fill:#2e90fa} .bar.critical{fill:#d92d20} .bar.error{fill:#f04438} .bar.warning{fill:#f79009} .bar.info{fill:#98a2b3} .bar.money{fill:#7a5af8}
        .legend{color:#5b6472;font-size:12px} .key{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;border-radius:2px}
        .key.payments{background:#2e90fa} .key.grants{background:#12b76a}
        table{border-collapse:collapse;width:100%;font-size:13px} th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
        td{overflow-wrap:anywhere} td.num,td.period{white-space:nowrap} .wide{overflow-x:auto;max-width:100%}
        table.figures th,table.figures td{white-space:nowrap} td.difference{color:#b42318;font-weight:600} td.ties.no{color:#b42318;font-weight:600}
        #findings td.kind,#findings td.money{white-space:nowrap} #findings td.mono{min-width:8ch} #findings td.detail{min-width:16em}
        .dot{stroke:none} .dot.payments{fill:#2e90fa} .dot.grants{fill:#12b76a}
        th{background:#f9fafb;font-weight:600} td.num{text-align:right;font-variant-numeric:tabular-nums} .mono{font-family:ui-monospace,Menlo,monospace;font-size:12px}
        .empty{color:#5b6472}
        .key.revenue{background:#7a5af8} .key.tick{background:#101828;height:2px} .statement-tick{stroke:#101828;stroke-width:2} h3{font-size:14px;margin:12px 0 4px}
        """

    /// The findings as a reader triages them: by severity (critical first), then money at risk,
    /// largest first (amounts compared within a currency; findings without an amount after those
    /// with one), then by key: the same order on every run.
    var findingsBySeverity: [Finding] {
        func rank(_ s: Severity) -> Int { [.critical, .error, .warning, .info].firstIndex(of: s) ?? 4 }
        return findings.sorted { a, b in
            if rank(a.severity) != rank(b.severity) { return rank(a.severity) < rank(b.severity) }
            switch (a.amountAtRisk, b.amountAtRisk) {
            case let (x?, y?):
                if x.currency.code != y.currency.code { return x.currency.code < y.currency.code }
                if x != y { return (x.minorUnits, x.fraction) > (y.minorUnits, y.fraction) }
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): break
            }
            return a.key < b.key
        }
    }

    /// One self-contained page: inline CSS and SVG, nothing fetched.
    public var html: String {
        let title = "Purchase ledger audit, position \(scope.position)"
        var s = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.esc(title))</title>
            <style>\(Self.style)</style></head><body><main>
            <h1>\(Self.esc(title))</h1>
            <p class="sub">\(scope.events) facts replayed\(scope.headHash.map { ", head hash <code>\(Self.esc($0))</code>" } ?? "")\(scope.logTime.map { ", log time \($0.iso8601)" } ?? "")\(scope.asOf.map { ", as of \(Self.esc($0))" } ?? "")\(scope.user.map { ", user \(Self.esc($0))" } ?? ""). Windows: missing grant \(scope.options.missingGrantWindow.components.seconds / 60) min, refund not revoked \(scope.options.refundWindow.components.seconds / 60) min, stale order \(scope.options.staleOrderWindow.components.seconds / 3600) h, acknowledgement \(scope.options.acknowledgementWindow.components.seconds / 3600) h, statements \(scope.options.statementWindow.components.seconds / 3600) h (log time).</p>
            <div class="cards">
            <div class="card"><div class="t">Findings</div><div class="n" id="total-findings" data-value="\(findings.count)">\(findings.count)</div></div>

            """
        for (sev, count) in bySeverity {
            s +=
                "<div class=\"card\"><div class=\"t\">\(sev.rawValue)</div><div class=\"n \(sev.rawValue)\" data-severity=\"\(sev.rawValue)\" data-value=\"\(count)\">\(count)</div></div>\n"
        }
        for m in atRisk {
            s +=
                "<div class=\"card\"><div class=\"t\">At risk, \(m.currency.code)</div><div class=\"n\" data-currency=\"\(m.currency.code)\" data-minor-units=\"\(m.minorUnits)\">\(Self.esc(m.description))</div></div>\n"
        }
        s += "</div>\n<section><h2>Payments versus grants per day</h2>\(dailyChart)</section>\n"
        s +=
            "<section><h2>Findings by kind</h2>"
            + Self.bars(
                byKind.map { ($0.kind.rawValue, Double($0.count), String($0.count), $0.severity.rawValue) },
                aria: "findings by kind")
        s += "<table><thead><tr><th>kind</th><th>severity</th><th>findings</th><th>at risk</th></tr></thead><tbody>\n"
        for k in byKind {
            s +=
                "<tr class=\"kind-row\" data-kind=\"\(k.kind.rawValue)\" data-count=\"\(k.count)\"><td>\(k.kind.rawValue)</td><td class=\"\(k.severity.rawValue)\">\(k.severity.rawValue)</td><td class=\"num\">\(k.count)</td><td class=\"num\">\(Self.esc(k.atRisk.map(\.description).joined(separator: " + ")))</td></tr>\n"
        }
        s += "</tbody></table></section>\n"
        s +=
            "<section><h2>Money at risk by currency</h2>"
            + Self.bars(
                atRisk.map { ($0.currency.code, Double($0.minorUnits), $0.description, "money") },
                aria: "money at risk by currency") + "</section>\n"
        if let diff {
            s +=
                "<section><h2>Since the earlier report</h2><p id=\"diff\" data-appeared=\"\(diff.appeared.count)\" data-disappeared=\"\(diff.disappeared.count)\" data-changed=\"\(diff.changed.count)\">\(diff.appeared.count) appeared, \(diff.disappeared.count) disappeared, \(diff.changed.count) changed.</p><ul class=\"mono\">"
            for k in diff.appeared { s += "<li>+ \(Self.esc(k))</li>" }
            for k in diff.disappeared { s += "<li>&minus; \(Self.esc(k))</li>" }
            for c in diff.changed { s += "<li>~ \(Self.esc(c.key))</li>" }
            s += "</ul></section>\n"
        }
        s += "<section><h2>Findings and their evidence</h2>"
        if findings.isEmpty {
            s += "<p class=\"empty\">No findings: every payment was granted once, every refund revoked.</p>"
        } else {
            s += "<p class=\"sub\">By severity, then money at risk (largest first, per currency).</p>"
            s +=
                "<table id=\"findings\"><thead><tr><th>kind</th><th>severity</th><th>user</th><th>order</th><th>transaction</th><th>evidence (log positions)</th><th>at risk</th><th>detail</th></tr></thead><tbody>\n"
            for f in findingsBySeverity {
                s +=
                    "<tr class=\"finding\" data-key=\"\(Self.esc(f.key))\" data-kind=\"\(f.kind.rawValue)\"\(f.amountAtRisk.map { " data-currency=\"\($0.currency.code)\" data-minor-units=\"\($0.minorUnits)\"" } ?? "")>"
                s +=
                    "<td class=\"kind\">\(f.kind.rawValue)</td><td class=\"\(f.severity.rawValue)\">\(f.severity.rawValue)</td>"
                s +=
                    "<td class=\"mono\">\(Self.esc(f.userId ?? "-"))</td><td class=\"mono\">\(Self.esc(f.orderId ?? "-"))</td><td class=\"mono\">\(Self.esc(f.transactionId ?? "-"))\(f.app.map { " (\(Self.esc($0)))" } ?? "")</td>"
                s +=
                    "<td class=\"mono positions\">\(f.positions.map(String.init).joined(separator: ", "))</td><td class=\"num money\">\(Self.esc(f.amountAtRisk?.description ?? "-"))</td><td class=\"detail\">\(Self.esc(f.detail))</td></tr>\n"
            }
            s += "</tbody></table>"
        }
        s +=
            "</section>\n" + reconciliationHTML + setApartHTML
            + "<p class=\"sub\">Re-run with the same log and options for a byte-identical report (ledger audit --format html).</p>\n</main></body></html>\n"
        return s
    }
}
