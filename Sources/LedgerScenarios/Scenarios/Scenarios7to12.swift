import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 7 to 12: refunds, stacked periods, renewals, duplicates and retries.
extension Scenarios {
    // MARK: 7

    /// 300 coins bought, 280 spent, then refunded within 90 days.
    static let refundAfterSpend: Scenario = {
        var s = Script(7, products: ["coins_300"])
        let henry = s.user("henry"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: henry, product: "coins_300", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 40)
        s.callback(user: henry, tx: t, product: "coins_300", device: "iphone-henry")
        s.wait(seconds: 1)
        s.verify(t, product: "coins_300", purchased: s.now.adding(seconds: -10), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.at(day: 2)
        s.spend("sp07-1", user: henry, amount: 200, item: "sticker-pack")
        s.at(day: 3)
        s.spend("sp07-2", user: henry, amount: 80, item: "gift")
        s.checkpoint("coins spent", Expectation(users: [henry: .init(coins: 20)]))
        s.at(day: 19)
        s.notify("n07-1", "CONSUMPTION_REQUEST", tx: t, original: t)
        s.add(.refundRequested(RefundNotice(channel: .appstore, transactionId: t, notificationId: "n07-1")))
        s.at(day: 20)
        s.notify("n07-2", "REFUND", tx: t, original: t)
        s.refund(t, id: "rf07-1", reason: "customer request")
        s.wait(seconds: 2)
        s.revoke(t, user: henry, reason: .refund)
        return Scenario(
            7, "refund of a consumable already spent",
            "The clawback of 300 takes the balance to -280: kept negative and flagged, never floored.", s,
            expected: Expectation(
                orders: [o: .init(.refunded, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 0, granted: 300, revoked: 300, user: henry, order: o)],
                users: [henry: .init(coins: -280, negative: true)],
                auditFindings: ["negative-balance"]))
    }()

    // MARK: 8

    /// Seed 004, 4.4: a VIP month that auto-renews plus a VIP quarter that does not, both on day 0.
    static let vipStacking: Scenario = {
        var s = Script(8, products: ["vip.month", "vip.quarter"])
        let ivan = s.user("ivan"), oM = s.order(1), oQ = s.order(2), m1 = s.tx(1), q = s.tx(2), m2 = s.tx(3)
        let sub = "appstore:\(m1)"
        s.now = day0.adding(minutes: -2)
        s.createOrder(oM, user: ivan, product: "vip.month", token: s.token(1).lowercased)
        s.wait(seconds: 1)
        s.launch(oM)
        s.wait(seconds: 5)
        s.createOrder(oQ, user: ivan, product: "vip.quarter", token: s.token(2).lowercased)
        s.wait(seconds: 1)
        s.launch(oQ)
        // Both charged at the start of day 0.
        s.at(day: 0, seconds: 20)
        s.callback(user: ivan, tx: m1, product: "vip.month", device: "iphone-ivan")
        s.wait(seconds: 1)
        s.verify(m1, product: "vip.month", original: m1, purchased: day0, expires: day(30), token: s.token(1))
        s.notify("n08-1", "SUBSCRIBED", "INITIAL_BUY", tx: m1, original: m1)
        s.wait(seconds: 1)
        s.bind(m1)
        s.grant(m1)
        s.wait(seconds: 10)
        s.callback(user: ivan, tx: q, product: "vip.quarter", device: "iphone-ivan")
        s.wait(seconds: 1)
        s.verify(q, product: "vip.quarter", purchased: day0, token: s.token(2))
        s.wait(seconds: 1)
        s.bind(q)
        s.grant(q)
        s.checkpoint(
            "day 0: both bought",
            Expectation(
                users: [ivan: .init(remaining: [RemainingDays("vip", at: day0, days: 120)])],
                subscriptions: [sub: .init(.active, expiresAt: day(30), productId: "vip.month")]))
        // Day 30: the renewal charge fails, and he turns auto-renew off; the subscription lapses.
        s.at(day: 30)
        s.notify("n08-2", "DID_FAIL_TO_RENEW", tx: m1, original: m1)
        s.add(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: m1, notificationId: "n08-2", inBillingRetry: true)))
        s.wait(hours: 1)
        s.notify("n08-3", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", tx: m1, original: m1)
        s.add(
            .autoRenewChanged(
                AutoRenewChanged(channel: .appstore, originalTransactionId: m1, notificationId: "n08-3", enabled: false)
            ))
        s.wait(seconds: 1)
        s.notify("n08-4", "EXPIRED", "VOLUNTARY", tx: m1, original: m1)
        s.add(
            .subscriptionExpired(
                SubscriptionExpired(
                    channel: .appstore, originalTransactionId: m1, notificationId: "n08-4", reason: .voluntary)))
        s.checkpoint(
            "day 30: renewal failed, unsubscribed",
            Expectation(
                transactions: [
                    m1: .init(owed: 30, granted: 30, user: ivan, order: oM),
                    q: .init(owed: 90, granted: 90, user: ivan, order: oQ),
                ],
                users: [ivan: .init(remaining: [RemainingDays("vip", at: day(30), days: 90)])],
                subscriptions: [sub: .init(.expired(.voluntary), expiresAt: day(30))]))
        // Day 40: he subscribes again and the store charges the month.
        s.at(day: 40)
        s.notify("n08-5", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", tx: m1, original: m1)
        s.add(
            .autoRenewChanged(
                AutoRenewChanged(channel: .appstore, originalTransactionId: m1, notificationId: "n08-5", enabled: true))
        )
        s.wait(seconds: 1)
        s.notify("n08-6", "SUBSCRIBED", "RESUBSCRIBE", tx: m2, original: m1)
        s.renewed(m2, original: m1, product: "vip.month", purchased: day(40), expires: day(70))
        s.verify(m2, product: "vip.month", original: m1, purchased: day(40), expires: day(70), token: s.token(1))
        s.wait(seconds: 1)
        s.grant(m2)
        return Scenario(
            8, "auto-renewing and non-renewing VIP stacked",
            "VIP month (auto-renew) + VIP quarter (non-renewing) on day 0: 120 days left; renewal fails and he unsubscribes: 90 days left on day 30; charged on day 40: 110 days left.",
            s,
            expected: Expectation(
                orders: [
                    oM: .init(.fulfilled, method: .appAccountToken, transactionId: m1),
                    oQ: .init(.fulfilled, method: .appAccountToken, transactionId: q),
                ],
                transactions: [
                    m1: .init(owed: 30, granted: 30, user: ivan, order: oM),
                    q: .init(owed: 90, granted: 90, user: ivan, order: oQ),
                    m2: .init(owed: 30, granted: 30, user: ivan),
                ],
                users: [ivan: .init(remaining: [RemainingDays("vip", at: day(40), days: 110)])],
                subscriptions: [sub: .init(.active, expiresAt: day(70), productId: "vip.month")]))
    }()

    // MARK: 9

    /// The DID_RENEW notification is lost; the server's poll finds the renewal; the notification
    /// arrives late anyway.
    static let renewalFoundByPoll: Scenario = {
        var s = Script(9, products: ["vip.month"])
        let judy = s.user("judy"), o = s.order(1), m1 = s.tx(1), m2 = s.tx(2)
        let sub = "appstore:\(m1)"
        s.createOrder(o, user: judy, product: "vip.month", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(user: judy, tx: m1, product: "vip.month", device: "iphone-judy")
        s.wait(seconds: 1)
        s.verify(
            m1, product: "vip.month", original: m1, purchased: day0.adding(seconds: 20),
            expires: day(30).adding(seconds: 20), token: s.token(1))
        s.notify("n09-1", "SUBSCRIBED", "INITIAL_BUY", tx: m1, original: m1)
        s.wait(seconds: 1)
        s.bind(m1)
        s.grant(m1)
        // Day 30: renewed, but DID_RENEW never reaches us. Two hours later the poll finds it.
        s.at(day: 30, hours: 2)
        s.verify(
            m2, product: "vip.month", original: m1, purchased: day(30).adding(seconds: 20),
            expires: day(60).adding(seconds: 20))
        s.wait(seconds: 1)
        s.grant(m2)
        // Apple's retry of the notification lands a day later: the same transaction, no second grant.
        s.at(day: 31, hours: 3)
        s.notify("n09-2", "DID_RENEW", tx: m2, original: m1)
        s.renewed(
            m2, original: m1, product: "vip.month", purchased: day(30).adding(seconds: 20),
            expires: day(60).adding(seconds: 20))
        return Scenario(
            9, "renewal notification lost, found by polling",
            "The renewal is granted once (from the poll); the late notification adds nothing. Expiry day 60.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: m1)],
                transactions: [
                    m1: .init(owed: 30, granted: 30, user: judy, order: o),
                    m2: .init(owed: 30, granted: 30, user: judy),
                ],
                users: [judy: .init(remaining: [RemainingDays("vip", at: day(30), days: 30)])],
                subscriptions: [sub: .init(.active, expiresAt: day(60).adding(seconds: 20), productId: "vip.month")]))
    }()

    // MARK: 10

    /// WeChat Pay: the notification comes twice (same id), once more under a new id, and the active
    /// query reports SUCCESS too.
    static let wechatDuplicates: Scenario = {
        var s = Script(10, products: ["coins_300"], channel: .wechat)
        let kim = s.user("kim"), o = s.order(1), t = s.wxTx(1)
        s.createOrder(o, user: kim, product: "coins_300", channel: .wechat)
        s.wait(seconds: 1)
        s.launch(o, channel: .wechat, prepayId: "wx0108000010\(s.nn)")
        s.wait(seconds: 25)
        s.callback(user: kim, tx: nil, product: "coins_300", channel: .wechat, order: o, device: "android-kim")
        s.wait(seconds: 4)
        let n1 = s.notify(
            "wx-n10-1", "TRANSACTION.SUCCESS", channel: .wechat, tx: t, tradeState: "SUCCESS", outTradeNo: o)
        let v = s.verify(t, product: "coins_300", channel: .wechat, purchased: s.now.adding(seconds: -3))
        s.bind(t, outTradeNo: o)
        s.grant(t)
        s.wait(seconds: 5)
        s.redeliver(v, "the active query (re-check after 5 s) reports SUCCESS")
        s.wait(seconds: 10)
        s.redeliver(n1, "WeChat re-delivers the same notification")
        s.wait(minutes: 2)
        s.notify("wx-n10-2", "TRANSACTION.SUCCESS", channel: .wechat, tx: t, tradeState: "SUCCESS", outTradeNo: o)
        s.redeliver(v, "verified again from the second notification")
        return Scenario(
            10, "WeChat notification duplicated plus active query",
            "Verified once, bound by out_trade_no, granted once.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 300, granted: 300, user: kim, order: o)],
                users: [kim: .init(coins: 300)]))
    }()

