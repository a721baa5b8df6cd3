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
}
