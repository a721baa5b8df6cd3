import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 27 to 34: the stores' signed word about a subscription's life, exact money, and what
// the ledger keeps without translating (docs/domain.md, section 7).
extension Scenarios {
    /// A month of vip, bought and bound on day 0, and granted unless `granted` is false (scenario
    /// `s`'s first order and transaction).
    static func paidMonth(_ s: inout Script, _ user: String, granted: Bool = true) -> (order: String, tx: String) {
        let o = s.order(1), m = s.tx(1)
        s.createOrder(o, user: user, product: "vip.month", token: s.token(1).lowercased)
        s.wait(seconds: 1)
        s.launch(o)
        s.at(day: 0, seconds: 30)
        s.verify(m, product: "vip.month", original: m, purchased: day0, expires: day(30), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(m)
        if granted { s.grant(m) }
        return (o, m)
    }

    static func state(
        _ s: inout Script, _ id: String, _ original: String, _ change: LifecycleChange, channel: Channel = .appstore,
        expires: Timestamp? = nil, consent: PriceConsent? = nil
    ) {
        s.add(
            .subscriptionStateChanged(
                SubscriptionStateChanged(
                    channel: channel, originalTransactionId: original, notificationId: id,
                    change: change, effectiveAt: s.now, expiresAt: expires, priceConsent: consent)))
    }

    // MARK: 27

    /// Grace, then the payment recovers within it.
    static let graceThenRecovery: Scenario = {
        var s = Script(27, products: ["vip.month"])
        let una = s.user("una"), (_, m) = paidMonth(&s, una), r = s.tx(2)
        s.at(day: 30)
        s.notify("n27-1", "DID_FAIL_TO_RENEW", "GRACE_PERIOD", tx: m, original: m)
        s.add(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: m, notificationId: "n27-1",
                    gracePeriodExpiresAt: day(46),
                    inBillingRetry: true)))
        s.checkpoint(
            "in grace on day 30", Expectation(subscriptions: ["appstore:\(m)": .init(.grace, expiresAt: day(30))]))
        s.at(day: 35)
        // A recovery in grace keeps the renewal date: the new period runs from day 30.
        s.notify("n27-2", "DID_RENEW", "BILLING_RECOVERY", tx: r, original: m)
        s.verify(r, product: "vip.month", original: m, purchased: day(30), expires: day(60))
        s.renewed(r, original: m, product: "vip.month", purchased: day(30), expires: day(60))
        s.wait(seconds: 2)
        s.grant(r)
        return Scenario(
            27, "grace, then the payment recovers",
            "A renewal fails into a 16-day grace period and is paid on day 35; the new month runs from day 30. Nothing wrong.",
            s,
            expected: Expectation(
                transactions: [r: .init(owed: 30, granted: 30, user: una)],
                subscriptions: ["appstore:\(m)": .init(.active, expiresAt: day(60))]))
    }()

    // MARK: 28

    /// Billing retry to expiry, with access kept past the grace period's end.
    static let accessKeptPastGrace: Scenario = {
        var s = Script(28, products: ["vip.month"])
        let vic = s.user("vic"), (o, m) = paidMonth(&s, vic, granted: false)
        s.at(day: 30)
        s.add(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: m, notificationId: "n28-1",
                    gracePeriodExpiresAt: day(46),
                    inBillingRetry: true)))
        // Fulfilment keeps the user's access by its own clock: 30 days paid, 16 of grace, 4 more.
        s.wait(seconds: 5)
        s.grant(m, entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 50, rank: 1))
        s.at(day: 46)
        s.notify("n28-2", "GRACE_PERIOD_EXPIRED", tx: m, original: m)
        state(&s, "n28-2", m, .graceEnded)
        s.checkpoint(
            "billing retry after grace",
            Expectation(subscriptions: ["appstore:\(m)": .init(.billingRetry, expiresAt: day(30))]))
        s.at(day: 90)
        s.notify("n28-3", "EXPIRED", "BILLING_RETRY", tx: m, original: m)
        s.add(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: m, notificationId: "n28-3", reason: .billingRetry)))
        return Scenario(
            28, "access kept past the grace period",
            "A month paid, 16 days of grace, then billing retry to expiry: 50 days granted are 4 past grace, subscription-drift.",
            s,
            expected: Expectation(
                transactions: [m: .init(owed: 30, granted: 50, status: .excess, user: vic, order: o)],
                subscriptions: ["appstore:\(m)": .init(.expired(.billingRetry), expiresAt: day(30))],
                auditFindings: ["subscription-drift"]))
    }()

    // MARK: 29

    /// Google: on hold, recovered, a pause scheduled, paused, restarted.
    static let googleHoldAndPause: Scenario = {
        var s = Script(29, products: ["vip_weekly"], channel: .googleplay)
        let wes = s.user("wes"), o = s.order(1), t1 = s.gpa(1), t2 = s.gpa(2), tok = "tok29-a"
        let token = s.token(1).lowercased
        s.createOrder(o, user: wes, product: "vip_weekly", channel: .googleplay, token: token)
        s.wait(seconds: 1)
        s.launch(o, channel: .googleplay)
        s.at(day: 0, seconds: 30)
        s.verify(t1, product: "vip_weekly", channel: .googleplay, original: tok, purchased: day0, expires: day(7)) {
            $0.obfuscatedAccountId = token
        }
        s.wait(seconds: 1)
        s.bind(t1)
        s.grant(t1)
        s.wait(seconds: 2)
        s.add(
            .purchaseAcknowledged(PurchaseAcknowledged(channel: .googleplay, transactionId: t1, acknowledgedAt: s.now)))
        s.at(day: 7)
        s.notify("gp-n29-1", "5", "SUBSCRIPTION_ON_HOLD", channel: .googleplay, original: tok)
        state(&s, "gp-n29-1", tok, .onHold, channel: .googleplay)
        s.checkpoint(
            "on hold on day 7", Expectation(subscriptions: ["googleplay:\(tok)": .init(.onHold, expiresAt: day(7))]))
        s.at(day: 9)
        // Recovered from hold: a new paid period from its own purchase time.
        s.notify("gp-n29-2", "1", "SUBSCRIPTION_RECOVERED", channel: .googleplay, original: tok)
        state(&s, "gp-n29-2", tok, .resumed, channel: .googleplay)
        s.verify(t2, product: "vip_weekly", channel: .googleplay, original: tok, purchased: day(9), expires: day(16))
        s.wait(seconds: 2)
        s.grant(t2)
        s.at(day: 10)
        s.notify("gp-n29-3", "11", "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", channel: .googleplay, original: tok)
        state(&s, "gp-n29-3", tok, .pauseScheduled, channel: .googleplay)
        s.at(day: 16)
        s.notify("gp-n29-4", "10", "SUBSCRIPTION_PAUSED", channel: .googleplay, original: tok)
        state(&s, "gp-n29-4", tok, .paused, channel: .googleplay)
        s.checkpoint(
            "paused on day 16", Expectation(subscriptions: ["googleplay:\(tok)": .init(.paused, expiresAt: day(16))]))
        s.at(day: 23)
        s.notify("gp-n29-5", "7", "SUBSCRIPTION_RESTARTED", channel: .googleplay, original: tok)
        state(&s, "gp-n29-5", tok, .resumed, channel: .googleplay)
        return Scenario(
            29, "Google on hold, recovered, paused and restarted",
            "No access is owed on hold or paused; the recovery is a new paid week, granted. Nothing wrong.", s,
            expected: Expectation(
                transactions: [t2: .init(owed: 7, granted: 7, user: wes)],
                subscriptions: ["googleplay:\(tok)": .init(.active, expiresAt: day(16))]))
    }()

    // MARK: 30

    /// A family-shared copy taken back by the store, and kept by fulfilment.
    static let familyRevokeNotRevoked: Scenario = {
        var s = Script(30, products: ["no_ads"])
        let xia = s.user("xia"), t = s.tx(1)
        s.callback(user: xia, tx: t, product: "no_ads", state: .restored)
        s.wait(seconds: 2)
        s.verify(t, product: "no_ads", original: s.tx(9)) { $0.ownership = .familyShared }
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.at(day: 12)
        s.notify("n30-1", "REVOKE", tx: t, original: s.tx(9))
        s.add(
            .storeRevoked(
                StoreRevoked(
                    channel: .appstore, originalTransactionId: s.tx(9), transactionId: t, notificationId: "n30-1",
                    revokedAt: s.now, revocationType: "FAMILY_REVOKE", reason: "0")))
        // An hour later the app still reports the purchase restored: log time is past the refund window.
        s.wait(hours: 1)
        s.callback(user: xia, tx: t, product: "no_ads", state: .restored)
        return Scenario(
            30, "a family-sharing revocation not taken back",
            "The organizer stopped sharing; the store revoked the copy and fulfilment kept it: refund-not-revoked, with no money at risk.",
            s,
            expected: Expectation(
                transactions: [t: .init(owed: 0, granted: 1, status: .excess, user: xia, order: "o30-after-\(t)")],
                auditFindings: ["refund-not-revoked"]))
    }()

    // MARK: 31

    /// A refund reversed, and the coins never granted again.
    static let reversalNotRegranted: Scenario = {
        var s = Script(31, products: ["coins_300"])
        let yan = s.user("yan"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: yan, product: "coins_300", token: s.token(1).lowercased)
        s.wait(seconds: 1)
        s.launch(o)
        s.wait(seconds: 30)
        s.verify(t, product: "coins_300", token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.at(day: 3)
        s.notify("n31-1", "REFUND", tx: t, original: t)
        s.refund(t, id: "n31-1", reason: "revocationReason-0")
        s.wait(minutes: 2)
        s.revoke(t, user: yan, reason: .refund)
        s.at(day: 6)
        s.notify("n31-2", "REFUND_REVERSED", tx: t, original: t)
        s.add(
            .refundReversed(
                RefundNotice(channel: .appstore, transactionId: t, notificationId: "n31-2", signedAt: s.now)))
        s.checkpoint(
            "just reversed: the missing-grant window runs",
            Expectation(
                transactions: [t: .init(owed: 300, granted: 300, revoked: 300, status: .missing, user: yan, order: o)]))
        // Two hours later the user opens the app: still no coins.
        s.wait(hours: 2)
        s.callback(user: yan, tx: t, product: "coins_300", state: .restored)
        return Scenario(
            31, "a refund reversal not granted again",
            "Apple reversed the refund; the coins taken back were owed again and never granted: missing-grant.", s,
            expected: Expectation(
                transactions: [t: .init(owed: 300, granted: 300, revoked: 300, status: .missing, user: yan, order: o)],
                auditFindings: ["missing-grant"]))
    }()

    // MARK: 32

    /// Prices that are not whole minor units, a three-decimal currency, and a prorated refund.
    static let exactStoreMoney: Scenario = {
        var s = Script(32, products: ["coins_60", "coins_300"])
        let zoe = s.user("zoe"), o1 = s.order(1), o2 = s.order(2), t1 = s.tx(1), t2 = s.tx(2)
        let usd = Currency("USD")!, bhd = Currency("BHD")!
        s.createOrder(o1, user: zoe, product: "coins_60", token: s.token(1).lowercased)
        s.createOrder(o2, user: zoe, product: "coins_300", token: s.token(2).lowercased)
        s.wait(seconds: 30)
        // USD 1995 milliunits: 199.5 cents, kept exactly.
        s.verify(t1, product: "coins_60", token: s.token(1)) {
            $0.price = Money(storeAmount: 1995, unit: .milliunits, currency: usd)!
        }
        s.wait(seconds: 1)
        s.bind(t1)
        s.grant(t1)
        s.wait(seconds: 30)
        s.verify(t2, product: "coins_300", token: s.token(2)) {
            $0.price = Money(storeAmount: 1990, unit: .milliunits, currency: bhd)!
        }
        s.wait(seconds: 1)
        s.bind(t2)
        s.grant(t2)
        s.at(day: 2)
        // REFUND_PRORATED at 50 %: 0.995 BHD returned; fulfilment takes back half the coins.
        s.notify("n32-1", "REFUND", tx: t2, original: t2)
        s.add(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: t2, refundId: "n32-1",
                    amount: Money(minorUnits: 995, currency: bhd),
                    refundedAt: s.now, reason: "revocationReason-1")))
        s.wait(minutes: 1)
        s.add(
            .entitlementRevoked(
                EntitlementRevoked(userId: zoe, channel: .appstore, transactionId: t2, reason: .refund, units: 150)))
        return Scenario(
            32, "exact store money",
            "1.995 USD and 1.990 BHD purchases, a 50 % prorated refund taken back in proportion: nothing wrong, nothing rounded.",
            s,
            expected: Expectation(
                transactions: [
                    t1: .init(owed: 60, granted: 60, user: zoe, order: o1),
                    t2: .init(owed: 150, granted: 300, revoked: 150, user: zoe, order: o2),
                ]))
    }()

    // MARK: 33

    /// Notifications kept without translation: a new type, and a partial void until its quantity comes.
    static let untranslatedNotifications: Scenario = {
        var s = Script(33, products: ["coins_60"], channel: .googleplay)
        let ada = s.user("ada"), o = s.order(1), g = s.gpa(1)
        let token = s.token(1).lowercased
        s.createOrder(o, user: ada, product: "coins_60", channel: .googleplay, token: token)
        s.wait(seconds: 30)
        s.verify(g, product: "coins_60", channel: .googleplay, original: "tok33-a") {
            $0.quantity = 2
            $0.obfuscatedAccountId = token
        }
        s.wait(seconds: 1)
        s.bind(g)
        s.grant(g)
        s.wait(seconds: 2)
        s.add(
            .purchaseAcknowledged(PurchaseAcknowledged(channel: .googleplay, transactionId: g, acknowledgedAt: s.now)))
        s.at(day: 1)
        s.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .appstore, notificationId: "n33-1", type: NotificationType(raw: "EXTERNAL_PURCHASE_TOKEN"),
                    subtype: NotificationType(raw: "UNREPORTED"), signedAt: s.now,
                    rawDigest: SHA256.digest(Array("appstore:n33-1".utf8)),
                    untranslated: "not translated: type EXTERNAL_PURCHASE_TOKEN/UNREPORTED")))
        s.at(day: 4)
        s.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "gp-n33-2", type: NotificationType(raw: "VOIDED_PURCHASE"),
                    subtype: NotificationType(raw: "PARTIAL"),
                    signedAt: s.now, transactionId: g, originalTransactionId: "tok33-a",
                    rawDigest: SHA256.digest(Array("googleplay:gp-n33-2".utf8)),
                    untranslated: "a quantity-based partial void (refundType 2) without its voidedQuantity",
                    awaiting: .voidedQuantity)))
        s.checkpoint(
            "the partial void awaits its quantity",
            Expectation(
                transactions: [g: .init(owed: 120, granted: 120, user: ada, order: o)],
                auditFindings: ["untranslated-notification", "untranslated-notification"]))
        s.at(day: 5)
        // The Voided Purchases API gives the quantity; fulfilment takes one unit back.
        s.add(
            .purchaseVoided(
                PurchaseVoided(
                    transactionId: g, purchaseToken: "tok33-a", voidedAt: day(4), voidedSource: "0", voidedReason: "1",
                    voidedQuantity: 1)))
        s.wait(minutes: 1)
        s.add(
            .entitlementRevoked(
                EntitlementRevoked(userId: ada, channel: .googleplay, transactionId: g, reason: .refund, units: 60)))
        return Scenario(
            33, "notifications kept without translation",
            "A notification type the ledger does not know stays a notice; a partial void without its quantity is one until the quantity is recorded.",
            s,
            expected: Expectation(
                transactions: [g: .init(owed: 60, granted: 120, revoked: 60, user: ada, order: o)],
                auditFindings: ["untranslated-notification"]))
    }()

    // MARK: 34

    /// A price increase the subscriber never consents to.
    static let priceIncreaseDeclined: Scenario = {
        var s = Script(34, products: ["vip.month"])
        let bo = s.user("bo"), (_, m) = paidMonth(&s, bo)
        s.at(day: 5)
        s.notify("n34-1", "PRICE_INCREASE", "PENDING", tx: m, original: m)
        s.add(
            .subscriptionStateChanged(
                SubscriptionStateChanged(
                    channel: .appstore, originalTransactionId: m, notificationId: "n34-1",
                    change: .priceConsent, effectiveAt: s.now, priceConsent: .pending,
                    newPrice: Money(minorUnits: 3000, currency: Catalogue.cny))))
        s.checkpoint(
            "consent pending", Expectation(subscriptions: ["appstore:\(m)": .init(.active, expiresAt: day(30))]))
        s.at(day: 30)
        s.notify("n34-2", "EXPIRED", "PRICE_INCREASE", tx: m, original: m)
        s.add(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: m, notificationId: "n34-2", reason: .priceIncrease)))
        return Scenario(
            34, "a price increase never consented to",
            "Apple asks for consent to a higher price; none comes and the subscription expires for it. The month paid was granted: nothing wrong.",
            s,
            expected: Expectation(
                transactions: [m: .init(owed: 30, granted: 30, user: bo, order: s.order(1))],
                subscriptions: ["appstore:\(m)": .init(.expired(.priceIncrease), expiresAt: day(30))]))
    }()
}
