import Foundation
import LedgerCore
import LedgerDomain

/// A realistic, deterministic purchase history of `users` users over `days` days across the App
/// Store (StoreKit 1 with applicationUsername, StoreKit 2 with appAccountToken), Google Play and
/// WeChat Pay, written the way the services would write it: orders, launches, client callbacks
/// (lost, repeated, re-delivered at the next launch, with nil applicationUsername), interrupted
/// purchases, purchases from the phone's settings page, 21005 verification retries, duplicated
/// WeChat notifications and active queries, subscriptions with renewals, lost renewal
/// notifications found by polling, billing retry and grace, upgrades, cancellations, refund
/// requests, refunds and refund reversals, coins spent. Binding is decided by `Binding.decide`,
/// grants follow the catalogue.
///
/// With `FaultSpec.none` the audit must find nothing; each injected fault produces exactly one
/// finding, listed in `groundTruth`. The log ends four days after the last purchase activity, so
/// every window has passed (stale orders are injected on purpose only).
public struct Simulator: Sendable {
    public let users: Int
    public let days: Int
    public let seed: UInt64
    public let faults: FaultSpec
    /// The history in log order, each fact with its `occurredAt`. Idempotency keys are unique.
    public let facts: [(fact: Fact, at: Timestamp)]
    /// The findings injected, one per injected fault (a `Set` of their keys is what the audit must report).
    public let groundTruth: [ExpectedFinding]
    /// How many purchases were started (the denominator of the fault rates).
    public let purchases: Int
    /// How many faults of each kind were injected.
    public let injected: [FindingKind: Int]

    /// Day 0 of every simulated history.
    public static let start = Timestamp("2026-03-02T00:00:00Z")!
    static let catalogueFrom = Timestamp("2026-02-01T00:00:00Z")!
    static let cny = Currency("CNY")!

    static func product(_ c: Channel, _ id: String, _ e: Entitlement, _ fen: Int64) -> ProductDefinition {
        ProductDefinition(
            channel: c, storeProductId: id, entitlement: e, version: 1, validFrom: catalogueFrom,
            price: Money(minorUnits: fen, currency: cny))
    }

    static func sub(_ days: Int64, rank: Int64) -> Entitlement {
        .subscription(entitlement: "vip", group: "vip", periodDays: days, rank: rank)
    }

    /// The catalogue every simulated history starts with.
    public static let catalogue: [ProductDefinition] = [
        product(.appstore, "com.sim.coins60", .coins(60), 600),
        product(.appstore, "com.sim.coins300", .coins(300), 3000),
        product(.appstore, "com.sim.noads", .feature("no_ads"), 1800),
        product(.appstore, "com.sim.vip.week", sub(7, rank: 1), 1200),
        product(.appstore, "com.sim.vip.week.plus", sub(7, rank: 2), 1800),
        product(.appstore, "com.sim.vip.quarter", .period(entitlement: "vip", days: 90), 6800),
        product(.googleplay, "coins_120", .coins(120), 1200),
        product(.googleplay, "vip_weekly", sub(7, rank: 1), 1200),
        product(.googleplay, "vip_weekly_plus", sub(7, rank: 2), 1800),
        product(.wechat, "wx_coins_300", .coins(300), 3000),
        product(.wechat, "wx_vip_quarter", .period(entitlement: "vip", days: 90), 6800),
    ]

    static func def(_ c: Channel, _ id: String) -> ProductDefinition {
        guard let d = catalogue.first(where: { $0.channel == c && $0.storeProductId == id }) else {
            preconditionFailure("no product \(c) \(id)")
        }
        return d
    }

