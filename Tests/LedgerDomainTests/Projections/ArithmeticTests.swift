import Foundation
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios
import PropertyBased
import Testing

/// Random histories of facts the append accepts, with the largest numbers their schemas allow,
/// crowded onto a few users and transactions so that grants, spends, refunds and revocations pile up.
struct ExtremeHistory {
    var rng: SplitMix64
    var facts: [(Fact, Timestamp)] = []
    var clock = Timestamp("2026-01-01T00:00:00Z")!
    static let cny = Currency("CNY")!

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func int(_ r: ClosedRange<Int64>) -> Int64 {
        r.lowerBound + Int64(rng.next() % UInt64(r.upperBound - r.lowerBound + 1))
    }
    mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
    mutating func big(_ r: ClosedRange<Int64>) -> Int64 { rng.next() % 2 == 0 ? r.upperBound : int(r) }

    mutating func entitlement() -> Entitlement {
        switch rng.next() % 4 {
        case 0: return .coins(big(1...1_000_000_000))
        case 1: return .feature("no_ads")
        case 2: return .subscription(entitlement: "vip", group: "vip", periodDays: big(1...3660), rank: int(0...1000))
        default: return .period(entitlement: "vip", days: big(1...36600))
        }
    }

    mutating func money() -> Money { Money(minorUnits: big(0...Money.maximumMinorUnits), currency: Self.cny) }

    mutating func fact(_ i: Int) -> Fact {
        let user = "u\(int(1...3))", tx = "t\(int(1...4))", product = "p\(int(1...2))"
        switch rng.next() % 9 {
        case 0:
            return .productDefined(
                ProductDefinition(
                    channel: .appstore, storeProductId: product, entitlement: entitlement(),
                    version: Int64(i + 1), validFrom: clock, price: money()))
        case 1:
            return .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: tx, originalTransactionId: pick([nil, "t1"]),
                    productId: product, quantity: big(1...10_000), purchaseDate: clock,
                    expiresDate: pick([nil, clock.addingDaysSaturated(big(1...36600))]), price: money()))
        case 2, 3:
            return .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(i)", userId: user, transactionId: tx, entitlement: entitlement(),
                    quantity: big(1...10_000)))
        case 4: return .coinsSpent(CoinsSpent(spendId: "s\(i)", userId: user, amount: big(1...1_000_000_000)))
        case 5:
            return .refunded(
                Refunded(channel: .appstore, transactionId: tx, refundId: "r\(i)", amount: money(), refundedAt: clock))
        case 6:
            return .entitlementRevoked(
                EntitlementRevoked(userId: user, transactionId: tx, reason: pick([.refund, .support, .revoke])))
        case 7:
            return .transactionBound(
                TransactionBound(channel: .appstore, transactionId: tx, orderId: nil, userId: user, method: .manual))
        default:
            return .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: "t1", transactionId: "t\(int(5...6))",
                    productId: product, purchaseDate: clock,
                    expiresDate: clock.addingDaysSaturated(big(1...36600)), price: money()))
        }
    }

    /// `count` facts, each checked to be one the append accepts (decoded back from its payload).
    static func accepted(seed: UInt64, count: Int) throws -> [(Fact, Timestamp)] {
        var h = ExtremeHistory(seed: seed)
        for i in 0..<count {
            let f = h.fact(i)
            let back = try FactCatalogue.decode(
                type: f.typeName, schemaVersion: FactCatalogue.currentVersions[f.typeName]!, payload: f.payload)
            h.facts.append((back, h.clock))
            h.clock = Timestamp(microsecondsSince1970: h.clock.microseconds + h.int(1...86_400) * 1_000_000)
        }
        return h.facts
    }
}

/// Everything that reads a folded state: the projections' views, owed versus granted, the audit.
private func foldAndReadEverything(_ facts: [(Fact, Timestamp)]) -> (Projections, [Finding]) {
    var p = Projections()
    for (i, (f, at)) in facts.enumerated() { p.apply(f, FactContext(position: Int64(i + 1), occurredAt: at)) }
    for t in p.transactions.values {
        _ = p.owedGranted(t)
        _ = t.refundedAmount
        _ = t.unitsOwedAfterRefunds(.max)
    }
    for u in p.users.values {
        _ = u.coinBalance
        for period in u.periods { _ = u.remainingDays(period.entitlement, at: Timestamp("2026-01-01T00:00:00Z")!) }
    }
    for s in p.subscriptions.values {
        _ = s.expiresAt
        _ = s.status
    }
    return (p, Audit.run(p))
}

