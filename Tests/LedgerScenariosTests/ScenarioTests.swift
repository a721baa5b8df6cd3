import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

/// The release scenarios, folded through `Projections`.
@Suite("Scenarios")
struct ScenarioTests {
    // MARK: every scenario

    @Test(
        "the twelve scenarios of the field reports, the fourteen of real store traffic, the eight of the stores' signed word and the eight of real histories, numbered in order"
    )
    func numbered() {
        #expect(Scenarios.all.map(\.number) == Array(1...42))
        #expect(Set(Scenarios.all.map(\.name)).count == 42)
    }

    @Test("each scenario meets its documented outcome", arguments: Scenarios.all)
    func meetsExpectation(_ s: Scenario) {
        let p = s.projections()
        #expect(s.expected.mismatches(in: p) == [], "\(s)")
    }

    @Test("each scenario meets its checkpoints", arguments: Scenarios.all)
    func meetsCheckpoints(_ s: Scenario) {
        for c in s.checkpoints {
            #expect(c.factCount <= s.facts.count)
            #expect(c.expected.mismatches(in: s.projections(upTo: c.factCount)) == [], "\(s): \(c.label)")
        }
    }

    @Test(
        "every transaction ends granted exactly what it is owed, with no anomaly, unless the scenario documents otherwise",
        arguments: Scenarios.all.filter { $0.expected.transactions.values.allSatisfy { $0.status == .ok } })
    func ownedEqualsGranted(_ s: Scenario) {
        let p = s.projections()
        for t in p.transactions.values.sorted(by: { $0.transactionId < $1.transactionId }) {
            let og = p.owedGranted(t)
            #expect(og.status == .ok, "\(s): \(t.transactionId) owed \(og.owedUnits) net \(og.netUnits)")
        }
        #expect(p.anomalies.isEmpty, "\(s): \(p.anomalies)")
    }

