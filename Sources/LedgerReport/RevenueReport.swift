import LedgerCore
import LedgerDomain

/// Revenue per period, channel and currency, the ledger's figures beside the statements', as a
/// table, JSON, CSV or a self-contained HTML page. Never summed across currencies; the same log
/// and options give the same bytes (nothing reads a clock).
public struct RevenueReport: Sendable {
    public var position: Int64
    public var bucket: RevenueBucket
    public var from: String?
    public var to: String?
    public var rows: [RevenueRow]

    public init(position: Int64, bucket: RevenueBucket, from: String? = nil, to: String? = nil, rows: [RevenueRow]) {
        self.position = position
        self.bucket = bucket
        self.from = from
        self.to = to
        self.rows = rows.sorted()
    }

    public var totals: [RevenueRow] { Revenue.totals(rows) }

    static func money(_ minor: Int64, _ c: Currency) -> String { Money(minorUnits: minor, currency: c).description }
    static func fees(_ t: RevenueTotals, _ c: Currency) -> String { t.exactFees(c).map(\.description) ?? "-" }

    /// Whole minor units; with `exact` (major units as decimal text) beside them when a store
    /// signed amounts that are not whole minor units.
    static func json(_ t: RevenueTotals, _ c: Currency) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("sales", .int(t.sales)), ("gross", .int(t.gross)), ("refunds", .int(t.refunds)),
            ("refunded", .int(t.refunded)), ("net", .int(t.net)), ("fees", t.fees.map { .int($0) } ?? .null),
        ]
        if t.grossFraction != 0 || t.refundedFraction != 0 || t.feesFraction != 0 {
            var exact: [(String, JSONValue)] = [
                ("gross", .string(t.exactGross(c).decimalText)), ("refunded", .string(t.exactRefunded(c).decimalText)),
                ("net", .string(t.exactNet(c).decimalText)),
            ]
            if let fees = t.exactFees(c), t.feesFraction != 0 { exact.append(("fees", .string(fees.decimalText))) }
            members.append(("exact", .makeObject(exact)))
        }
        return .makeObject(members)
    }

    static func json(_ r: RevenueRow) -> JSONValue {
        .makeObject([
            ("period", .string(r.period)), ("channel", .string(r.channel.rawValue)),
            ("currency", .string(r.currency.code)),
            ("ledger", json(r.ledger, r.currency)), ("statements", json(r.statements, r.currency)),
            ("ties", .bool(r.ties)),
        ])
    }

    public var jsonValue: JSONValue {
        .makeObject([
            ("report", .string("ledger-revenue/1")),
            (
                "scope",
                .makeObject([
                    ("position", .int(position)), ("by", .string(bucket.rawValue)),
                    ("from", from.map { .string($0) } ?? .null), ("to", to.map { .string($0) } ?? .null),
                ])
            ),
            (
                "note",
                .string("amounts in minor units; never summed across currencies; sandbox and family-shared excluded")
            ),
            ("totals", .array(totals.map(Self.json))),
            ("rows", .array(rows.map(Self.json))),
        ])
    }

    public var json: String { jsonValue.canonicalText + "\n" }

    /// One row per period, channel and currency: each amount in minor units and, beside it, in the
    /// currency's own decimals (`gross_minor_units` 153600, `gross` 1536.00), exactly.
    public var csv: String {
        var out =
            "period,channel,currency,sales,gross_minor_units,gross,refunds,refunded_minor_units,refunded,net_minor_units,net,"
            + "statement_sales,statement_gross_minor_units,statement_gross,statement_refunds,statement_refunded_minor_units,statement_refunded,"
            + "statement_fees_minor_units,statement_fees,ties\r\n"
        for r in rows {
            let l = r.ledger, s = r.statements
            let c = r.currency
            let both = { (m: Money) in [m.minorUnitsText, m.decimalText] }
            let fees = s.exactFees(c).map(both) ?? ["", ""]
            out +=
                ([r.period, r.channel.rawValue, c.code, "\(l.sales)"] + both(l.exactGross(c)) + ["\(l.refunds)"]
                + both(l.exactRefunded(c))
                + both(l.exactNet(c)) + ["\(s.sales)"] + both(s.exactGross(c)) + ["\(s.refunds)"]
                + both(s.exactRefunded(c))
                + fees + [r.ties ? "yes" : "no"])
                .joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func tableRows(_ rows: [RevenueRow]) -> [[String]] {
        rows.map { r in
            let c = r.currency, l = r.ledger, s = r.statements
            return [
                r.period, r.channel.rawValue, c.code, "\(l.sales)", l.exactGross(c).description, "\(l.refunds)",
                l.exactRefunded(c).description,
                l.exactNet(c).description, "\(s.sales)", s.exactGross(c).description, s.exactRefunded(c).description,
                fees(s, c), r.ties ? "yes" : "NO",
                difference(r),
            ]
        }
    }

    /// What the ledger has more (+) or less (-) than the statements, where a row does not tie:
    /// `net +6.00 CNY, sales +1`; empty where it ties.
    static func difference(_ r: RevenueRow) -> String {
        guard !r.ties else { return "" }
        let c = r.currency, l = r.ledger, s = r.statements
        func signed(_ m: Money?) -> String? {
            guard let m, m.minorUnits != 0 || m.fraction != 0 else { return nil }
            return (m.minorUnits > 0 || m.fraction > 0 ? "+" : "") + m.description
        }
        func count(_ n: Int64) -> String? { n == 0 ? nil : (n > 0 ? "+" : "") + "\(n)" }
        var parts: [String] = []
        if let net = signed(l.exactNet(c).adding(s.exactNet(c).negated)) { parts.append("net " + net) }
        if let n = count(l.sales - s.sales) { parts.append("sales " + n) }
        if let n = count(l.refunds - s.refunds) { parts.append("refunds " + n) }
        if parts.isEmpty, let gross = signed(l.exactGross(c).adding(s.exactGross(c).negated)) {
            // Gross and refunded off by the same amount: the net ties, the parts do not.
            parts.append("gross " + gross)
            if let refunded = signed(l.exactRefunded(c).adding(s.exactRefunded(c).negated)) {
                parts.append("refunded " + refunded)
            }
        }
        return parts.joined(separator: ", ")
    }

    static let header = [
        "period", "channel", "currency", "sales", "gross", "refunds", "refunded", "net",
        "stmt sales", "stmt gross", "stmt refunded", "stmt fees", "ties", "difference",
    ]

    public var table: String {
        var s =
            "revenue as of position \(position), by \(bucket.rawValue)" + (from.map { " from \($0)" } ?? "")
            + (to.map { " to \($0)" } ?? "")
        s += " (never summed across currencies; sandbox and family-shared excluded)\n\ntotals\n"
        s += textTable(Self.header, Self.tableRows(totals))
        s += "\nby \(bucket.rawValue)\n" + textTable(Self.header, Self.tableRows(rows))
        return s
    }

    /// Net revenue per period, one bar chart per currency (the ledger's figures; the statements' net as a tick).
    public static func charts(_ rows: [RevenueRow]) -> String {
        let currencies = Set(rows.map(\.currency)).sorted()
        guard !currencies.isEmpty else { return "<p class=\"empty\">No revenue in range.</p>" }
        var s = ""
        for c in currencies {
            var byPeriod: [String: (ledger: Int64, statements: Int64)] = [:]
            for r in rows where r.currency == c {
                byPeriod[r.period, default: (0, 0)].ledger += r.ledger.net
                byPeriod[r.period, default: (0, 0)].statements += r.statements.net
            }
            let periods = byPeriod.keys.sorted()
            let maxV = Double(max(1, periods.map { max(byPeriod[$0]!.ledger, byPeriod[$0]!.statements, 0) }.max() ?? 1))
            let w = 760.0, h = 200.0, left = 80.0, bottom = 28.0, top = 10.0
            let step = (w - left - 8) / Double(max(1, periods.count))
            func y(_ v: Int64) -> Double { top + (h - top - bottom) * (1 - Double(max(0, v)) / maxV) }
            s +=
                "<h3>\(c.code)</h3><svg class=\"chart revenue-chart\" data-currency=\"\(c.code)\" viewBox=\"0 0 \(Int(w)) \(Int(h))\" role=\"img\" aria-label=\"net revenue per period, \(c.code)\">"
            s +=
                "<text class=\"axis\" x=\"\(Int(left - 6))\" y=\"\(AuditReport.fmt(y(Int64(maxV)) + 4))\" text-anchor=\"end\">\(AuditReport.esc(money(Int64(maxV), c)))</text>"
            let labelEvery = max(1, periods.count / 8)
            for (i, p) in periods.enumerated() {
                let v = byPeriod[p]!
                let x = left + Double(i) * step
                s +=
                    "<rect class=\"bar money revenue-bar\" data-period=\"\(p)\" data-net=\"\(v.ledger)\" x=\"\(AuditReport.fmt(x + 1))\" y=\"\(AuditReport.fmt(y(v.ledger)))\" width=\"\(AuditReport.fmt(max(1, step - 2)))\" height=\"\(AuditReport.fmt(h - bottom - y(v.ledger)))\"/>"
                s +=
                    "<line class=\"statement-tick\" data-period=\"\(p)\" data-net=\"\(v.statements)\" x1=\"\(AuditReport.fmt(x))\" x2=\"\(AuditReport.fmt(x + step))\" y1=\"\(AuditReport.fmt(y(v.statements)))\" y2=\"\(AuditReport.fmt(y(v.statements)))\"/>"
                if i % labelEvery == 0 {
                    s +=
                        "<text class=\"axis\" x=\"\(AuditReport.fmt(x + step / 2))\" y=\"\(Int(h - 8))\" text-anchor=\"middle\">\(AuditReport.esc(p.count > 7 ? String(p.dropFirst(5)) : p))</text>"
                }
            }
            s += "</svg>"
        }
        return s
            + "<p class=\"legend\"><span class=\"key revenue\"></span>net revenue in the ledger <span class=\"key tick\"></span>net in the stores' statements</p>"
    }

    /// The revenue table: figures never wrap (a period or an amount stays on one line); a table
    /// wider than the page scrolls sideways inside its section instead of being clipped.
    static func htmlTable(_ rows: [RevenueRow], id: String) -> String {
        var s =
            "<div class=\"wide\"><table id=\"\(id)\" class=\"figures\"><thead><tr>"
            + header.map { "<th>\(AuditReport.esc($0))</th>" }.joined()
        s += "</tr></thead><tbody>\n"
        let last = header.count - 1
        for (r, cells) in zip(rows, tableRows(rows)) {
            s +=
                "<tr class=\"revenue-row\(r.ties ? "" : " untied")\" data-period=\"\(r.period)\" data-channel=\"\(r.channel.rawValue)\" data-currency=\"\(r.currency.code)\" data-net=\"\(r.ledger.net)\" data-ties=\"\(r.ties)\">"
            s +=
                cells.enumerated().map { i, cell in
                    let cls =
                        i == last ? "difference" : i == last - 1 ? (r.ties ? "ties" : "ties no") : i >= 3 ? "num" : ""
                    return "<td\(cls.isEmpty ? "" : " class=\"\(cls)\"")>\(AuditReport.esc(cell))</td>"
                }.joined() + "</tr>\n"
        }
        return s + "</tbody></table></div>"
    }

    public var html: String {
        let title = "Purchase ledger revenue, position \(position)"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(AuditReport.esc(title))</title>
            <style>\(AuditReport.style)</style></head><body><main>
            <h1>\(AuditReport.esc(title))</h1>
            <p class="sub">By \(bucket.rawValue)\(from.map { " from \(AuditReport.esc($0))" } ?? "")\(to.map { " to \(AuditReport.esc($0))" } ?? ""). Never summed across currencies; sandbox and family-shared purchases excluded.</p>
            <section><h2>Net revenue per currency</h2>\(Self.charts(rows))</section>
            <section><h2>Totals</h2>\(Self.htmlTable(totals, id: "revenue-totals"))</section>
            <section><h2>By \(bucket.rawValue)</h2>\(Self.htmlTable(rows, id: "revenue"))</section>
            </main></body></html>

            """
    }
}