    // MARK: 11

    /// verifyReceipt answers 21005 (server unavailable) twice, then succeeds.
    static let verificationRetry: Scenario = {
        var s = Script(11, products: ["coins_60"])
        let liam = s.user("liam"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: liam, product: "coins_60")
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 40)
        s.callback(user: liam, tx: t, product: "coins_60", order: o, username: o, device: "iphone-liam")
        s.wait(seconds: 1)
        s.verificationFailed(t, code: 21005, retryable: true, attempt: 1)
        s.checkpoint(
            "verification failing",
            Expectation(
                orders: [o: .init(.callbackReceived)],
                transactions: [t: .init(owed: 0, granted: 0, user: nil, verified: false, grants: 0, reportedBy: [liam])]
            ))
        s.wait(minutes: 1)
        s.verificationFailed(t, code: 21005, retryable: true, attempt: 2)
        s.wait(minutes: 5)
        s.verify(t, product: "coins_60", purchased: day0.adding(seconds: 30))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        return Scenario(
            11, "verification failing with 21005, then succeeding",
            "Nothing owed while unverified; once verified, bound by applicationUsername and granted once.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .applicationUsername, transactionId: t)],
                transactions: [t: .init(owed: 60, granted: 60, user: liam, order: o, reportedBy: [liam])],
                users: [liam: .init(coins: 60)]))
    }()

    // MARK: 12

    /// A non-consumable refunded, then the refund reversed.
    static let refundReversed: Scenario = {
        var s = Script(12, products: ["no_ads"])
        let mia = s.user("mia"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: mia, product: "no_ads", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(user: mia, tx: t, product: "no_ads", device: "iphone-mia")
        s.wait(seconds: 1)
        s.verify(t, product: "no_ads", purchased: day0.adding(seconds: 25), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.at(day: 10)
        s.notify("n12-1", "REFUND", tx: t, original: t)
        s.refund(t, id: "rf12-1", reason: "accidental purchase")
        s.wait(seconds: 2)
        s.revoke(t, user: mia, reason: .refund)
        s.checkpoint(
            "refunded",
            Expectation(
                orders: [o: .init(.refunded, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 0, granted: 1, revoked: 1, user: mia, order: o)],
                users: [mia: .init(features: [])]))
        s.at(day: 14)
        s.notify("n12-2", "REFUND_REVERSED", tx: t, original: t)
        s.add(.refundReversed(RefundNotice(channel: .appstore, transactionId: t, notificationId: "n12-2")))
        s.wait(seconds: 2)
        s.grant(t)
        return Scenario(
            12, "refund then refund reversed",
            "Revoked on REFUND, restored by a new grant on REFUND_REVERSED; net one no_ads, owned.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 1, granted: 2, revoked: 1, user: mia, order: o, grants: 2)],
                users: [mia: .init(features: ["no_ads"])]))
    }()
}