    @Test(
        "the log is well formed: catalogue first, unique idempotency keys, redeliveries are the same facts",
        arguments: Scenarios.all)
    func wellFormed(_ s: Scenario) throws {
        let firstNonProduct =
            s.facts.firstIndex { if case .productDefined = $0.fact { return false } else { return true } }
            ?? s.facts.count
        #expect(firstNonProduct >= 1)
        #expect(
            s.facts[firstNonProduct...].allSatisfy {
                if case .productDefined = $0.fact { return false } else { return true }
            })
        // Log time never runs backwards after the catalogue.
        let times = s.facts[firstNonProduct...].map(\.at)
        #expect(times == times.sorted(), "\(s)")
        let keys = s.facts.compactMap(\.fact.idempotencyKey)
        #expect(Set(keys).count == keys.count, "\(s): duplicate idempotency key in the log")
        let events = s.events(), again = s.redeliveryEvents()
        #expect(events.count == s.facts.count)
        #expect(again.count == s.redeliveries.count)
        for (r, e) in zip(s.redeliveries, again) {
            let original = events[r.index]
            #expect(r.index < r.afterFactCount)
            #expect(e.idempotencyKey != nil && e.idempotencyKey == original.idempotencyKey, "\(s): \(r.note)")
            #expect(e.payload == original.payload && e.stream == original.stream && e.type == original.type)
            #expect(e.eventId != original.eventId)
        }
        // Every fact survives its payload: it decodes to itself.
        for (f, e) in zip(s.facts, events) {
            let decoded = try FactCatalogue.decode(type: e.type, schemaVersion: e.schemaVersion, payload: e.payload)
            #expect(decoded == f.fact, "\(s): \(e.type)")
            #expect(e.occurredAt == f.at)
        }
    }

    @Test("events are deterministic and their ids unique across scenarios")
    func deterministicEvents() {
        var ids = Set<UUID>()
        for s in Scenarios.all {
            let a = s.events() + s.redeliveryEvents(), b = s.events() + s.redeliveryEvents()
            #expect(a == b)
            for e in a { #expect(ids.insert(e.eventId).inserted, "\(s): \(e.eventId)") }
        }
        #expect(Scenario.eventId(scenario: 8, index: 3) == UUID(uuidString: "5ce00000-0008-4000-8000-000000000003"))
    }

    @Test("all scenarios appended to one log fold to each scenario's outcome")
    func sharedLog() {
        // Catalogue facts repeat across scenarios: the log keeps the first (same key, same content).
        var seen = Set<String>()
        var p = Projections()
        var position: Int64 = 0
        for s in Scenarios.all {
            for f in s.facts {
                if let k = f.fact.idempotencyKey, !seen.insert(k).inserted { continue }
                position += 1
                p.apply(f.fact, FactContext(position: position, occurredAt: f.at))
            }
        }
        for s in Scenarios.all {
            var e = s.expected
            e.anomalyKinds = []
            #expect(e.mismatches(in: p) == [], "\(s)")
        }
        #expect(p.anomalies.isEmpty)
    }

    @Test("folding the same facts twice gives equal views", arguments: Scenarios.all)
    func foldIsDeterministic(_ s: Scenario) {
        let a = s.projections(), b = s.projections()
        #expect(a.orders == b.orders)
        #expect(a.users == b.users)
        #expect(a.subscriptions == b.subscriptions)
        #expect(a.transactions == b.transactions)
        #expect(a.anomalies == b.anomalies)
        #expect(a.position == b.position && a.logTime == b.logTime)
        for (id, t) in a.transactions { #expect(a.owedGranted(t) == b.owedGranted(b.transactions[id]!)) }
        for (k, sub) in a.subscriptions {
            #expect(sub.status == b.subscriptions[k]!.status)
            #expect(sub.expiresAt == b.subscriptions[k]!.expiresAt)
        }
        for (id, u) in a.users { #expect(u.periods == b.users[id]!.periods) }
    }

    @Test(
        "where a naive system would grant twice, the history has the duplicates and one grant",
        arguments: [1, 2, 4, 9, 10])
    func duplicatesGrantOnce(_ number: Int) {
        let s = Scenarios.scenario(number)
        let p = s.projections()
        for (txId, t) in p.transactions where t.verified {
            let deliveries =
                s.facts.filter { mentions($0.fact, txId) && !isFulfilment($0.fact) }.count
                + s.redeliveries.filter { mentions(s.facts[$0.index].fact, txId) }.count
            #expect(deliveries >= 2, "\(s): \(txId) reached us only \(deliveries) time(s)")
            #expect(grants(s, txId) == 1, "\(s): \(txId)")
        }
    }

    // MARK: one scenario each

    @Test("1: re-delivered on every launch until finished, granted once")
    func scenario1() {
        let s = Scenarios.scenario(1)
        let p = s.projections()
        let tx = p.orders["o01-1"]!.transactionId!
        #expect(p.transactions[tx]!.reports.count == 2)
        #expect(s.redeliveries.count == 1)
        #expect(grants(s, tx) == 1)
        #expect(p.users["u01-alice"]!.coinBalance == 60)
    }

    @Test("2: applicationUsername nil: sku fallback to the one open order")
    func scenario2() {
        let p = Scenarios.scenario(2).projections()
        #expect(p.orders["o02-1"]!.status == .closed)
        #expect(p.orders["o02-1"]!.transactionId == nil)
        #expect(p.orders["o02-2"]!.bindingMethod == .skuFallback)
        #expect(p.transactions[p.orders["o02-2"]!.transactionId!]!.reports.allSatisfy { $0.orderId == nil })
    }

    @Test("3: interrupted purchase: the failed transaction is never granted")
    func scenario3() {
        let p = Scenarios.scenario(3).projections()
        let failed = p.transactions["20000300001"]!
        #expect(!failed.verified && failed.grants.isEmpty && failed.bindings.isEmpty)
        #expect(p.orders["o03-1"]!.transactionId == "20000300002")
        #expect(p.users["u03-carol"]!.coinBalance == 60)
    }

    @Test("4: the second account's report names the transaction but gets nothing")
    func scenario4() {
        let s = Scenarios.scenario(4)
        let p = s.projections()
        let t = p.transactions["20000400001"]!
        #expect(t.bindings.count == 1)
        #expect(Set(t.reports.map(\.userId)) == ["u04-dave", "u04-erin"])
        #expect(t.grants.map(\.userId) == ["u04-dave"])
        #expect(p.users["u04-erin"]!.coinBalance == 0)
        #expect(s.expected.auditFindings == ["receipt-reused"])
    }

    @Test("5: swapped receipts: mismatch kept on both orders, grants follow the verified products")
    func scenario5() {
        let p = Scenarios.scenario(5).projections()
        for id in ["o05-1", "o05-2"] { #expect(p.orders[id]!.productMismatch) }
        #expect(p.orders["o05-1"]!.verifiedProductId == "coins_300")
        #expect(p.transactions["20000500001"]!.grants.first?.entitlement == .coins(60))
        #expect(p.transactions["20000500002"]!.grants.first?.entitlement == .coins(300))
    }

    @Test("6: an orphan payment until an order is created after payment")
    func scenario6() {
        let s = Scenarios.scenario(6)
        let orphanAt = s.checkpoints[0].factCount
        let before = s.projections(upTo: orphanAt)
        let tx = "20000600001"
        #expect(before.transactions[tx]!.verified)
        #expect(before.transactions[tx]!.bindings.isEmpty && before.transactions[tx]!.userId == nil)
        #expect(before.orders.isEmpty)
        let p = s.projections()
        let order = p.orders["o06-after-\(tx)"]!
        #expect(order.bindingMethod == .createdAfterPayment && order.userId == "u06-grace")
        // The order is created before the binding names it.
        let created = s.facts.firstIndex { if case .orderCreated = $0.fact { return true } else { return false } }!
        let bound = s.facts.firstIndex { if case .transactionBound = $0.fact { return true } else { return false } }!
        #expect(created < bound)
    }

    @Test("7: clawback to a negative balance, flagged at the revocation")
    func scenario7() {
        let s = Scenarios.scenario(7)
        let p = s.projections()
        let u = p.users["u07-henry"]!
        #expect(u.coinBalance == -280)
        #expect(u.coinsCredited == 300 && u.coinsSpent == 280 && u.coinsClawedBack == 300)
        let revokedAt = s.facts.lastIndex {
            if case .entitlementRevoked = $0.fact { return true } else { return false }
        }!
        #expect(u.negativeSince == Int64(revokedAt + 1))
        #expect(p.transactions["20000700001"]!.revocations.map(\.reason) == [.refund])
    }

    @Test("8: VIP month + VIP quarter stack to 120 / 90 / 110 days")
    func vipStacking() {
        let s = Scenarios.scenario(8)
        let labels = s.checkpoints.map(\.label)
        #expect(labels.count == 2)
        let day0 = s.projections(upTo: s.checkpoints[0].factCount)
        #expect(day0.users["u08-ivan"]!.remainingDays("vip", at: Scenarios.day(0)) == 120)
        let day30 = s.projections(upTo: s.checkpoints[1].factCount)
        #expect(day30.users["u08-ivan"]!.remainingDays("vip", at: Scenarios.day(30)) == 90)
        #expect(day30.subscriptions["appstore:20000800001"]!.status == .expired(.voluntary))
        let day40 = s.projections()
        let ivan = day40.users["u08-ivan"]!
        #expect(ivan.remainingDays("vip", at: Scenarios.day(40)) == 110)
        #expect(ivan.periods.map(\.totalDays) == [150])
        #expect(ivan.periods.first?.endsAt == Scenarios.day(150))
        #expect(day40.subscriptions["appstore:20000800001"]!.status == .active)
        #expect(day40.subscriptions["appstore:20000800001"]!.expiresAt == Scenarios.day(70))
        #expect(day40.subscriptions["appstore:20000800001"]!.autoRenew == true)
    }

    @Test("9: the renewal found by polling and the late notification are one period")
    func scenario9() {
        let s = Scenarios.scenario(9)
        let p = s.projections()
        let sub = p.subscriptions["appstore:20000900001"]!
        #expect(sub.periods.map(\.transactionId) == ["20000900001", "20000900002"])
        #expect(grants(s, "20000900002") == 1)
        #expect(p.transactions["20000900002"]!.isRenewal)
        #expect(p.users["u09-judy"]!.periods.map(\.totalDays) == [60])
    }

    @Test("10: WeChat duplicates and the active query: verified once, granted once")
    func scenario10() {
        let s = Scenarios.scenario(10)
        let notifications = s.facts.compactMap { f -> String? in
            if case .storeNotificationReceived(let n) = f.fact { return n.notificationId } else { return nil }
        }
        #expect(notifications == ["wx-n10-1", "wx-n10-2"])
        #expect(s.facts.filter { if case .paymentVerified = $0.fact { return true } else { return false } }.count == 1)
        #expect(s.redeliveries.count == 3)
        let p = s.projections()
        #expect(p.orders["o10-1"]!.transactionId == "4200102026030100" + "1")
        #expect(p.users["u10-kim"]!.coinBalance == 300)
    }

    @Test("11: 21005 twice, then verified: nothing missing while it fails, one grant once it lands")
    func scenario11() {
        let s = Scenarios.scenario(11)
        let p = s.projections()
        let t = p.transactions["20001100001"]!
        #expect(t.failedVerifications.map(\.code) == [21005, 21005])
        #expect(t.failedVerifications.allSatisfy { $0.retryable })
        #expect(t.verified && t.grants.count == 1)
    }

    @Test("12: REFUND then REFUND_REVERSED: revoked, then restored")
    func scenario12() {
        let s = Scenarios.scenario(12)
        let mid = s.projections(upTo: s.checkpoints[0].factCount)
        #expect(mid.users["u12-mia"]!.ownedFeatures == [])
        #expect(mid.transactions["20001200001"]!.refundState == .refunded)
        let p = s.projections()
        #expect(p.users["u12-mia"]!.ownedFeatures == ["no_ads"])
        #expect(p.transactions["20001200001"]!.refundState == .reversed)
        #expect(p.orders["o12-1"]!.status == .fulfilled)
        #expect(p.transactions["20001200001"]!.activeGrants.count == 1)
    }

    // MARK: helpers

    func grants(_ s: Scenario, _ txId: String) -> Int {
        s.facts.filter {
            if case .entitlementGranted(let g) = $0.fact { return g.transactionId == txId } else { return false }
        }.count
    }

    func isFulfilment(_ f: Fact) -> Bool {
        switch f {
        case .transactionBound, .entitlementGranted, .entitlementRevoked: return true
        default: return false
        }
    }

    func mentions(_ f: Fact, _ txId: String) -> Bool {
        switch f {
        case .clientCallbackReceived(let c): return c.transactionId == txId
        case .storeNotificationReceived(let n): return n.transactionId == txId
        case .paymentVerified(let v): return v.transactionId == txId
        case .subscriptionRenewed(let r): return r.transactionId == txId
        default: return false
        }
    }
}

/// Rules of the projections that must hold whatever order the store's messages arrive in.
@Suite("Fold order independence")
struct FoldOrderTests {
    static let cny = Currency("CNY")!
    static let d0 = Timestamp("2026-03-01T08:00:00Z")!
    static func day(_ n: Int64) -> Timestamp { Timestamp(microsecondsSince1970: d0.microseconds + n * 86_400_000_000) }

    static let month = ProductDefinition(
        channel: .appstore, storeProductId: "vip.month",
        entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 1),
        version: 1, validFrom: Timestamp("2026-01-01T00:00:00Z")!, price: Money(minorUnits: 2500, currency: cny))
    static let premium = ProductDefinition(
        channel: .appstore, storeProductId: "vip.premium",
        entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 2),
        version: 1, validFrom: Timestamp("2026-01-01T00:00:00Z")!, price: Money(minorUnits: 4000, currency: cny))

    static func verified(
        _ tx: String, _ product: String = "vip.month", from: Int64, to: Int64, original: String = "m1"
    ) -> (Fact, Timestamp) {
        (
            .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: tx, originalTransactionId: original, productId: product,
                    purchaseDate: day(from), expiresDate: day(to), price: Money(minorUnits: 2500, currency: cny))),
            day(from)
        )
    }
    static func renewed(
        _ tx: String, _ product: String = "vip.month", from: Int64, to: Int64, original: String = "m1"
    ) -> (Fact, Timestamp) {
        (
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: original, transactionId: tx, productId: product,
                    purchaseDate: day(from), expiresDate: day(to))), day(from)
        )
    }
    static func at(_ f: Fact, _ d: Int64, hours: Int64 = 0) -> (Fact, Timestamp) {
        (f, Timestamp(microsecondsSince1970: day(d).microseconds + hours * 3_600_000_000))
    }
    static let catalogue: [(Fact, Timestamp)] = [
        (.productDefined(month), month.validFrom), (.productDefined(premium), premium.validFrom),
    ]

    static func fold(_ facts: [(Fact, Timestamp)]) -> Projections {
        var p = Projections()
        for (i, f) in (catalogue + facts).enumerated() {
            p.apply(f.0, FactContext(position: Int64(i + 1), occurredAt: f.1))
        }
        return p
    }

    static func permutations<T>(_ a: [T]) -> [[T]] {
        guard a.count > 1 else { return [a] }
        return a.indices.flatMap { i -> [[T]] in
            var rest = a
            let x = rest.remove(at: i)
            return permutations(rest).map { [x] + $0 }
        }
    }

    var sub: String { "appstore:m1" }

    @Test("expiry is the max expiresDate, whatever the order and duplication of renewal delivery")
    func expiryOutOfOrder() {
        let deliveries = [
            Self.verified("m1", from: 0, to: 30), Self.renewed("m2", from: 30, to: 60),
            Self.verified("m2", from: 30, to: 60),
            Self.renewed("m3", from: 60, to: 90), Self.renewed("m3", from: 60, to: 90),
        ]
        for order in Self.permutations(deliveries) {
            let p = Self.fold(order)
            let s = p.subscriptions[sub]!
            #expect(s.expiresAt == Self.day(90))
            #expect(s.periods.count == 3)
            #expect(s.status == .active)
            #expect(s.productId == "vip.month")
        }
    }

    @Test("a refunded renewal does not count towards expiry, in any order")
    func expiryExcludesRevoked() {
        let refund = Self.at(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: "m3", refundId: "r1",
                    amount: Money(minorUnits: 2500, currency: Self.cny), refundedAt: Self.day(61))), 61)
        let deliveries = [
            Self.verified("m1", from: 0, to: 30), Self.renewed("m2", from: 30, to: 60),
            Self.verified("m3", from: 60, to: 90), refund,
        ]
        for order in Self.permutations(deliveries) {
            let s = Self.fold(order).subscriptions[sub]!
            #expect(s.expiresAt == Self.day(60))
            #expect(s.periods.first { $0.transactionId == "m3" }?.revoked == true)
        }
        // Reversed: it counts again.
        let reversed = Self.at(
            .refundReversed(RefundNotice(channel: .appstore, transactionId: "m3", notificationId: "n-rr")), 62)
        #expect(Self.fold(deliveries + [reversed]).subscriptions[sub]!.expiresAt == Self.day(90))
    }

    @Test("an upgrade takes effect at once and marks the old transaction upgraded, in either order")
    func upgrade() {
        let change = Self.at(
            .planChanged(
                PlanChanged(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-up",
                    toProductId: "vip.premium", effective: .immediate)), 10)
        let upgraded = Self.verified("p1", "vip.premium", from: 10, to: 40)
        for tail in [[change, upgraded], [upgraded, change]] {
            let p = Self.fold([Self.verified("m1", from: 0, to: 30)] + tail)
            #expect(p.transactions["m1"]!.upgraded)
            #expect(!p.transactions["p1"]!.upgraded)
            let s = p.subscriptions[sub]!
            #expect(s.productId == "vip.premium")
            #expect(s.expiresAt == Self.day(40))
            #expect(s.pendingProductId == nil)
            #expect(s.status == .active)
        }
        // Before the new transaction lands, the old period is already over at the change.
        let early = Self.fold([Self.verified("m1", from: 0, to: 30), change])
        #expect(early.transactions["m1"]!.upgraded)
        #expect(early.subscriptions[sub]!.productId == "vip.premium")
    }

    @Test("a downgrade takes effect at the next renewal, in either order")
    func downgrade() {
        let change = Self.at(
            .planChanged(
                PlanChanged(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-down",
                    toProductId: "vip.month", effective: .nextRenewal)), 5)
        let before = Self.fold([Self.verified("m1", "vip.premium", from: 0, to: 30), change])
        var s = before.subscriptions[sub]!
        #expect(s.productId == "vip.premium")
        #expect(s.pendingProductId == "vip.month")
        #expect(s.expiresAt == Self.day(30))
        #expect(!before.transactions["m1"]!.upgraded)
        let renewal = Self.renewed("m2", "vip.month", from: 30, to: 60)
        for tail in [[change, renewal], [renewal, change]] {
            let p = Self.fold([Self.verified("m1", "vip.premium", from: 0, to: 30)] + tail)
            s = p.subscriptions[sub]!
            #expect(s.productId == "vip.month")
            #expect(s.pendingProductId == nil)
            #expect(s.expiresAt == Self.day(60))
            #expect(!p.transactions["m1"]!.upgraded)
        }
    }

    @Test("grace, billing retry, recovery, expired(reason), paused and revoked")
    func statuses() {
        let m1 = Self.verified("m1", from: 0, to: 30)
        let grace = Self.at(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-g",
                    gracePeriodExpiresAt: Self.day(46), inBillingRetry: true)), 30)
        let retry = Self.at(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-r",
                    inBillingRetry: true)), 30)
        #expect(Self.fold([m1]).subscriptions[sub]!.status == .active)
        #expect(Self.fold([m1, grace]).subscriptions[sub]!.status == .grace)
        #expect(Self.fold([m1, retry]).subscriptions[sub]!.status == .billingRetry)
        // Recovered by a renewal charged after the failure.
        let recovered = Self.renewed("m2", from: 33, to: 63)
        #expect(Self.fold([m1, retry, recovered]).subscriptions[sub]!.status == .active)
        #expect(Self.fold([m1, recovered, retry]).subscriptions[sub]!.status == .active)
        // Billing retry gives up.
        let gaveUp = Self.at(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-e",
                    reason: .billingRetry)), 90)
        #expect(Self.fold([m1, retry, gaveUp]).subscriptions[sub]!.status == .expired(.billingRetry))
        // A stale EXPIRED for the first period, delivered after the renewal that followed it.
        let staleExpiry = Self.at(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-v",
                    reason: .voluntary)), 30, hours: -1)
        #expect(Self.fold([m1, recovered, staleExpiry]).subscriptions[sub]!.status == .active)
        #expect(Self.fold([m1, staleExpiry]).subscriptions[sub]!.status == .expired(.voluntary))
        // Two expiries delivered out of order: the later one (by the store's clock) stands.
        let later = Self.at(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-p",
                    reason: .priceIncrease)), 31)
        #expect(Self.fold([m1, later, staleExpiry]).subscriptions[sub]!.status == .expired(.priceIncrease))
        #expect(Self.fold([m1, staleExpiry, later]).subscriptions[sub]!.status == .expired(.priceIncrease))
        // Refunded in full: revoked.
        let refund = Self.at(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: "m1", refundId: "r1",
                    amount: Money(minorUnits: 2500, currency: Self.cny), refundedAt: Self.day(3))), 3)
        #expect(Self.fold([m1, refund]).subscriptions[sub]!.status == .revoked)
        #expect(Self.fold([refund, m1]).subscriptions[sub]!.status == .revoked)
        // Google Play: paused, then restarted.
        let token = "gp-token-1"
        let gp: (Fact, Timestamp) = (
            .paymentVerified(
                PaymentVerified(
                    channel: .googleplay, transactionId: "GPA.1", originalTransactionId: token,
                    productId: "vip.month", purchaseDate: Self.day(0), expiresDate: Self.day(30),
                    price: Money(minorUnits: 2500, currency: Self.cny))), Self.day(0)
        )
        let paused = Self.at(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "ps-1",
                    type: NotificationType(raw: "10"), signedAt: Self.day(31),
                    originalTransactionId: token)), 31)
        let restarted = Self.at(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "ps-2",
                    type: NotificationType(raw: "7"), signedAt: Self.day(40),
                    originalTransactionId: token)), 40)
        #expect(Self.fold([gp, paused]).subscriptions["googleplay:\(token)"]!.status == .paused)
        #expect(Self.fold([gp, paused, restarted]).subscriptions["googleplay:\(token)"]!.status == .active)
    }

    @Test("anomalies are recorded, never a crash, and the fold goes on")
    func anomalies() {
        let refund = Self.at(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: "nobody", refundId: "r9",
                    amount: Money(minorUnits: 600, currency: Self.cny), refundedAt: Self.day(1))), 1)
        let renewal = Self.renewed("x2", from: 30, to: 60, original: "unknown-sub")
        let reversal = Self.at(
            .refundReversed(RefundNotice(channel: .appstore, transactionId: "never-refunded", notificationId: "n-x")), 2
        )
        let revoke = Self.at(
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: "u-x", channel: .appstore, transactionId: "never-granted",
                    reason: .support)), 3)
        let p = Self.fold([refund, renewal, reversal, revoke, Self.verified("m1", from: 0, to: 30)])
        #expect(
            p.anomalies.map(\.kind) == [
                "refund-for-unknown-transaction", "renewal-for-unknown-subscription",
                "reversal-without-refund", "revocation-without-grant",
            ])
        #expect(p.anomalies.map(\.position) == [3, 4, 5, 6])
        #expect(p.subscriptions["appstore:unknown-sub"]!.expiresAt == Self.day(60))
        #expect(p.subscriptions[sub]!.expiresAt == Self.day(30))
        #expect(p.position == 7)
    }
}
