import Foundation
import LedgerCore
import LedgerDomain

// Scenarios 1 to 6: callbacks, binding, receipts and orphan payments.
extension Scenarios {
    // MARK: 1

    /// Paid, app killed before it reported; the transaction is re-delivered on every launch until finished.
    static let callbackLost: Scenario = {
        var s = Script(1, products: ["coins_60"])
        let alice = s.user("alice"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: alice, product: "coins_60", token: s.token(1).lowercased)
        s.wait(seconds: 5)
        s.launch(o)
        // Paid 40 s later; the app is killed before its callback reaches us: no fact.
        s.at(day: 0, hours: 2)
        s.callback(user: alice, tx: t, product: "coins_60", device: "iphone-alice")
        s.wait(seconds: 1)
        let v = s.verify(t, product: "coins_60", purchased: day0.adding(seconds: 45), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        // finishTransaction did not get through: the next launch reports it again.
        s.at(day: 0, hours: 5)
        s.callback(user: alice, tx: t, product: "coins_60", device: "iphone-alice")
        s.wait(seconds: 1)
        s.redeliver(v, "verified again on the next launch's re-delivery")
        return Scenario(
            1, "callback lost, app killed after paying",
            "The payment is re-delivered at the next launches; bound by appAccountToken and granted exactly once.", s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 60, granted: 60, user: alice, order: o, reportedBy: [alice])],
                users: [alice: .init(coins: 60)]))
    }()

    // MARK: 2

    /// StoreKit 1 re-delivery with applicationUsername nil: the one open order of that product.
    static let usernameNil: Scenario = {
        var s = Script(2, products: ["coins_300"])
        let bob = s.user("bob"), old = s.order(1), o = s.order(2), t = s.tx(1)
        s.createOrder(old, user: bob, product: "coins_300")
        s.wait(minutes: 1)
        s.launch(old)
        s.wait(minutes: 30)
        s.close(old, .timeout)
        s.wait(minutes: 5)
        s.createOrder(o, user: bob, product: "coins_300")
        s.wait(seconds: 3)
        s.launch(o)
        let paidAt = s.now.adding(seconds: 30)
        // The app is killed; at the next launch the queue re-delivers without applicationUsername.
        s.wait(hours: 2)
        s.callback(user: bob, tx: t, product: "coins_300", device: "iphone-bob")
        s.wait(seconds: 1)
        let v = s.verify(t, product: "coins_300", purchased: paidAt)
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        s.wait(days: 1)
        s.callback(user: bob, tx: t, product: "coins_300", device: "iphone-bob")
        s.wait(seconds: 1)
        s.redeliver(v, "verified again on the next re-delivery")
        return Scenario(
            2, "applicationUsername nil on re-delivery",
            "Bound by sku fallback to the one open order (the closed one is no candidate); one grant.", s,
            expected: Expectation(
                orders: [old: .init(.closed), o: .init(.fulfilled, method: .skuFallback, transactionId: t)],
                transactions: [t: .init(owed: 300, granted: 300, user: bob, order: o, reportedBy: [bob])],
                users: [bob: .init(coins: 300)]))
    }()

    // MARK: 3

    /// Terms not accepted: a failed transaction first, then a new one with no order id.
    static let interruptedPurchase: Scenario = {
        var s = Script(3, products: ["coins_60"])
        let carol = s.user("carol"), o = s.order(1), failed = s.tx(1), t = s.tx(2)
        s.createOrder(o, user: carol, product: "coins_60")
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 30)
        s.callback(
            user: carol, tx: failed, product: "coins_60", state: .failed, order: o, username: o, device: "iphone-carol")
        // She accepts the new terms; the store charges in a new transaction, without applicationUsername.
        s.wait(minutes: 3)
        s.callback(user: carol, tx: t, product: "coins_60", device: "iphone-carol")
        s.wait(seconds: 1)
        s.verify(t, product: "coins_60", purchased: s.now.adding(seconds: -20))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        return Scenario(
            3, "interrupted purchase",
            "The failed transaction is finished with nothing owed or granted; the new one binds to the open order by sku fallback and is granted once.",
            s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .skuFallback, transactionId: t)],
                transactions: [
                    failed: .init(owed: 0, granted: 0, user: nil, verified: false, grants: 0, reportedBy: [carol]),
                    t: .init(owed: 60, granted: 60, user: carol, order: o, reportedBy: [carol]),
                ],
                users: [carol: .init(coins: 60)]))
    }()

    // MARK: 4

    /// The same receipt posted twice (network retry), then by a second account.
    ///
    /// Fulfilment never binds it again (a second `TransactionBound` would also collide with the
    /// log's natural key `appstore:tx:<id>:bound`): the second account's report stays a report.
    static let receiptReused: Scenario = {
        var s = Script(4, products: ["coins_300"])
        let dave = s.user("dave"), erin = s.user("erin"), o = s.order(1), t = s.tx(1)
        s.createOrder(o, user: dave, product: "coins_300", token: s.token(1).lowercased)
        s.wait(seconds: 2)
        s.launch(o)
        s.wait(seconds: 40)
        let c = s.callback(user: dave, tx: t, product: "coins_300", device: "ipad-1", report: "r04-1")
        s.wait(seconds: 5)
        s.redeliver(c, "the client's network retry of the same report")
        s.wait(seconds: 1)
        s.verify(t, product: "coins_300", purchased: s.now.adding(seconds: -50), token: s.token(1))
        s.wait(seconds: 1)
        s.bind(t)
        s.grant(t)
        // Erin signs in on the same iPad; the app posts the same receipt for her account.
        s.wait(days: 1)
        s.callback(user: erin, tx: t, product: "coins_300", state: .restored, device: "ipad-1", report: "r04-2")
        return Scenario(
            4, "same receipt twice and to a second account",
            "One grant, to the buyer; the second account's report names the same transaction (receipt-reused for the audit).",
            s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .appAccountToken, transactionId: t)],
                transactions: [t: .init(owed: 300, granted: 300, user: dave, order: o, reportedBy: [dave, erin])],
                users: [dave: .init(coins: 300), erin: .init(coins: 0)],
                auditFindings: ["receipt-reused"]))
    }()

    // MARK: 5

    /// Buy A then B; the StoreKit 1 queue reports each with the other's applicationUsername.
    static let swappedReceipts: Scenario = {
        var s = Script(5, products: ["coins_60", "coins_300"])
        let frank = s.user("frank"), oA = s.order(1), oB = s.order(2), tA = s.tx(1), tB = s.tx(2)
        s.createOrder(oA, user: frank, product: "coins_60")
        s.wait(seconds: 1)
        s.launch(oA)
        s.wait(seconds: 10)
        s.createOrder(oB, user: frank, product: "coins_300")
        s.wait(seconds: 1)
        s.launch(oB)
        s.wait(minutes: 1)
        s.callback(user: frank, tx: tA, product: "coins_60", order: oB, username: oB, device: "iphone-frank")
        s.callback(user: frank, tx: tB, product: "coins_300", order: oA, username: oA, device: "iphone-frank")
        s.wait(seconds: 1)
        s.verify(tA, product: "coins_60", purchased: day0.adding(seconds: 30))
        s.verify(tB, product: "coins_300", purchased: day0.adding(seconds: 45))
        s.wait(seconds: 1)
        s.bind(tA)
        s.bind(tB)
        s.grant(tA)
        s.grant(tB)
        return Scenario(
            5, "receipts swapped on binding",
            "Each order keeps its product mismatch; each grant follows the verified product (60 + 300 coins).", s,
            expected: Expectation(
                orders: [
                    oA: .init(.fulfilled, method: .applicationUsername, productMismatch: true, transactionId: tB),
                    oB: .init(.fulfilled, method: .applicationUsername, productMismatch: true, transactionId: tA),
                ],
                transactions: [
                    tA: .init(owed: 60, granted: 60, user: frank, order: oB),
                    tB: .init(owed: 300, granted: 300, user: frank, order: oA),
                ],
                users: [frank: .init(coins: 360)],
                auditFindings: ["product-mismatch", "product-mismatch"]))
    }()

    // MARK: 6

    /// Subscribed from the phone's settings page: no order, no token, no report until the app opens.
    static let orphanFromSettings: Scenario = {
        var s = Script(6, products: ["vip.month"])
        let grace = s.user("grace"), t = s.tx(1), o = "o06-after-\(s.tx(1))"
        s.notify("n06-1", "SUBSCRIBED", "RESUBSCRIBE", tx: t, original: t)
        s.wait(seconds: 1)
        s.verify(t, product: "vip.month", original: t, purchased: day0, expires: day(30))
        if case .unbound = s.bind(t) {} else { preconditionFailure("scenario 6: expected an orphan") }
        s.checkpoint(
            "orphan payment",
            Expectation(
                transactions: [t: .init(owed: 30, granted: 0, status: .missing, user: nil, grants: 0)],
                subscriptions: ["appstore:\(t)": .init(.active, expiresAt: day(30), productId: "vip.month")]))
        // Three hours later she opens the app; it reports the transaction.
        s.wait(hours: 3)
        s.callback(user: grace, tx: t, product: "vip.month", device: "iphone-grace")
        s.wait(seconds: 1)
        guard case .createOrderAfterPayment = s.bind(t) else {
            preconditionFailure("scenario 6: expected created-after-payment")
        }
        s.grant(t)
        return Scenario(
            6, "purchase from the settings page, no app order",
            "An orphan payment (owed 30 days, granted none) until the app reports it; then an order is created after payment, bound and granted.",
            s,
            expected: Expectation(
                orders: [o: .init(.fulfilled, method: .createdAfterPayment, transactionId: t)],
                transactions: [t: .init(owed: 30, granted: 30, user: grace, order: o)],
                users: [grace: .init(remaining: [RemainingDays("vip", at: day0, days: 30)])],
                subscriptions: ["appstore:\(t)": .init(.active, expiresAt: day(30), productId: "vip.month")]))
    }()
}
