import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 35 to 42: histories written from how the stores really behave, where the audit must
// judge by the app, by what is left of a grant, by what the product is, by the acknowledgement's
// own time, by statements as the stores publish them, and by whose subscription a renewal is
// (docs/domain.md, sections 8 and 9).
extension Scenarios {
    static let wechatApp = "wx8888888888888888", wechatMerchant = "1900000109"

    /// A WeChat Pay purchase of 300 coins on day 0 (16:00 in Beijing), verified with its
    /// out_trade_no, bound to its order by it and granted.
    static func wechatPurchase(_ s: inout Script, user: String, order o: String, tx t: String, minutes: Int64 = 0) {
        s.at(day: 0, minutes: minutes)
        s.createOrder(o, user: user, product: "coins_300", channel: .wechat, token: o, app: wechatApp)
        s.wait(seconds: 1)
        s.launch(o, channel: .wechat, prepayId: "wx-prepay-\(o)")
        s.wait(seconds: 40)
        s.verify(t, product: "coins_300", channel: .wechat, purchased: s.now.adding(seconds: -5)) {
            $0.app = wechatApp
            $0.merchant = wechatMerchant
            $0.outTradeNo = o
        }
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
    }

    /// WeChat Pay's daily trade bill of the Beijing day holding day 0's afternoon (2026-03-01, UTC+8),
    /// listing `sales` (transaction, order, when).
    static func wechatBill(_ s: inout Script, digest: String, sales: [(tx: String, order: String?, at: Timestamp)]) {
        let start = Timestamp("2026-02-28T16:00:00Z")!, end = Timestamp("2026-03-01T16:00:00Z")!
        s.add(
            .statementImported(
                StatementImported(
                    source: .wechatTradeBill, digest: digest, periodStart: start, periodEnd: end,
                    lines: Int64(sales.count), app: wechatApp, merchant: wechatMerchant)))
        for (i, sale) in sales.enumerated() {
            var l = StatementLine(
                digest: digest, line: Int64(i + 2), source: .wechatTradeBill, kind: .sale, transactionId: sale.tx,
                orderId: sale.order, productId: "coins_300", amount: Money(minorUnits: 3000, currency: Catalogue.cny),
                at: sale.at, app: wechatApp, merchant: wechatMerchant)
            l.fee = Money(minorUnits: 18, currency: Catalogue.cny)
            s.add(.statementLine(l))
        }
    }

    // MARK: 35

