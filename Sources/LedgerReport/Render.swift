import LedgerCore
import LedgerDomain

extension Money {
    var jsonAmount: JSONValue { .makeObject([("amount", .int(minorUnits)), ("currency", .string(currency.code))]) }
}

extension AuditReport {
    static func json(_ f: Finding) -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        // `app` only where the finding has one (a transaction whose id another one had first).
        return .makeObject(
            [
                ("key", .string(f.key)), ("kind", .string(f.kind.rawValue)), ("severity", .string(f.severity.rawValue)),
                ("channel", opt(f.channel?.rawValue)), ("userId", opt(f.userId)), ("orderId", opt(f.orderId)),
                ("transactionId", opt(f.transactionId)),
            ] + (f.app.map { [("app", .string($0))] } ?? []) + [
                ("positions", .array(f.positions.map { .int($0) })),
                ("amountAtRisk", f.amountAtRisk?.jsonAmount ?? .null), ("detail", .string(f.detail)),
            ])
    }

    static func seconds(_ d: Duration) -> JSONValue { .int(d.components.seconds) }

    // MARK: JSON

    public var jsonValue: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        var members: [(String, JSONValue)] =
            [
                ("report", .string("ledger-audit/1")),
                (
                    "scope",
                    .makeObject([
                        ("position", .int(scope.position)), ("headHash", opt(scope.headHash)),
                        ("events", .int(scope.events)), ("logTime", opt(scope.logTime?.iso8601)),
                        ("asOf", opt(scope.asOf)), ("from", opt(scope.from)), ("user", opt(scope.user)),
                        ("kinds", .array(scope.kinds.map { .string($0.rawValue) })),
                        ("missingGrantWindowSeconds", Self.seconds(scope.options.missingGrantWindow)),
                        ("refundWindowSeconds", Self.seconds(scope.options.refundWindow)),
                        ("staleOrderWindowSeconds", Self.seconds(scope.options.staleOrderWindow)),
                        ("acknowledgementWindowSeconds", Self.seconds(scope.options.acknowledgementWindow)),
                        ("statementWindowSeconds", Self.seconds(scope.options.statementWindow)),
                        ("statementClockSlackSeconds", Self.seconds(scope.options.statementClockSlack)),
                    ])
                ),
                (
                    "summary",
                    .makeObject([
                        ("findings", .int(Int64(findings.count))),
                        ("atRisk", .array(atRisk.map(\.jsonAmount))),
                        ("bySeverity", .makeObject(bySeverity.map { ($0.severity.rawValue, .int(Int64($0.count))) })),
                        (
                            "byKind",
                            .array(
                                byKind.map { k in
                                    .makeObject([
                                        ("kind", .string(k.kind.rawValue)), ("severity", .string(k.severity.rawValue)),
                                        ("count", .int(Int64(k.count))),
                                        ("atRisk", .array(k.atRisk.map(\.jsonAmount))),
                                    ])
                                })
                        ),
                        (
                            "byChannel",
                            .array(
                                byChannel.map { c in
                                    .makeObject([
                                        ("channel", .string(c.channel)), ("count", .int(Int64(c.count))),
                                        ("atRisk", .array(c.atRisk.map(\.jsonAmount))),
                                    ])
                                })
                        ),
                        (
                            "verifiedTransactions",
                            .makeObject(verifiedByChannel.map { ($0.key.rawValue, .int($0.value)) })
                        ),
                    ])
                ),
                (
                    "daily",
                    .array(
                        daily.map { d in
                            .makeObject([
                                ("day", .string(d.day)), ("payments", .int(d.payments)), ("grants", .int(d.grants)),
                                ("refunds", .int(d.refunds)), ("revocations", .int(d.revocations)),
                            ])
                        })
                ),
                ("findings", .array(findings.map(Self.json))),
            ] + setApartMembers + reconciliationMembers
        if let diff {
            members.append(
                (
                    "diff",
                    .makeObject([
                        ("previousPosition", diff.previousPosition.map { .int($0) } ?? .null),
                        ("appeared", .array(diff.appeared.map { .string($0) })),
                        ("disappeared", .array(diff.disappeared.map { .string($0) })),
                        (
                            "changed",
                            .array(
                                diff.changed.map { c in
                                    .makeObject([
                                        ("key", .string(c.key)), ("before", .string(c.before)),
                                        ("after", .string(c.after)),
                                    ])
                                })
                        ),
                    ])
                ))
        }
        return .makeObject(members)
    }

    public var json: String { jsonValue.canonicalText + "\n" }

    // MARK: CSV

    static func csvField(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }

    /// One row per finding (RFC 4180), the amount in minor units and, beside it, in the currency's
    /// own decimals (`153600` and `1536.00` CNY), as a spreadsheet shows money.
    public var csv: String {
        var out =
            "kind,severity,channel,user_id,order_id,transaction_id,positions,amount_minor_units,amount,currency,detail,key\r\n"
        for f in findings {
            let cells = [
                f.kind.rawValue, f.severity.rawValue, f.channel?.rawValue ?? "", f.userId ?? "", f.orderId ?? "",
                f.transactionId ?? "",
                f.positions.map(String.init).joined(separator: " "), f.amountAtRisk.map { String($0.minorUnits) } ?? "",
                f.amountAtRisk?.decimalText ?? "", f.amountAtRisk?.currency.code ?? "", f.detail, f.key,
            ]
            out += cells.map(Self.csvField).joined(separator: ",") + "\r\n"
        }
        return out
    }

    // MARK: table

    public var table: String {
        var s = "audit as of position \(scope.position)" + (scope.logTime.map { " (log time \($0.iso8601))" } ?? "")
        s += ": \(scope.events) facts replayed, \(findings.count) findings"
        if let h = scope.headHash { s += ", head hash \(h)" }
        if !atRisk.isEmpty { s += ", at risk " + atRisk.map(\.description).joined(separator: " + ") }
        s += "\n"
        if let asOf = scope.asOf { s += "as of \(asOf)\n" }
        if let from = scope.from { s += "findings with evidence from \(from)\n" }
        if let user = scope.user { s += "user \(user) only\n" }
        if !scope.kinds.isEmpty { s += "kinds: \(scope.kinds.map(\.rawValue).joined(separator: ", "))\n" }
        s +=
            "\n"
            + textTable(
                ["kind", "severity", "findings", "at risk"],
                byKind.map { k in
                    [
                        k.kind.rawValue, k.severity.rawValue, String(k.count),
                        k.atRisk.map(\.description).joined(separator: " + "),
                    ]
                })
        if !findings.isEmpty {
            s +=
                "\nby channel\n"
                + textTable(
                    ["channel", "findings", "at risk"],
                    byChannel.map { c in
                        [c.channel, String(c.count), c.atRisk.map(\.description).joined(separator: " + ")]
                    })
            s +=
                "\nfindings\n"
                + textTable(
                    ["kind", "severity", "user", "order", "transaction", "positions", "at risk", "detail"],
                    findings.map { f in
                        [
                            f.kind.rawValue, f.severity.rawValue, f.userId ?? "-", f.orderId ?? "-",
                            f.transactionId ?? "-",
                            f.positions.map(String.init).joined(separator: ","), f.amountAtRisk?.description ?? "-",
                            f.detail,
                        ]
                    })
        }
        s += setApartTable + reconciliationTable
        if let diff {
            s +=
                "\nsince the earlier report\(diff.previousPosition.map { " (position \($0))" } ?? ""): \(diff.appeared.count) appeared, \(diff.disappeared.count) disappeared, \(diff.changed.count) changed\n"
            for k in diff.appeared { s += "  + \(k)\n" }
            for k in diff.disappeared { s += "  - \(k)\n" }
            for c in diff.changed { s += "  ~ \(c.key)\n      before \(c.before)\n      after  \(c.after)\n" }
        }
        return s
    }
}

/// A plain text table with aligned columns (no trailing spaces).
public func textTable(_ header: [String], _ rows: [[String]]) -> String {
    var widths = header.map(\.count)
    for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
    func line(_ cells: [String]) -> String {
        var out = ""
        for (i, c) in cells.enumerated() {
            out += c
            if i < cells.count - 1 { out += String(repeating: " ", count: widths[i] - c.count + 2) }
        }
        while out.last == " " { out.removeLast() }
        return out + "\n"
    }
    return line(header) + line(widths.map { String(repeating: "-", count: $0) }) + rows.map(line).joined()
}
