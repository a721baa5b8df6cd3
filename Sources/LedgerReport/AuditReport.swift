import LedgerCore
import LedgerDomain

/// An audit report: findings as of a position, their summary, and the daily activity behind the
/// charts. Rendered as a table, JSON, CSV or a self-contained HTML page. The same inputs always give
/// the same bytes: nothing here reads a clock.
public struct AuditReport: Sendable {
    public struct Day: Hashable, Sendable {
        public var day: String
        public var payments: Int64
        public var grants: Int64
        public var refunds: Int64
        public var revocations: Int64
        public init(day: String, payments: Int64, grants: Int64, refunds: Int64, revocations: Int64) {
            self.day = day
            self.payments = payments
            self.grants = grants
            self.refunds = refunds
            self.revocations = revocations
        }
    }

    /// What was asked: echoed in the report so a re-run can be compared.
    public struct Scope: Sendable, Hashable {
        public var position: Int64
        /// The hex SHA-256 of the event at `position`: which log the report replayed (compare
        /// with `ledger anchor`).
        public var headHash: String?
        public var logTime: Timestamp?
        public var events: Int64
        public var asOf: String?
        public var from: String?
        public var user: String?
        public var kinds: [FindingKind]
        public var options: AuditOptions
        public init(
            position: Int64, headHash: String? = nil, logTime: Timestamp?, events: Int64, asOf: String? = nil,
            from: String? = nil, user: String? = nil,
            kinds: [FindingKind] = [], options: AuditOptions = AuditOptions()
        ) {
            self.position = position
            self.headHash = headHash
            self.logTime = logTime
            self.events = events
            self.asOf = asOf
            self.from = from
            self.user = user
            self.kinds = kinds
            self.options = options
        }
    }

    public var scope: Scope
    public var findings: [Finding]
    public var daily: [Day]
    public var verifiedByChannel: [Channel: Int64]
    public var diff: ReportDiff?
    /// Shown in sections of their own: sandbox purchases (no revenue, no finding) and grants by
    /// policy (goodwill, compensation...), for finance.
    public var sandbox: [SandboxPurchase]
    public var policyGrants: [PolicyGrant]
    /// The stores' statements imported (the reconciliation section) and revenue per day (its chart);
    /// both empty when no statement was imported, and then the report is as before.
    public var statements: [StatementRecord] = []
    public var revenue: [RevenueRow] = []
    /// Subscriptions by the state the stores last signed (`active`, `grace`, `on-hold`...): a
    /// summary, not findings; left out when empty.
    public var subscriptionStates: [String: Int64] = [:]

    public init(
        scope: Scope, findings: [Finding], daily: [Day], verifiedByChannel: [Channel: Int64] = [:],
        diff: ReportDiff? = nil,
        sandbox: [SandboxPurchase] = [], policyGrants: [PolicyGrant] = []
    ) {
        self.scope = scope
        self.findings = findings.sorted()
        self.daily = daily
        self.verifiedByChannel = verifiedByChannel
        self.diff = diff
        self.sandbox = sandbox
        self.policyGrants = policyGrants
    }

    // MARK: summary

    public struct KindSummary: Hashable, Sendable {
        public var kind: FindingKind
        public var severity: Severity
        public var count: Int
        public var atRisk: [Money]
    }

    public var byKind: [KindSummary] {
        FindingKind.allCases.compactMap { k in
            let f = findings.filter { $0.kind == k }
            guard !f.isEmpty else { return nil }
            return KindSummary(kind: k, severity: f.map(\.severity).max()!, count: f.count, atRisk: Self.totals(f))
        }
    }

    public var byChannel: [(channel: String, count: Int, atRisk: [Money])] {
        let names = Set(findings.map { $0.channel?.rawValue ?? "-" }).sorted()
        return names.map { n in
            let f = findings.filter { ($0.channel?.rawValue ?? "-") == n }
            return (n, f.count, Self.totals(f))
        }
    }

    public var bySeverity: [(severity: Severity, count: Int)] {
        Severity.allCases.reversed().map { s in (s, findings.filter { $0.severity == s }.count) }
    }

    /// Money at risk per currency, over every finding.
    public var atRisk: [Money] { Self.totals(findings) }

    static func totals(_ findings: [Finding]) -> [Money] {
        var by: [Currency: Int64] = [:]
        for f in findings { if let m = f.amountAtRisk { by[m.currency, default: 0] += m.minorUnits } }
        return by.keys.sorted().map { Money(minorUnits: by[$0]!, currency: $0) }
    }

    /// True when a finding at or above `severity` exists.
    public func hasFindings(atOrAbove severity: Severity) -> Bool { findings.contains { $0.severity >= severity } }
}

/// What changed between an earlier report and this one, by finding key.
public struct ReportDiff: Sendable, Hashable {
    public var previousPosition: Int64?
    public var appeared: [String]
    public var disappeared: [String]
    public var changed: [(key: String, before: String, after: String)]

    public static func == (a: ReportDiff, b: ReportDiff) -> Bool {
        a.previousPosition == b.previousPosition && a.appeared == b.appeared && a.disappeared == b.disappeared
            && a.changed.map { "\($0.key)\u{1}\($0.before)\u{1}\($0.after)" }
                == b.changed.map { "\($0.key)\u{1}\($0.before)\u{1}\($0.after)" }
    }
    public func hash(into h: inout Hasher) {
        h.combine(appeared)
        h.combine(disappeared)
    }

    public var isEmpty: Bool { appeared.isEmpty && disappeared.isEmpty && changed.isEmpty }

    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Compares with an earlier JSON report (`ledger audit --format json`).
    public static func compare(previous json: String, with report: AuditReport) throws(ReadError) -> ReportDiff {
        let old: JSONValue
        do { old = try JSONValue.parse(json) } catch {
            throw ReadError(description: "the earlier report is not JSON: \(error)")
        }
        guard case .array(let items)? = old["findings"] else {
            throw ReadError(
                description:
                    "the earlier report has no \"findings\" array; pass a report written by `ledger audit --format json`"
            )
        }
        var before: [String: JSONValue] = [:]
        for (i, item) in items.enumerated() {
            guard let key = item["key"]?.stringValue else {
                throw ReadError(description: "finding \(i + 1) of the earlier report has no \"key\"")
            }
            before[key] = item
        }
        var after: [String: JSONValue] = [:]
        for f in report.findings { after[f.key] = AuditReport.json(f) }
        let appeared = after.keys.filter { before[$0] == nil }.sorted()
        let disappeared = before.keys.filter { after[$0] == nil }.sorted()
        let changed = after.keys.sorted().compactMap { k -> (key: String, before: String, after: String)? in
            guard let b = before[k], let a = after[k], b != a else { return nil }
            return (k, b.compactText, a.compactText)
        }
        return ReportDiff(
            previousPosition: old["scope"]?["position"]?.intValue, appeared: appeared, disappeared: disappeared,
            changed: changed)
    }
}
