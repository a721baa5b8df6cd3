import LedgerCore
@testable import LedgerDomain
import Testing

@Suite("Store revocations")
struct StoreRevocationTests {
    static let cny = Currency("CNY")!
    static func t(_ day: Int64) -> Timestamp {
        Timestamp(microsecondsSince1970: Timestamp("2026-03-01T00:00:00Z")!.microseconds + day * 86_400_000_000)
    }

    /// A Google subscription of two weekly periods, granted, then SUBSCRIPTION_REVOKED on day 10.
    static func revokedSubscription(takenBack: Bool) -> Projections {
        var facts: [Fact] = [
            .productDefined(
                ProductDefinition(
                    channel: .googleplay, storeProductId: "vip_weekly",
                    entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 7, rank: 1),
                    version: 1, validFrom: t(-30)))
        ]
        for (k, tx) in ["GPA.1", "GPA.1..0"].enumerated() {
            facts.append(
                .paymentVerified(
                    PaymentVerified(
                        channel: .googleplay, transactionId: tx, originalTransactionId: "tok", productId: "vip_weekly",
                        purchaseDate: t(Int64(k) * 7), expiresDate: t(Int64(k + 1) * 7),
                        price: Money(minorUnits: 800, currency: cny))))
            facts.append(
                .transactionBound(
                    TransactionBound(
                        channel: .googleplay, transactionId: tx, orderId: nil, userId: "u1", method: .manual)))
            facts.append(
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(k)", userId: "u1", transactionId: tx,
                        entitlement: .period(entitlement: "vip", days: 7))))
            facts.append(
                .purchaseAcknowledged(
                    PurchaseAcknowledged(channel: .googleplay, transactionId: tx, acknowledgedAt: t(Int64(k) * 7))))
        }
        facts.append(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "m1", type: NotificationType(raw: "12"),
                    subtype: NotificationType(raw: "SUBSCRIPTION_REVOKED"), signedAt: t(10),
                    originalTransactionId: "tok")))
        if takenBack {
            facts.append(
                .entitlementRevoked(EntitlementRevoked(userId: "u1", transactionId: "GPA.1..0", reason: .revoke)))
        }
        facts.append(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "m2", type: NotificationType(raw: "TEST"))))
        // Each period's facts at its purchase; the revocation (and its taking back) on day 10; the log ends on day 11.
        var times: [Timestamp] = [t(-30)]
        for i in 0..<8 { times.append(t(Int64(i / 4) * 7)) }
        times.append(t(10))
        if takenBack { times.append(t(10)) }
        times.append(t(11))
        var p = Projections()
        for (i, f) in facts.enumerated() { p.apply(f, FactContext(position: Int64(i + 1), occurredAt: times[i])) }
        return p
    }

    @Test("Google SUBSCRIPTION_REVOKED revokes the period running then: refund-not-revoked until it is taken back")
    func googleRevocation() {
        let open = Self.revokedSubscription(takenBack: false)
        #expect(open.transactions["GPA.1..0"]?.storeRevokedPosition != nil)
        #expect(open.transactions["GPA.1"]?.storeRevokedPosition == nil)
        #expect(
            open.subscriptions["googleplay:tok"]?.status == .revoked
                || open.subscriptions["googleplay:tok"]?.periods.last?.revoked == true)
        #expect(Audit.run(open).map(\.kind) == [.refundNotRevoked])
        #expect(Audit.run(open).first?.transactionId == "GPA.1..0")
        #expect(Audit.run(Self.revokedSubscription(takenBack: true)).isEmpty)
    }
}
