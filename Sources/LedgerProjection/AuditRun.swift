import Foundation
import LedgerCore
import LedgerLog
import LedgerDomain
import LedgerPostgres
import Synchronization

/// Facts per day (by occurredAt, UTC), for the report's charts.
public struct DailyActivity: Hashable, Sendable {
    public var day: String
    /// PaymentVerified and SubscriptionRenewed facts.
    public var payments: Int64 = 0
    public var grants: Int64 = 0
    public var refunds: Int64 = 0
    public var revocations: Int64 = 0
    public init(day: String) { self.day = day }
}

/// One audit pass over the log: the findings as of a position, with what the report needs.
public struct AuditRun: Sendable {
    public var position: Int64
    /// The stored hash of the event at `position`: the head this audit replayed.
    public var headHash: [UInt8]
    /// The log time the windows were measured against (the latest occurredAt replayed).
    public var logTime: Timestamp?
    public var events: Int64
    public var findings: [Finding]
    public var daily: [DailyActivity]
    /// Transactions verified, by channel (the denominator of the summary).
    public var verifiedByChannel: [Channel: Int64]
    /// Shown apart from the findings: sandbox purchases and grants by policy.
    public var sandbox: [SandboxPurchase]
    public var policyGrants: [PolicyGrant]
    /// The stores' statements imported, and revenue per day, channel and currency (the report's
    /// reconciliation section; empty without statements).
    public var statements: [StatementRecord] = []
    public var revenue: [RevenueRow] = []
    /// Subscriptions by the state the stores last signed (the report's lifecycle summary).
    public var subscriptionStates: [String: Int64] = [:]
    /// What the fold spilled out of memory (nil: nothing; see ``FoldMemory``).
    public var spill: SpillReport?
}

extension DailyActivity {
    mutating func count(_ type: String) {
        switch type {
        case "PaymentVerified", "SubscriptionRenewed": payments += 1
        case "EntitlementGranted": grants += 1
        case "Refunded": refunds += 1
        case "EntitlementRevoked": revocations += 1
        default: break
        }
    }
}

/// Facts per day, counted beside the fold (on the connection's thread).
final class DailyCounter: Sendable {
    private let state = Mutex<(days: [Int64: DailyActivity], events: Int64)>(([:], 0))

    func count(_ rows: ScannedRows) {
        state.withLock { s in
            s.events += Int64(rows.count)
            rows.rows.withUnsafeBufferPointer { rows in
                for row in rows {
                    let micros = row.occurredAt.microseconds
                    let dayNumber = micros >= 0 ? micros / 86_400_000_000 : (micros + 1) / 86_400_000_000 - 1
                    // Every day with a fact has its row, counted or not. Looked up first: the
                    // subscript with a default allocated a closure for it at every fact.
                    if let i = s.days.index(forKey: dayNumber) {
                        s.days.values[i].count(row.type)
                    } else {
                        var day = DailyActivity(day: String(row.occurredAt.iso8601.prefix(10)))
                        day.count(row.type)
                        s.days[dayNumber] = day
                    }
                }
            }
        }
    }

    var result: (days: [DailyActivity], events: Int64) {
        state.withLock { s in (s.days.keys.sorted().map { s.days[$0]! }, s.events) }
    }
}

extension LogReplay {
    /// Replays the log through `through` (the head when nil; a position beyond the head is refused
    /// with ``PositionNotReached``): the fold, the hash chain and the daily counts, from one read
    /// of the log. Each row is hashed onto the chain on the connection's thread, its fact decoded on
    /// a thread of its own and folded on another (``FoldPipeline``). A broken chain becomes a chain-broken
    /// finding at the first position that does not verify, and the rest of the log is still audited.
    /// The fold keeps its views within `memory` (``FoldMemory``); the findings do not depend on it.
    public func audit(
        through: Int64? = nil, options: AuditOptions = AuditOptions(), memory: FoldMemory = .automatic,
        progress: FoldProgress? = nil
    ) async throws -> AuditRun {
        let target = try await checkReached(through)
        let daily = DailyCounter()
        // No finding names the facts behind a user: their positions are not kept.
        let (empty, spillFile) = try memory.emptyState(keepsUserPositions: false)
        let (fold, verifier) = try await Self.piped(empty, total: target, progress: progress) { add in
            try await scanFactsVerifyingChain(through: target) { rows in
                daily.count(rows)
                add(rows)
            }
        }
        let chain = try await chainReport(verifier, through: target)
        var findings = Audit.run(fold, options: options)
        if let problem = chain.problem {
            let position = chain.firstBrokenPosition ?? chain.lastPosition
            findings.append(
                Finding(
                    kind: .chainBroken, positions: [position],
                    detail: "the hash chain does not verify at position \(position): \(problem)"))
            findings.sort()
        }
        let verified = Audit.verifiedPurchases(fold)
        let counted = daily.result
        var run = AuditRun(
            position: target, headHash: chain.lastHash, logTime: fold.logTime, events: counted.events,
            findings: findings,
            daily: counted.days, verifiedByChannel: verified.byChannel, sandbox: verified.sandbox,
            policyGrants: Audit.policyGrants(fold))
        run.spill = SpillReport(fold, spillFile)
        run.subscriptionStates = Audit.subscriptionStates(fold)
        if !fold.statements.isEmpty {
            run.statements = Array(fold.statements.statements.values)
            run.revenue = Revenue.compute(fold, by: .day)
        }
        Discarded.free(consume fold)
        return run
    }
}