    /// `progress` hears the users simulated so far and the total, after each user (the CLI's bar).
    public init(
        users: Int, days: Int, seed: UInt64, faults: FaultSpec,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) {
        self.users = max(1, users)
        self.days = max(1, days)
        self.seed = seed
        self.faults = faults
        var items: [SimItem] = []
        var order = 0
        for d in Self.catalogue {
            items.append(SimItem(t: d.validFrom.microseconds, user: -1, seq: order, fact: .productDefined(d)))
            order += 1
        }
        var truth: [ExpectedFinding] = []
        var purchases = 0
        var injected: [FindingKind: Int] = [:]
        let horizon = Self.start.microseconds + Int64(self.days) * Sim.day
        for u in 0..<self.users {
            var sim = UserSim(index: u, seed: seed, horizon: horizon, faults: faults)
            sim.run(days: self.days)
            items.append(contentsOf: sim.resolvedItems())
            truth.append(contentsOf: sim.truth)
            purchases += sim.purchases
            for (k, n) in sim.injected { injected[k, default: 0] += n }
            progress?(Int64(u + 1), Int64(self.users))
        }
        items.sort { ($0.t, $0.user, $0.seq) < ($1.t, $1.user, $1.seq) }
        // Trailing log time: two days after the last activity (every window has passed), marked by
        // an App Store TEST notification.
        let end = max(horizon, items.last?.t ?? horizon) + 4 * Sim.day
        let testId = "00000000-7e57-4000-8000-" + Script.pad(Int(seed % 1_000_000_000_000), 12)
        items.append(
            SimItem(
                t: end, user: Int.max, seq: 0,
                fact: .storeNotificationReceived(
                    StoreNotificationReceived(
                        channel: .appstore, notificationId: testId, type: NotificationType(raw: "TEST"),
                        signedAt: Timestamp(microsecondsSince1970: end),
                        rawDigest: Sim.digest("appstore:notification:\(testId)")))))
        self.facts = items.map { (fact: $0.fact, at: Timestamp(microsecondsSince1970: $0.t)) }
        self.groundTruth = truth
        self.purchases = purchases
        self.injected = injected
    }

    /// The history folded in memory, each fact at its index in the history (plus one) as its position:
    /// what the log would give once the history is appended to an empty one.
    public func fold() -> Projections {
        var p = Projections()
        for (i, f) in facts.enumerated() { p.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at)) }
        return p
    }

    /// The history as events to append: deterministic event ids (from the seed and the index) and
    /// the writing service as metadata.
    public func events() -> [NewEvent] {
        facts.enumerated().map { i, f in
            var g = SplitMix64(seed: seed ^ (UInt64(i) &* 0x9E37_79B9_7F4A_7C15))
            let id = Sim.uuid(g.next(), UInt64(i))
            return f.fact.newEvent(
                occurredAt: f.at, eventId: id,
                metadata: EventMetadata(correlationId: "sim-\(seed)", source: Sim.source(f.fact)))
        }
    }
}

struct SimItem {
    var t: Int64
    var user: Int
    var seq: Int
    var fact: Fact
}

extension UUID {
    /// A version 4 UUID built from two numbers: `high` in the first 8 bytes, `unique` in the last 8
    /// (version and variant bits set), so it is deterministic, and unique whenever `unique` is.
    public init(high: UInt64, unique: UInt64) {
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { b[i] = UInt8(truncatingIfNeeded: high >> (8 * UInt64(i))) }
        for i in 0..<8 { b[15 - i] = UInt8(truncatingIfNeeded: unique >> (8 * UInt64(i))) }
        self.init(bytes: b, version: 4)
    }
}

enum Sim {
    static let sec: Int64 = 1_000_000
    static let minute: Int64 = 60 * sec
    static let hour: Int64 = 60 * minute
    static let day: Int64 = 24 * hour

    static func digest(_ s: String) -> String { SHA256.digest(Array(s.utf8)) }

    /// A version 4 UUID whose last 8 bytes carry `unique` (so uniqueness never depends on chance).
    static func uuid(_ random: UInt64, _ unique: UInt64) -> UUID { UUID(high: random, unique: unique) }

    static func source(_ fact: Fact) -> String {
        switch fact {
        case .productDefined, .productChanged: return "catalogue"
        case .orderCreated, .paymentLaunched, .orderClosed: return "order-service"
        case .clientCallbackReceived: return "client"
        case .storeNotificationReceived(let f): return f.channel.rawValue
        case .paymentVerified, .verificationFailed: return "payment-callback-handler"
        case .transactionBound, .entitlementGranted, .entitlementRevoked: return "fulfilment"
        case .coinsSpent: return "wallet"
        default: return "store-notification-receiver"
        }
    }
}