@Suite("Checked arithmetic: no accepted fact can trap a fold")
struct ArithmeticTests {
    static let day0 = Timestamp("2026-01-01T00:00:00Z")!

    static func grant(_ id: String, _ e: Entitlement, quantity: Int64) -> Fact {
        .entitlementGranted(
            EntitlementGranted(grantId: id, userId: "u1", transactionId: "t1", entitlement: e, quantity: quantity))
    }

    @Test("a 36,600-day period granted 2,918 times ends on the last day the ledger represents")
    func longestPeriod() {
        let (p, _) = foldAndReadEverything([
            (Self.grant("g1", .period(entitlement: "vip", days: 36_600), quantity: 2_918), Self.day0)
        ])
        let period = p.users["u1"]!.periods[0]
        #expect(period.totalDays == 36_600 * 2_918)
        #expect(period.endsAt == Timestamp.latestPeriodEnd)
    }

    @Test("three stacked grants of the longest period, 1,000 times each, saturate instead of trapping")
    func stackedPeriods() {
        let e = Entitlement.period(entitlement: "vip", days: 36_600)
        let facts = (1...3).map { (Self.grant("g\($0)", e, quantity: 1_000), Self.day0) }
        let (p, _) = foldAndReadEverything(facts)
        #expect(p.users["u1"]!.periods[0].endsAt == Timestamp.latestPeriodEnd)
        #expect(p.users["u1"]!.remainingDays("vip", at: Self.day0) > 2_900_000)
    }

    @Test("coin credits and clawbacks past Int64 hold at its bounds; the balance is still judged")
    func coinBounds() {
        var p = Projections()
        var rich = UserView(userId: "u1"), poor = UserView(userId: "u2")
        rich.coinsCredited = .max - 5
        poor.coinsClawedBack = .max - 5
        p.users["u1"] = rich
        p.users["u2"] = poor
        p.apply(
            Self.grant("g1", .coins(1_000_000_000), quantity: 10_000), FactContext(position: 1, occurredAt: Self.day0))
        p.apply(
            .coinsSpent(CoinsSpent(spendId: "s1", userId: "u2", amount: 1_000_000_000)),
            FactContext(position: 2, occurredAt: Self.day0))
        #expect(p.users["u1"]!.coinsCredited == .max)
        #expect(p.users["u1"]!.coinBalance == .max)
        #expect(p.users["u2"]!.coinBalance == .min)
        let findings = Audit.run(p)
        #expect(findings.contains { $0.kind == .negativeBalance && $0.userId == "u2" && $0.positions == [2] })
    }

    @Test(
        "saturating operations hold at the bounds",
        arguments: [
            (Int64.max, Int64(1), Int64.max), (Int64.min, Int64(-1), Int64.min), (Int64(40), Int64(2), Int64(42)),
        ])
    func saturatingAdd(a: Int64, b: Int64, sum: Int64) {
        #expect(a.addingSaturated(b) == sum)
        #expect(a.subtractingSaturated(-b) == sum)
    }

    @Test func saturatingMultiply() {
        #expect(Int64.max.multipliedSaturated(by: 2) == .max)
        #expect(Int64.max.multipliedSaturated(by: -2) == .min)
        #expect(Int64(-3).multipliedSaturated(by: Int64.max) == .min)
        #expect(Int64(6).multipliedSaturated(by: 7) == 42)
    }

    @Test("random histories of accepted facts with extreme numbers fold and audit without trapping")
    func randomHistories() async {
        await propertyCheck(count: 200, input: Gen.int64(in: 0 ... .max)) { seed in
            let facts: [(Fact, Timestamp)]
            do { facts = try ExtremeHistory.accepted(seed: UInt64(seed), count: 60) } catch {
                Issue.record("seed \(seed): a generated fact was refused: \(error)")
                return
            }
            let (p, findings) = foldAndReadEverything(facts)
            #expect(p.position == Int64(facts.count))
            // The audit is deterministic even at the bounds.
            #expect(findings == Audit.run(p))
        }
    }
}
