import LedgerCore
@testable import LedgerDomain
import Testing

/// Google names a subscription by its purchase token, which is no transaction id: the owner and the
/// renewals must still be found.
@Suite("Google Play subscriptions")
struct GoogleSubscriptionTests {
    static func t(_ s: String) -> Timestamp { Timestamp(s)! }
    static let cny = Currency("CNY")!

    static func fold(renewalFirst: Bool) -> Projections {
        let product = Fact.productDefined(
            ProductDefinition(
                channel: .googleplay, storeProductId: "vip_weekly",
                entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 7, rank: 1), version: 1,
                validFrom: t("2026-01-01T00:00:00Z")))
        let initial = Fact.paymentVerified(
            PaymentVerified(
                channel: .googleplay, transactionId: "GPA.1", originalTransactionId: "token-abc",
                productId: "vip_weekly", purchaseDate: t("2026-03-01T00:00:00Z"),
                expiresDate: t("2026-03-08T00:00:00Z"), price: Money(minorUnits: 1200, currency: cny)))
        let bound = Fact.transactionBound(
            TransactionBound(
                channel: .googleplay, transactionId: "GPA.1", orderId: "o1", userId: "u1", method: .applicationUsername)
        )
        let renewal = Fact.subscriptionRenewed(
            SubscriptionRenewed(
                channel: .googleplay, originalTransactionId: "token-abc", transactionId: "GPA.1..0",
                productId: "vip_weekly", purchaseDate: t("2026-03-08T00:00:00Z"), expiresDate: t("2026-03-15T00:00:00Z")
            ))
        let order = Fact.orderCreated(
            OrderCreated(
                orderId: "o1", userId: "u1", channel: .googleplay, productId: "vip_weekly",
                price: Money(minorUnits: 1200, currency: cny)))
        var facts = [product, order, initial, bound, renewal]
        if renewalFirst { facts = [product, order, renewal, initial, bound] }
        var p = Projections()
        for (i, f) in facts.enumerated() {
            p.apply(f, FactContext(position: Int64(i + 1), occurredAt: t("2026-03-20T00:00:00Z")))
        }
        return p
    }

    @Test("renewals belong to the user the first purchase is bound to", arguments: [false, true])
    func ownerAndRenewals(renewalFirst: Bool) {
        let p = Self.fold(renewalFirst: renewalFirst)
        #expect(p.transactions["GPA.1"]?.isRenewal == false)
        #expect(p.transactions["GPA.1..0"]?.isRenewal == true)
        #expect(p.transactions["GPA.1..0"]?.userId == "u1")
        #expect(p.owedGranted(p.transactions["GPA.1..0"]!).userId == "u1")
        #expect(p.subscriptions["googleplay:token-abc"]?.expiresAt == Self.t("2026-03-15T00:00:00Z"))
        #expect(p.subscriptions["googleplay:token-abc"]?.userId == "u1")
        // Not an orphan: the first purchase is bound; the renewal needs no binding of its own.
        #expect(!Audit.run(p).contains { $0.kind == .orphanPayment })
    }

    @Test("a replaced purchase token ends at its replacement, however often the new token's renewals name it")
    func aReplacedTokenStaysEnded() {
        var p = Self.fold(renewalFirst: false)
        let replaced = Self.t("2026-03-10T00:00:00Z")
        // An upgrade on 10 March: a new token linked to the old; Google's reads of its renewals name the old token too.
        for (i, (tx, start)) in [("GPA.2", replaced), ("GPA.2..0", Self.t("2026-04-10T00:00:00Z"))].enumerated() {
            p.apply(
                .paymentVerified(
                    PaymentVerified(
                        channel: .googleplay, transactionId: tx, originalTransactionId: "token-new",
                        productId: "vip_weekly",
                        purchaseDate: start,
                        expiresDate: Timestamp(microsecondsSince1970: start.microseconds + 7 * 86_400_000_000),
                        price: Money(minorUnits: 1200, currency: Self.cny), linkedPurchaseToken: "token-abc")),
                FactContext(position: Int64(10 + i), occurredAt: start))
        }
        let old = p.subscriptions["googleplay:token-abc"]
        #expect(old?.superseded?.at == replaced && old?.accessUntil == replaced)
        #expect(p.subscriptions["googleplay:token-new"]?.userId == "u1")
    }
}
