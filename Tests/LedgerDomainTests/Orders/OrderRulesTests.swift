import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

@Suite("Audit: orders")
struct OrderRulesTests {
    @Test("an order is created once: a second creation that differs is an anomaly and changes nothing")
    func createdAgain() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.order("o1", "u1", "coins_60")
        #expect(h.fold().anomalies.isEmpty)
        h.order("o1", "u2", "coins_60")
        let p = h.fold()
        #expect(p.orders["o1"]?.userId == "u1")
        #expect(p.anomalies.map(\.kind) == ["order-created-again"] && p.anomalies.first?.position == h.last)
        // The purchase is judged by the first creation: granted to its user, nothing wrong.
        h.launch("o1")
        h.report("u1", "t1", "coins_60", order: "o1")
        h.verify("t1", "coins_60")
        h.bind("t1", "o1", "u1", .applicationUsername)
        h.grant("g1", "u1", "t1", Catalogue.definition("coins_60")!.entitlement, order: "o1")
        #expect(h.kinds() == [])
    }

    // MARK: product-mismatch

    @Test("product-mismatch: the verified product differs from the order's")
    func productMismatch() throws {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.launch("o1")
        h.verify("t1", "coins_300")
        h.bind("t1", "o1", "u1", .skuFallback)
        h.grant("g1", "u1", "t1", .coins(300), order: "o1")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.productMismatch])
        #expect(
            fs.first?.orderId == "o1" && fs.first?.userId == "u1" && fs.first?.positions == [4, 6, 7]
                && fs.first?.amountAtRisk == cny(3000))

        var near = History()
        near.purchase(1)
        #expect(near.kinds() == [])

        // The same mismatch verified in the sandbox is shown apart, judged by no rule.
        var sandbox = History()
        sandbox.order("o1", "u1", "coins_60")
        sandbox.launch("o1")
        var verified = PaymentVerified(
            channel: .appstore, transactionId: "t1", productId: "coins_300", purchaseDate: sandbox.now,
            price: sandbox.price("coins_300"))
        verified.environment = .sandbox
        sandbox.add(.paymentVerified(verified))
        sandbox.bind("t1", "o1", "u1", .skuFallback)
        sandbox.grant("g1", "u1", "t1", .coins(300), order: "o1")
        #expect(sandbox.kinds() == [])
        // Its read model says so, and judges it no more than the audit does.
        let p = sandbox.fold()
        #expect(p.owedGranted(try #require(p.transactions["t1"])).status == .sandbox)
        #expect(Audit.sandboxPurchases(sandbox.fold()).map(\.transactionId) == ["t1"])
    }

    // MARK: stale-order

    @Test("stale-order: launched, never paid or closed, after the stale window in log time")
    func staleOrder() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.launch("o1")
        h.order("o2", "u1", "coins_60")  // never launched: not stale
        h.order("o3", "u1", "coins_60")
        h.launch("o3")
        h.close("o3")
        h.purchase(4)
        h.wait(hours: 23)
        #expect(h.kinds() == [])
        h.wait(hours: 2)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.staleOrder])
        #expect(fs.first?.orderId == "o1" && fs.first?.userId == "u1" && fs.first?.transactionId == nil)
        #expect(fs.first?.amountAtRisk == cny(600) && fs.first?.positions == [4, 5])
        #expect(h.audit(upTo: nil, AuditOptions(staleOrderWindow: .seconds(2 * 86_400))).isEmpty)
    }
}
