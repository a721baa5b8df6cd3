import LedgerCore

/// An imported statement, where it sits in the log.
public struct StatementRecord: Hashable, Sendable, Codable {
    public var statement: StatementImported
    public var position: Int64
    /// The digest of the statement this one re-issues: the first imported of the same source, app,
    /// merchant and period, with other bytes. Both are kept; a line both list is matched once.
    public var reissueOf: String?
    /// For a statement of signed entries: verified (to the root named) once any import verified
    /// them, else not verified.
    public var signatures: StatementSignatures?
}

/// A statement line, where it sits in the log.
public struct StatementLineRecord: Hashable, Sendable, Codable {
    public var line: StatementLine
    public var position: Int64
}

/// The stores' statements as the log holds them: a pure fold of StatementImported and
/// StatementLine facts. The same sale (or refund) listed by two statements (a trade bill and a
/// refund bill, or two overlapping history downloads) is one subject: the first line is kept.
public struct StatementBook: Hashable, Sendable, Codable {
    /// By digest.
    public internal(set) var statements: [String: StatementRecord] = [:]
    /// Lines naming a transaction, by ``StatementLine/subject``: the first line seen.
    public internal(set) var lines: [String: StatementLineRecord] = [:]
    /// Periods covered by statements that list every sale, per channel and app (a statement of one
    /// app says nothing of another's sales; one that names no app covers every app of its
    /// channel, under the app ""), merged and sorted.
    public internal(set) var salesCoverage: [Channel: [String: [ClosedInterval]]] = [:]

    public init() {}

    public var isEmpty: Bool { statements.isEmpty }

    /// The statements that re-issue an imported period, in log order.
    public var reissues: [StatementRecord] {
        statements.values.filter { $0.reissueOf != nil }.sorted { $0.position < $1.position }
    }

    /// Whether the statement `digest` was re-issued, or re-issues another: its family lists a
    /// period twice, and a line may stand there as first written and as corrected.
    public func isOfReissuedFamily(_ digest: String) -> Bool {
        let family = statements[digest]?.reissueOf ?? digest
        return statements.values.contains { $0.reissueOf == family }
    }

    /// `[start, end)`, in microseconds.
    public struct ClosedInterval: Hashable, Sendable, Codable {
        public var start: Int64
        public var end: Int64
    }

    /// A statement is identified by its digest (the same bytes under any file name are the same
    /// statement); another digest for a period already imported is a re-issue, kept and marked
    /// (not for the App Store financial report, which comes once per region).
    mutating func apply(_ s: StatementImported, _ ctx: FactContext) {
        guard statements[s.digest] == nil else { return }
        // The financial report comes per region for one month: another file for the period is
        // another region, not a re-issue.
        let original =
            s.source == .appstoreFinance
            ? nil
            : statements.values.filter {
                let o = $0.statement
                return o.source == s.source && o.app == s.app && o.merchant == s.merchant
                    && o.periodStart == s.periodStart && o.periodEnd == s.periodEnd
            }.min { $0.position < $1.position }
        statements[s.digest] = StatementRecord(
            statement: s, position: ctx.position, reissueOf: original?.statement.digest)
        guard s.source.listsSales else { return }
        var spans = salesCoverage[s.channel]?[s.app ?? ""] ?? []
        spans.append(ClosedInterval(start: s.periodStart.microseconds, end: s.periodEnd.microseconds))
        salesCoverage[s.channel, default: [:]][s.app ?? ""] = Self.merged(spans)
    }

    /// A verification is kept over a record of none; the first verification is kept over a later
    /// one. A record of a statement not imported says nothing.
    mutating func apply(_ s: StatementSignatures) {
        guard let record = statements[s.digest] else { return }
        if let known = record.signatures, known.verified || !s.verified { return }
        statements[s.digest]?.signatures = s
    }

    /// A line naming no transaction (the App Store financial report's aggregates) stays in the log
    /// as a fact; no rule or revenue figure reads it.
    mutating func apply(_ l: StatementLine, _ ctx: FactContext) {
        guard l.transactionId != nil else { return }
        let subject = l.subject
        if lines[subject] == nil { lines[subject] = StatementLineRecord(line: l, position: ctx.position) }
    }

    static func merged(_ spans: [ClosedInterval]) -> [ClosedInterval] {
        var out: [ClosedInterval] = []
        for s in spans.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            if let last = out.last, s.start <= last.end {
                out[out.count - 1].end = max(last.end, s.end)
            } else {
                out.append(s)
            }
        }
        return out
    }

    /// Whether a statement listing every sale of `channel` and `app` (or of the whole channel)
    /// covers all of `[from, to)`. A transaction that names no app is covered by any app's statement.
    public func covers(_ channel: Channel, app: String?, from: Int64, to: Int64) -> Bool {
        guard let byApp = salesCoverage[channel] else { return false }
        func spans(_ s: [ClosedInterval]?) -> Bool { s?.contains { $0.start <= from && to <= $0.end } ?? false }
        guard let app else { return byApp.values.contains { spans($0) } }
        return spans(byApp[app]) || spans(byApp[""])
    }
}
