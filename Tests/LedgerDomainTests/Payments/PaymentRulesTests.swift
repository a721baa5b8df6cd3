import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

@Suite("Audit: payments and binding")
struct PaymentRulesTests {
    // MARK: orphan-payment

    @Test("orphan-payment: verified and bound to no one; a renewal without a binding is not")
    func orphanPayment() {
        var h = History()
        h.verify("t1", "coins_60")
        h.wait(hours: 1)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.orphanPayment])  // never also missing-grant
        #expect(
            fs.first?.userId == nil && fs.first?.orderId == nil && fs.first?.amountAtRisk == cny(600)
                && fs.first?.positions == [4])
        h.bind("t1", nil, "u1", .manual)
        h.grant("g1", "u1", "t1", coins60)
        #expect(h.kinds() == [])

        var renewal = History()
        renewal.order("o1", "u1", "vip.month")
        renewal.verify("m1", "vip.month", original: "m1", days: 30)
        renewal.bind("m1", "o1", "u1")
        renewal.grant("g1", "u1", "m1", vipMonth, order: "o1")
        renewal.verify("m2", "vip.month", original: "m1", days: 30)  // found by polling, no binding of its own
        renewal.grant("g2", "u1", "m2", vipMonth)
        #expect(renewal.kinds() == [])
    }

    // MARK: receipt-reused

    @Test("receipt-reused: one transaction presented for two users or two orders; not re-reports by its owner")
    func receiptReused() {
        var h = History()
        h.purchase(1)
        h.report("u1", "t1", "coins_60", order: "o1")
        h.report("u1", "t1", "coins_60")
        #expect(h.kinds() == [], "the owner's app re-reporting it on every launch")
        h.report("u2", "t1", "coins_60")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused])
        #expect(fs.first?.userId == "u2" && fs.first?.orderId == nil && fs.first?.amountAtRisk == cny(600))
        #expect(fs.first?.positions == [6, 8, 10, 11, 12])

        var orders = History()
        orders.purchase(1)
        orders.order("o2", "u1", "coins_60")
        orders.report("u1", "t1", "coins_60", order: "o2")
        fs = orders.audit()
        #expect(fs.map(\.kind) == [.receiptReused])
        #expect(fs.first?.userId == "u1" && fs.first?.orderId == "o2")
    }

    @Test(
        "receipt-reused: a binding weaker than the store-signed token that gives the purchase to another user than the token's order; wrong-user if granted there"
    )
    func aBindingAgainstTheSignedToken() {
        let token = UUID(uuidString: "c0000000-0000-4000-8000-000000000003")!
        /// u1's order o1 minted `token`; the purchase, signed with it, bound by `method` to u2's o2.
        func bound(_ method: BindingMethod, grantedTo user: String, secondToken: UUID? = nil) -> History {
            var h = History()
            h.order("o1", "u1", "coins_60", token: token)
            h.order("o2", "u2", "coins_60", token: secondToken)
            h.verify("t1", "coins_60", token: token)
            h.bind("t1", "o2", "u2", method)
            h.grant("g1", user, "t1", coins60, order: "o2")
            return h
        }
        let fs = bound(.applicationUsername, grantedTo: "u2").audit()
        #expect(fs.map(\.kind) == [.receiptReused, .wrongUser], "\(fs)")
        // The token's order, the verification, the binding; then the owner's order and the grant.
        #expect(fs.first?.userId == "u2" && fs.first?.orderId == "o2" && fs.first?.positions == [4, 6, 7])
        #expect(fs.last?.userId == "u2" && fs.last?.positions == [4, 8])
        for method in [BindingMethod.skuFallback, .createdAfterPayment, .manual] {
            #expect(bound(method, grantedTo: "u1").kinds() == ["receipt-reused"], "\(method)")
        }
        // Bound by the token itself, nothing contradicts it (whatever the binding says).
        #expect(bound(.appAccountToken, grantedTo: "u2").kinds() == [])
        // The same token on the bound order (an app that mints one token per user): no contradiction.
        #expect(bound(.skuFallback, grantedTo: "u2", secondToken: token).kinds() == [])
        // A token that names none of our orders decides nothing.
        var unknown = History()
        unknown.order("o2", "u2", "coins_60")
        unknown.verify("t1", "coins_60", token: token)
        unknown.bind("t1", "o2", "u2", .applicationUsername)
        unknown.grant("g1", "u2", "t1", coins60, order: "o2")
        #expect(unknown.kinds() == [])
    }

    @Test(
        "receipt-reused: a WeChat payment whose signed out_trade_no names another user's order, bound by hand elsewhere"
    )
    func aBindingAgainstTheOutTradeNo() {
        var h = History()
        h.add(
            .orderCreated(
                OrderCreated(
                    orderId: "wxA", userId: "alice", channel: .wechat, productId: "coins_60",
                    price: h.price("coins_60"),
                    accountToken: "wxA")))
        h.add(
            .paymentVerified(
                PaymentVerified(
                    channel: .wechat, transactionId: "42001", productId: "coins_60", purchaseDate: h.now,
                    price: h.price("coins_60"), outTradeNo: "wxA")))
        h.add(
            .transactionBound(
                TransactionBound(channel: .wechat, transactionId: "42001", orderId: nil, userId: "bob", method: .manual)
            ))
        h.add(
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g1", userId: "bob", channel: .wechat, transactionId: "42001", entitlement: coins60)))
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused, .wrongUser], "\(fs)")
        #expect(fs.allSatisfy { $0.userId == "bob" })
    }
}
