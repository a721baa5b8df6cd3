import LedgerCore
import LedgerDomain

// The report's reconciliation section: the statements imported, the reconciliation findings by
// kind, and revenue per currency (the ledger beside the statements). Left out when no statement
// was imported, so reports of logs without statements are unchanged.
extension AuditReport {
    var reconciliationFindings: [Finding] { findings.filter { $0.kind.isReconciliation } }

    static func json(_ r: StatementRecord) -> JSONValue {
        let s = r.statement
        return .makeObject([
            ("source", .string(s.source.rawValue)), ("digest", .string(s.digest)),
            ("periodStart", .string(s.periodStart.iso8601)),
            ("periodEnd", .string(s.periodEnd.iso8601)), ("lines", .int(s.lines)),
            ("fileName", s.fileName.map { .string($0) } ?? .null),
            ("position", .int(r.position)), ("reissueOf", r.reissueOf.map { .string($0) } ?? .null),
            (
                "signatures",
                r.signatures.map { s in
                    .makeObject([
                        ("signed", .int(s.signed)), ("verified", .bool(s.verified)),
                        ("root", s.root.map { .string($0) } ?? .null),
                    ])
                } ?? .null
            ),
        ])
    }

    /// What the statement's record says of its signatures: "" for a statement of none.
    static func signatures(_ r: StatementRecord) -> String {
        guard let s = r.signatures else { return "" }
        return s.root.map { "\(s.signed) verified (root \($0.prefix(19))…)" } ?? "\(s.signed) NOT verified"
    }

    var sortedStatements: [StatementRecord] { statements.sorted { $0.position < $1.position } }

    var reconciliationMembers: [(String, JSONValue)] {
        guard !statements.isEmpty else { return [] }
        let recon = reconciliationFindings
        return [
            (
                "reconciliation",
                .makeObject([
                    ("statements", .array(sortedStatements.map(Self.json))),
                    ("findings", .int(Int64(recon.count))),
                    ("atRisk", .array(Self.totals(recon).map(\.jsonAmount))),
                    ("revenueTotals", .array(Revenue.totals(revenue).map(RevenueReport.json))),
                    ("revenueByDay", .array(revenue.map(RevenueReport.json))),
                ])
            )
        ]
    }

    var reconciliationTable: String {
        guard !statements.isEmpty else { return "" }
        // The signatures column only when a statement has signed entries.
        let signed = statements.contains { $0.signatures != nil }
        var s =
            "\nstatements reconciled\n"
            + textTable(
                ["source", "digest", "period", "lines", "position"] + (signed ? ["signatures"] : []),
                sortedStatements.map { r in
                    [
                        r.statement.source.rawValue + (r.reissueOf.map { " (re-issue of \($0.prefix(19)))" } ?? ""),
                        String(r.statement.digest.prefix(19)),
                        r.statement.source.period(r.statement.periodStart, r.statement.periodEnd),
                        String(r.statement.lines), String(r.position),
                    ] + (signed ? [Self.signatures(r)] : [])
                })
        s += "\nrevenue (ledger beside statements, never summed across currencies)\n"
        s += textTable(RevenueReport.header, RevenueReport.tableRows(Revenue.totals(revenue)))
        return s
    }

    var reconciliationHTML: String {
        guard !statements.isEmpty else { return "" }
        let recon = reconciliationFindings
        var s =
            "<section id=\"reconciliation\" data-statements=\"\(statements.count)\" data-findings=\"\(recon.count)\"><h2>Reconciliation with the stores' statements</h2>"
        s += "<p class=\"sub\">\(statements.count) statements imported; \(recon.count) reconciliation findings"
        let risk = Self.totals(recon)
        s +=
            risk.isEmpty ? ".</p>" : ", at risk " + Self.esc(risk.map(\.description).joined(separator: " + ")) + ".</p>"
        let signed = statements.contains { $0.signatures != nil }
        s +=
            "<div class=\"wide\"><table id=\"statements\"><thead><tr><th>source</th><th>digest</th><th>period</th><th>lines</th><th>position</th>"
            + (signed ? "<th>signatures</th>" : "") + "</tr></thead><tbody>\n"
        for r in sortedStatements {
            let st = r.statement
            s +=
                "<tr class=\"statement\" data-source=\"\(st.source.rawValue)\" data-lines=\"\(st.lines)\"><td>\(st.source.rawValue)</td><td class=\"mono\">\(Self.esc(String(st.digest.prefix(19))))…</td>"
            s +=
                "<td class=\"period\" data-start=\"\(st.periodStart.iso8601)\" data-end=\"\(st.periodEnd.iso8601)\">\(Self.esc(st.source.period(st.periodStart, st.periodEnd)))</td><td class=\"num\">\(st.lines)</td><td class=\"num\">\(r.position)</td>"
            if signed {
                let verified = r.signatures.map { $0.verified ? "true" : "false" } ?? ""
                s += "<td data-verified=\"\(verified)\">\(Self.esc(Self.signatures(r)))</td>"
            }
            s += "</tr>\n"
        }
        s += "</tbody></table></div>"
        s += "<h2>Revenue per currency</h2>" + RevenueReport.charts(revenue)
        s += RevenueReport.htmlTable(Revenue.totals(revenue), id: "revenue-totals")
        return s + "</section>\n"
    }
}
