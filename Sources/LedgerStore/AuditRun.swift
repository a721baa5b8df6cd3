import Foundation
import LedgerCore
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
    /// The log time the windows were measured against (the latest occurredAt replayed).
    public var logTime: Timestamp?
    public var events: Int64
    public var findings: [Finding]
    public var daily: [DailyActivity]
    /// Transactions verified, by channel (the denominator of the summary).
    public var verifiedByChannel: [Channel: Int64]
}

/// The fold's running state, shared with the callback on the connection's thread.
final class AuditScan: Sendable {
    struct State {
        var fold = Projections()
        var daily: [Int64: DailyActivity] = [:]
    }
    let state = Mutex(State())

    func consume(_ scanned: ScannedFact) {
        let ctx = FactContext(position: scanned.position, occurredAt: scanned.occurredAt)
        state.withLock { s in
            switch scanned.fact {
            case .success(let f): s.fold.apply(f, ctx)
            case .failure(let e): s.fold.skip(ctx, type: scanned.type, reason: e.description)
            }
            let micros = scanned.occurredAt.microseconds
            let dayNumber = micros >= 0 ? micros / 86_400_000_000 : (micros + 1) / 86_400_000_000 - 1
            var d = s.daily[dayNumber] ?? DailyActivity(day: String(scanned.occurredAt.iso8601.prefix(10)))
            switch scanned.type {
            case "PaymentVerified", "SubscriptionRenewed": d.payments += 1
            case "EntitlementGranted": d.grants += 1
            case "Refunded": d.refunds += 1
            case "EntitlementRevoked": d.revocations += 1
            default: break
            }
            s.daily[dayNumber] = d
        }
    }
}

extension EventStore {
    /// Replays the log through `through` (the head when nil) in one streamed pass: the fold, the
    /// hash chain and the daily counts. A broken chain becomes a chain-broken finding at the first
    /// position that does not verify, and the rest of the log is still audited.
    public func audit(through: Int64? = nil, options: AuditOptions = AuditOptions(), progress: FoldProgress? = nil) async throws -> AuditRun {
        let head = try await headPosition()
        let target = min(through ?? head, head)
        let scanState = AuditScan()
        let counter = Atomic<Int64>(0)
        // Two streams at once, on two connections: the facts for the fold (only the columns it
        // needs) and the whole rows for the hash chain.
        async let chainCheck = chainProblem(through: target)
        if target > 0 {
            try await scanFacts(after: 0, through: target) { scanned in
                scanState.consume(scanned)
                let n = counter.add(1, ordering: .relaxed).newValue
                if n & 0x3FFF == 0 { progress?(n, target) }
            }
        }
        progress?(counter.load(ordering: .relaxed), target)
        let s = scanState.state.withLock { $0 }
        let chain = try await chainCheck
        var findings = Audit.run(s.fold, options: options)
        var problem = chain.problem
        if problem == nil, target == head, head > 0 {
            // The head row names the last event's hash: a removed or edited tail shows here.
            let sch = quoteIdentifier(configuration.schema)
            let h = try await pool.withConnection { conn in try await conn.query("SELECT last_hash FROM \(sch).log_head") }
            if let stored = h.bytea(0, 0), stored != chain.lastHash {
                problem = (target, "the head's hash differs from the last event's hash")
            }
        }
        if let (position, text) = problem {
            findings.append(Finding(kind: .chainBroken, positions: [position],
                                    detail: "the hash chain does not verify at position \(position): \(text)"))
            findings.sort()
        }
        var verified: [Channel: Int64] = [:]
        for t in s.fold.transactions.values where t.verified { if let c = t.channel { verified[c, default: 0] += 1 } }
        return AuditRun(position: target, logTime: s.fold.logTime, events: counter.load(ordering: .relaxed), findings: findings,
                        daily: s.daily.keys.sorted().map { s.daily[$0]! }, verifiedByChannel: verified)
    }
}

extension EventStore {
    /// Re-hashes the log through `through`: the first position that does not verify, and the last hash.
    func chainProblem(through: Int64) async throws -> (problem: (Int64, String)?, lastHash: [UInt8]) {
        let verifier = Mutex(ChainVerifier())
        if through > 0 {
            try await scan(after: 0, through: through) { event in
                verifier.withLock { $0.consume(event) }
                return true
            }
        }
        let v = verifier.withLock { $0 }
        var problem = v.firstProblem.map { ($0.position, $0.description) }
        if problem == nil, v.lastPosition != through {
            problem = (v.lastPosition + 1, "the log ends at position \(v.lastPosition) but should reach \(through)")
        }
        return (problem, v.previous)
    }
}
