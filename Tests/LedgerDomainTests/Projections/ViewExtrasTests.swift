@testable import LedgerDomain
import LedgerCore
import LedgerScenarios
import Testing

/// Orders and transactions keep what few of them have (refunds, closes, revocations, transfers...)
/// out of line: a view without any carries none, and setting such a field to its empty value
/// makes none.
@Suite("View extras")
struct ViewExtrasTests {
    @Test func emptyValuesMakeNoExtras() {
        var o = OrderView(orderId: "o1")
        o.refunded = nil
        o.closeReason = nil
        o.closedAfterPayment = false
        #expect(o.extras.isEmpty)
        let price = Money(minorUnits: 499, currency: Currency("USD")!)
        o.refunded = price
        #expect(o.extras.count == 1 && o.refunded == price && o.closeReason == nil && !o.closedAfterPayment)
        o.refunded = nil
        #expect(o.refunded == nil && o.extras.count == 1)

        var t = TransactionView(transactionId: "t1")
        #expect(t.refunds.isEmpty && t.storeRevokedPosition == nil && t.extras.isEmpty)
        t.refundPositions.append(7)
        t.voidedQuantity = 2
        #expect(t.extras.count == 1 && t.refundPositions == [7] && t.voidedQuantity == 2 && t.transfers.isEmpty)
    }

    /// In a history with every fault, most views carry no extras, and those that do are the
    /// ones with refunds, closes, revocations, voids, transfers or upgrades.
    @Test func onlyViewsWithRareFactsCarryExtras() throws {
        let p = Simulator(users: 80, days: 30, seed: 5, faults: try FaultSpec.parse("all=0.05")).fold()
        let orders = p.orders.values.filter { !$0.extras.isEmpty }
        let transactions = p.transactions.values.filter { !$0.extras.isEmpty }
        #expect(!orders.isEmpty && orders.count * 4 < p.orders.count)
        #expect(!transactions.isEmpty && transactions.count * 4 < p.transactions.count)
        // An order's refund can be reversed: then its extras remain, empty.
        #expect(
            orders.allSatisfy { o in
                o.refunded != nil || o.closeReason != nil || o.closedAfterPayment
                    || o.transactionId.flatMap { p.transactions[$0] }.map { !$0.refundPositions.isEmpty } == true
            })
        #expect(
            transactions.allSatisfy { t in
                !t.failedVerifications.isEmpty || !t.refundPositions.isEmpty || t.storeRevokedPosition != nil
                    || t.voidedQuantity != nil
                    || !t.transfers.isEmpty || !t.revocations.isEmpty || t.upgraded
            })
    }
}
