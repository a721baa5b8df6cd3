import LedgerCore

/// An imported statement, where it sits in the log.
public struct StatementRecord: Hashable, Sendable, Codable {
    public var statement: StatementImported
    public var position: Int64
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
    /// Periods covered by statements that list every sale, per channel, merged and sorted.
    public internal(set) var salesCoverage: [Channel: [ClosedInterval]] = [:]

    public init() {}

    public var isEmpty: Bool { statements.isEmpty }

    /// `[start, end)`, in microseconds.
    public struct ClosedInterval: Hashable, Sendable, Codable {
        public var start: Int64
        public var end: Int64
    }

    mutating func apply(_ s: StatementImported, _ ctx: FactContext) {
        guard statements[s.digest] == nil else { return }
        statements[s.digest] = StatementRecord(statement: s, position: ctx.position)
        guard s.source.listsSales else { return }
        var spans = salesCoverage[s.channel] ?? []
        spans.append(ClosedInterval(start: s.periodStart.microseconds, end: s.periodEnd.microseconds))
        salesCoverage[s.channel] = Self.merged(spans)
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

    /// Whether statements listing every sale of `channel` cover all of `[from, to)`.
    public func covers(_ channel: Channel, from: Int64, to: Int64) -> Bool {
        guard let spans = salesCoverage[channel] else { return false }
        return spans.contains { $0.start <= from && to <= $0.end }
    }
}