    /// Two App Store apps issue the same transaction id; the second app's purchase is refunded and
    /// taken back, naming its app.
    static let revocationInTheSecondApp: Scenario = {
        var s = Script(35, products: ["coins_60"])
        let id = "2000003500000001", apps = ["com.example.coins", "com.example.coins.lite"]
        let buyers = [s.user("ana"), s.user("cy")]
        let price = Money(minorUnits: 600, currency: Catalogue.cny)
        for k in 0..<2 {
            let o = s.order(k + 1), token = s.token(k + 1)
            s.createOrder(o, user: buyers[k], product: "coins_60", token: token.lowercased, app: apps[k])
            s.wait(seconds: 1)
            s.launch(o)
            s.wait(seconds: 30)
            s.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: .appstore, transactionId: id, originalTransactionId: id, productId: "coins_60",
                        purchaseDate: s.now, price: price, appAccountToken: token, app: apps[k])))
            s.wait(seconds: 1)
            s.add(
                .transactionBound(
                    TransactionBound(
                        channel: .appstore, transactionId: id, orderId: o, userId: buyers[k], method: .appAccountToken,
                        app: apps[k])))
            s.add(
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g35-\(k + 1)", userId: buyers[k], channel: .appstore, transactionId: id,
                        orderId: o, entitlement: .coins(60), app: apps[k])))
            s.wait(minutes: 5)
        }
        s.at(day: 2)
        s.add(
            .refunded(
                Refunded(
                    channel: .appstore, transactionId: id, refundId: "r35-1", amount: price, refundedAt: s.now,
                    reason: "customer",
                    app: apps[1])))
        s.wait(seconds: 20)
        s.add(
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: buyers[1], channel: .appstore, transactionId: id, reason: .refund, app: apps[1])))
        return Scenario(
            35, "a revocation in the second of two apps sharing an id",
            "Two apps, one transaction id; the second app's purchase is refunded and its coins taken back. Nothing wrong.",
            s,
            expected: Expectation(
                transactions: [
                    id: .init(owed: 60, granted: 60, user: buyers[0], order: s.order(1)),
                    "appstore:\(apps[1]):\(id)": .init(
                        owed: 0, granted: 60, revoked: 60, user: buyers[1], order: s.order(2)),
                ],
                users: [buyers[0]: UserExpectation(coins: 60), buyers[1]: UserExpectation(coins: 0)]))
    }()

    // MARK: 36

    /// A subscription moved to another account on day 10 with its remaining 20 days.
    static let moveWithRemainingDays: Scenario = {
        var s = Script(36, products: ["vip.month"])
        let ann = s.user("ann"), annB = s.user("ann-b"), (o, m) = paidMonth(&s, ann)
        s.at(day: 10)
        s.add(
            .transactionTransferred(
                TransactionTransferred(
                    channel: .appstore, transactionId: m, transferId: "mv36-1", fromUserId: ann, toUserId: annB,
                    orderId: o, method: .supportCorrection,
                    reason: "the user asked to move the subscription to her new account",
                    authorizedBy: "support:alice")))
        s.wait(seconds: 5)
        s.revoke(m, user: ann, reason: .support, units: 20, id: "rv36-1")
        s.wait(seconds: 5)
        s.grant(m, entitlement: .period(entitlement: "vip", days: 20), to: annB)
        return Scenario(
            36, "a subscription moved with its remaining days",
            "30 days granted, 20 of them taken back on day 10 and granted to the new account: the days net to the month paid. Nothing wrong.",
            s,
            expected: Expectation(
                transactions: [m: .init(owed: 30, granted: 50, revoked: 20, user: annB, order: o, grants: 2)],
                users: [
                    ann: UserExpectation(remaining: [
                        RemainingDays("vip", at: day(9), days: 1), RemainingDays("vip", at: day(11), days: 0),
                    ]),
                    annB: UserExpectation(remaining: [RemainingDays("vip", at: day(11), days: 19)]),
                ]))
    }()

    // MARK: 37

    /// Google: a one-time purchase verified with its purchase token as the original id, never acknowledged.
    static let googleOneTimeByToken: Scenario = {
        var s = Script(37, products: ["coins_60"], channel: .googleplay)
        let gus = s.user("gus"), o = s.order(1), t = s.gpa(1), token = "lmnopqrstu37.AO-J1Oz-one-time"
        s.createOrder(o, user: gus, product: "coins_60", channel: .googleplay, app: "com.example.android")
        s.wait(seconds: 2)
        s.launch(o, channel: .googleplay)
        s.wait(seconds: 40)
        s.notify("gp-n37-1", "1", "ONE_TIME_PRODUCT_PURCHASED", channel: .googleplay, original: token)
        s.verify(t, product: "coins_60", channel: .googleplay, original: token, purchased: s.now.adding(seconds: -10)) {
            $0.obfuscatedAccountId = o
            $0.app = "com.example.android"
        }
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.at(day: 4)
        s.notify("gp-n37-x", "TEST", channel: .googleplay)
        return Scenario(
            37, "a Google one-time purchase named by its token",
            "The purchase token is sent as the original id of a one-time product: still a purchase, not a renewal. Never acknowledged: Google refunds it.",
            s,
            expected: Expectation(
                transactions: [t: .init(owed: 60, granted: 60, user: gus, order: o)],
                auditFindings: ["unacknowledged-purchase"]))
    }()

    // MARK: 38

    /// Google: one purchase acknowledged on day 4 (Google refunded it on day 3), another
    /// acknowledged in time but recorded late.
    static let acknowledgementByItsOwnTime: Scenario = {
        var s = Script(38, products: ["coins_60"], channel: .googleplay)
        let hal = s.user("hal"), ivy = s.user("ivy")
        googlePurchase(&s, user: hal, order: s.order(1), tx: s.gpa(1), k: 1, acknowledged: false)
        let ivyBought = s.now
        googlePurchase(&s, user: ivy, order: s.order(2), tx: s.gpa(2), k: 2, acknowledged: false)
        // Google refunds the first after its deadline passed unacknowledged; fulfilment takes the coins back.
        s.at(day: 3, hours: 2)
        s.add(
            .purchaseVoided(
                PurchaseVoided(
                    transactionId: s.gpa(1), voidedAt: s.now, voidedSource: "0", voidedReason: "8",
                    app: "com.example.android")))
        s.wait(minutes: 1)
        s.revoke(s.gpa(1), user: hal, reason: .refund, channel: .googleplay)
        s.at(day: 4)
        s.add(
            .purchaseAcknowledged(
                PurchaseAcknowledged(
                    channel: .googleplay, transactionId: s.gpa(1), acknowledgedAt: s.now,
                    app: "com.example.android", kind: .consume)))
        // The second was acknowledged on the device a minute after purchase; the server records it on day 5.
        s.at(day: 5)
        s.add(
            .purchaseAcknowledged(
                PurchaseAcknowledged(
                    channel: .googleplay, transactionId: s.gpa(2), acknowledgedAt: ivyBought.adding(minutes: 1),
                    app: "com.example.android", kind: .acknowledge)))
        return Scenario(
            38, "acknowledgements judged by their own time",
            "One purchase acknowledged on day 4, after Google refunded it on day 3: unacknowledged-purchase. Another acknowledged in time, recorded on day 5: nothing wrong.",
            s,
            expected: Expectation(
                transactions: [
                    s.gpa(1): .init(owed: 0, granted: 60, revoked: 60, user: hal, order: s.order(1)),
                    s.gpa(2): .init(owed: 60, granted: 60, user: ivy, order: s.order(2)),
                ],
                auditFindings: ["unacknowledged-purchase"]))
    }()

    // MARK: 39

    /// WeChat: the payment's notification was lost and the order closed by timeout; the day's bill lists the sale with our order id.
    static let unrecordedSaleNamesItsOrder: Scenario = {
        var s = Script(39, products: ["coins_300"], channel: .wechat)
        let wen = s.user("wen"), o = s.order(1)
        s.createOrder(o, user: wen, product: "coins_300", channel: .wechat, token: o, app: wechatApp)
        s.wait(seconds: 1)
        s.launch(o, channel: .wechat, prepayId: "wx-prepay-\(o)")
        let paid = s.now.adding(seconds: 50)
        s.at(day: 0, hours: 2)
        s.close(o, .timeout)
        s.at(day: 1, hours: 2)
        wechatBill(
            &s, digest: "sha256:3939393939393939393939393939393939393939393939393939393939393939",
            sales: [(s.wxTx(1), o, paid)])
        s.at(day: 3)
        s.notify("wx-n39-x", "TEST", channel: .wechat)
        return Scenario(
            39, "a sale only the bill knows, named by its order",
            "WeChat Pay took the money; the notification was lost and the order closed. The day's bill lists the sale with the order id: unrecorded-sale, naming the order.",
            s, expected: Expectation(orders: [o: .init(.closed)], auditFindings: ["unrecorded-sale"]))
    }()

    // MARK: 40

    /// WeChat: a day's bill imported, the same bytes again under another file name, then a re-issue.
    static let statementUnderAnotherName: Scenario = {
        var s = Script(40, products: ["coins_300"], channel: .wechat)
        let xu = s.user("xu"), o = s.order(1), t = s.wxTx(1)
        wechatPurchase(&s, user: xu, order: o, tx: t)
        let paid = s.now.adding(seconds: -7)
        s.at(day: 1, hours: 2)
        let first = s.facts.count
        wechatBill(
            &s, digest: "sha256:4040404040404040404040404040404040404040404040404040404040404040", sales: [(t, o, paid)]
        )
        s.wait(minutes: 10)
        // The same file downloaded twice and imported under another name: the same facts.
        for i in first..<s.facts.count { s.redeliver(i, "the same bill's bytes imported under another file name") }
        s.at(day: 2, hours: 2)
        wechatBill(
            &s, digest: "sha256:4141414141414141414141414141414141414141414141414141414141414141", sales: [(t, o, paid)]
        )
        s.at(day: 3)
        s.notify("wx-n40-x", "TEST", channel: .wechat)
        return Scenario(
            40, "a statement under another name, then re-issued",
            "The same bill's bytes imported twice are one statement; a re-issue of the day is kept and its sale matched once. Nothing wrong.",
            s, expected: Expectation(transactions: [t: .init(owed: 300, granted: 300, user: xu, order: o)]))
    }()

    // MARK: 41

    /// WeChat: the bill of the payment's own Beijing day lacks it; no bill of the days around it is imported.
    static let unconfirmedOnItsOwnDay: Scenario = {
        var s = Script(41, products: ["coins_300"], channel: .wechat)
        let yue = s.user("yue"), zed = s.user("zed")
        wechatPurchase(&s, user: yue, order: s.order(1), tx: s.wxTx(1))
        wechatPurchase(&s, user: zed, order: s.order(2), tx: s.wxTx(2), minutes: 120)
        let zedPaid = s.now.adding(seconds: -7)
        s.at(day: 1, hours: 2)
        wechatBill(
            &s, digest: "sha256:4242424242424242424242424242424242424242424242424242424242424242",
            sales: [(s.wxTx(2), s.order(2), zedPaid)])
        return Scenario(
            41, "a payment its own day's bill lacks",
            "The bill of 1 March (Beijing) lists one of the day's two payments: unconfirmed-payment, without waiting for the bills of 28 February and 2 March.",
            s, expected: Expectation(auditFindings: ["unconfirmed-payment"]))
    }()

    // MARK: 42

    /// A renewal restored on a second account: the app (StoreKit 1, no token) reports it from there,
    /// and the backend binds it to an order made after payment. Nobody moved the subscription.
    static let renewalRestoredOnASecondAccount: Scenario = {
        var s = Script(42, products: ["vip.month"])
        let zoe = s.user("zoe"), kid = s.user("zoe-kid"), o = s.order(1), m1 = s.tx(1), m2 = s.tx(2)
        s.createOrder(o, user: zoe, product: "vip.month")
        s.wait(seconds: 1)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(user: zoe, tx: m1, product: "vip.month", username: o)
        s.wait(seconds: 1)
        s.verify(m1, product: "vip.month", original: m1, purchased: day0.adding(seconds: 20), expires: day(30))
        s.wait(seconds: 1)
        s.bind(m1)
        s.grant(m1)
        s.at(day: 30, minutes: 5)
        s.verify(m2, product: "vip.month", original: m1, purchased: day(30), expires: day(60))
        s.wait(seconds: 1)
        s.grant(m2)
        // Day 40: signed in to the child's account on the same phone, the app restores purchases.
        s.at(day: 40)
        s.callback(user: kid, tx: m2, product: "vip.month", state: .restored)
        s.wait(seconds: 1)
        s.bind(m2)
        return Scenario(
            42, "a renewal restored on a second account",
            "The renewal stays the subscriber's, granted to her: the second account's restore and the order made for it after payment are receipt-reused, not a move.",
            s,
            expected: Expectation(
                transactions: [
                    m1: .init(owed: 30, granted: 30, user: zoe, order: o),
                    m2: .init(owed: 30, granted: 30, user: zoe, order: "o42-after-\(m2)"),
                ],
                users: [zoe: .init(remaining: [RemainingDays("vip", at: day(40), days: 20)]), kid: .init()],
                auditFindings: ["receipt-reused"]))
    }()
}
