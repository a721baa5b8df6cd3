import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 13 to 18: refunds, voids and grants as real store traffic has them.
extension Scenarios {
    /// An App Store coin purchase bound by token and granted; shared by several scenarios.
    static func coinPurchase(
        _ s: inout Script, user: String, order o: String, tx t: String, k: Int, product: String = "coins_60"
    ) {
        s.createOrder(o, user: user, product: product, token: s.token(k).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(user: user, tx: t, product: product)
        s.wait(seconds: 1)
        s.verify(t, product: product, purchased: s.now.adding(seconds: -10), token: s.token(k))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
    }

    /// A Google Play purchase bound by obfuscatedExternalAccountId and granted (acknowledged unless told not to).
    static func googlePurchase(
        _ s: inout Script, user: String, order o: String, tx t: String, k: Int, acknowledged: Bool = true
    ) {
        let token = s.token(k).lowercased
        s.createOrder(o, user: user, product: "coins_60", channel: .googleplay, token: token)
        s.wait(seconds: 2)
        s.launch(o, channel: .googleplay)
        s.wait(seconds: 30)
        s.callback(user: user, tx: t, product: "coins_60", channel: .googleplay, order: o)
        s.wait(seconds: 1)
        s.verify(t, product: "coins_60", channel: .googleplay, purchased: s.now.adding(seconds: -10)) {
            $0.obfuscatedAccountId = token
            $0.app = "com.example.android"
        }
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        if acknowledged {
            s.wait(seconds: 2)
            s.add(
                .purchaseAcknowledged(
                    PurchaseAcknowledged(
                        channel: .googleplay, transactionId: t, acknowledgedAt: s.now, app: "com.example.android")))
        }
    }

    // MARK: 13

    /// Refunded on day 5 and the refund reversed on day 6, by the store's dates; the Refunded fact
    /// arrives after the reversal (a late poll), and again later. Store order, not arrival order.
    static let refundAfterItsReversal: Scenario = {
        var s = Script(13, products: ["coins_60"])
        let mia = s.user("mia"), o = s.order(1), t = s.tx(1)
        coinPurchase(&s, user: mia, order: o, tx: t, k: 1)
        s.at(day: 6, hours: 2)
        s.notify("n13-1", "REFUND_REVERSED", tx: t, original: t)
        s.add(
            .refundReversed(
                RefundNotice(
                    channel: .appstore, transactionId: t, notificationId: "n13-1", refundId: "rf13-1",
                    signedAt: day(6))))
        s.at(day: 7)
        let late = s.add(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: t, refundId: "rf13-1",
                    amount: Money(minorUnits: 600, currency: Catalogue.cny),
                    refundedAt: day(5), reason: "customer request")))
        s.at(day: 8)
        s.redeliver(late, "the refund is re-delivered after its reversal")
        return Scenario(
            13, "refund delivered after its reversal",
            "The reversal is dated after the refund: the refund does not stand, nothing is to be taken back.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 60, granted: 60, user: mia, order: o)],
                users: [mia: .init(coins: 60)]))
    }()

    // MARK: 14

    /// WeChat Pay refunds 10 of 30 CNY: PROCESSING first (no money yet), then SUCCESS; fulfilment
    /// takes back the proportional 100 of 300 coins.
    static let wechatPartialRefund: Scenario = {
        var s = Script(14, products: ["coins_300"], channel: .wechat)
        let noa = s.user("noa"), o = s.order(1), t = s.wxTx(1)
        s.createOrder(o, user: noa, product: "coins_300", channel: .wechat)
        s.wait(seconds: 1)
        s.launch(o, channel: .wechat, prepayId: "wx0108000014\(s.nn)")
        s.wait(seconds: 20)
        s.notify("wx-n14-1", "TRANSACTION.SUCCESS", channel: .wechat, tx: t, tradeState: "SUCCESS", outTradeNo: o)
        s.verify(t, product: "coins_300", channel: .wechat, purchased: s.now.adding(seconds: -3)) {
            $0.app = "wx8888888888888888"
            $0.merchant = "1900000109"
        }
        s.bind(t, outTradeNo: o)
        s.grant(t)
        let ten = Money(minorUnits: 1000, currency: Catalogue.cny)
        s.at(day: 3)
        s.add(
            .refunded(
                Refunded(
                    channel: .wechat, transactionId: t, refundId: "rf14-1", amount: ten, refundedAt: s.now,
                    status: .processing)))
        s.checkpoint(
            "refund processing: nothing returned yet",
            Expectation(
                transactions: [t: .init(owed: 300, granted: 300, user: noa, order: o)]))
        s.wait(minutes: 20)
        s.add(
            .refunded(
                Refunded(
                    channel: .wechat, transactionId: t, refundId: "rf14-1", amount: ten, refundedAt: s.now,
                    status: .success)))
        s.wait(seconds: 30)
        s.add(
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: noa, channel: .wechat, transactionId: t, reason: .refund, units: 100,
                    revocationId: "rv14-1")))
        return Scenario(
            14, "WeChat partial refund",
            "10 of 30 CNY returned takes back exactly 100 of 300 coins; a PROCESSING refund returns nothing.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 200, granted: 300, revoked: 100, user: noa, order: o)],
                users: [noa: .init(coins: 200)]))
    }()

    // MARK: 15

    /// One grant of 120 coins for a 60-coin product.
    static let overGrant: Scenario = {
        var s = Script(15, products: ["coins_60"])
        let omar = s.user("omar"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: omar, product: "coins_60", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(user: omar, tx: t, product: "coins_60")
        s.wait(seconds: 1)
        s.verify(t, product: "coins_60", purchased: s.now.adding(seconds: -10), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t, quantity: 2)
        return Scenario(
            15, "one grant larger than what was paid",
            "120 coins for a 60-coin purchase: a double grant (over-grant) of 60 coins, 6.00 CNY at risk.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 60, granted: 120, status: .excess, user: omar, order: o)],
                users: [omar: .init(coins: 120)], auditFindings: ["double-grant"]))
    }()

    // MARK: 16

    /// Google voids two purchases: one is taken back, the other is not.
    static let googleVoidedPurchase: Scenario = {
        var s = Script(16, products: ["coins_60"], channel: .googleplay)
        let pia = s.user("pia"), o1 = s.order(1), o2 = s.order(2), t1 = s.gpa(1), t2 = s.gpa(2)
        googlePurchase(&s, user: pia, order: o1, tx: t1, k: 1)
        s.at(day: 1)
        googlePurchase(&s, user: pia, order: o2, tx: t2, k: 2)
        s.at(day: 4)
        s.add(.purchaseVoided(PurchaseVoided(transactionId: t1, voidedAt: s.now, voidedSource: "0", voidedReason: "1")))
        s.wait(seconds: 40)
        s.revoke(t1, user: pia, reason: .revoke, channel: .googleplay)
        s.wait(minutes: 5)
        s.add(.purchaseVoided(PurchaseVoided(transactionId: t2, voidedAt: s.now, voidedSource: "2", voidedReason: "7")))
        s.wait(hours: 1)
        s.notify("gp-n16-x", "TEST", channel: .googleplay)
        return Scenario(
            16, "Google voided purchases",
            "A voided purchase is a store revocation: the one not taken back is refund-not-revoked.", s,
            expected: Expectation(
                transactions: [
                    t1: .init(owed: 0, granted: 60, revoked: 60, user: pia, order: o1),
                    t2: .init(owed: 0, granted: 60, status: .excess, user: pia, order: o2),
                ],
                users: [pia: .init(coins: 60)], auditFindings: ["refund-not-revoked"]))
    }()

    // MARK: 17

    /// A goodwill grant from support, and a grant without a transaction that says nothing.
    static let grantsByPolicy: Scenario = {
        var s = Script(17, products: ["coins_60"])
        let quinn = s.user("quinn")
        s.add(
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g17-goodwill", userId: quinn, transactionId: nil, entitlement: .coins(50),
                    reason: .goodwill, authorizedBy: "support:alice")))
        s.wait(minutes: 5)
        s.add(
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g17-unexplained", userId: quinn, transactionId: nil, entitlement: .coins(30))))
        return Scenario(
            17, "grants by policy",
            "A goodwill grant with its authorizer is no finding and is listed for finance; a grant with no transaction and no reason is a grant without payment.",
            s,
            expected: Expectation(
                transactions: [
                    "grant:g17-unexplained": .init(owed: 0, granted: 30, status: .excess, user: nil, verified: false)
                ],
                users: [quinn: .init(coins: 80)], auditFindings: ["grant-without-payment"]))
    }()

    // MARK: 18

    /// A revocation with no refund behind it: one finding, not also a missing grant.
    static let revocationWithoutRefund: Scenario = {
        var s = Script(18, products: ["coins_60"])
        let rosa = s.user("rosa"), o = s.order(1), t = s.tx(1)
        coinPurchase(&s, user: rosa, order: o, tx: t, k: 1)
        s.wait(hours: 2)
        s.revoke(t, user: rosa, reason: .refund)
        s.wait(hours: 2)
        s.notify("n18-x", "TEST")
        return Scenario(
            18, "revoked without a refund",
            "One root cause, one finding: revoked-without-refund, never also missing-grant.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 60, granted: 60, revoked: 60, status: .missing, user: rosa, order: o)],
                users: [rosa: .init(coins: 0)], auditFindings: ["revoked-without-refund"]))
    }()
}
