import LedgerCore
@testable import LedgerDomain
import Testing

/// Google names a subscription by its purchase token, which is no transaction id: the owner and the
/// renewals must still be found.
@Suite("Refund amounts")
struct RefundAmountTests {
    @Test func refundsAreSummedInThePriceCurrencyOnly() {
        let cny = Currency("CNY")!, usd = Currency("USD")!
        var t = TransactionView(transactionId: "t1")
        t.price = Money(minorUnits: 600, currency: cny)
        t.refundState = .refunded
        t.refunds = ["r2": Money(minorUnits: 100, currency: usd), "r1": Money(minorUnits: 200, currency: cny), "r3": Money(minorUnits: 50, currency: cny)]
        #expect(t.refundedAmount == Money(minorUnits: 250, currency: cny))
    }
}
