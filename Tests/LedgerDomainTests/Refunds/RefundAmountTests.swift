import LedgerCore
@testable import LedgerDomain
import Testing

@Suite("Refund amounts")
struct RefundAmountTests {
    @Test func refundsAreSummedInThePriceCurrencyOnly() {
        let cny = Currency("CNY")!, usd = Currency("USD")!
        var t = TransactionView(transactionId: "t1")
        t.price = Money(minorUnits: 600, currency: cny)
        let at = Timestamp("2026-03-01T00:00:00Z")!
        t.refunds = [
            ("r2", Money(minorUnits: 100, currency: usd)), ("r1", Money(minorUnits: 200, currency: cny)),
            ("r3", Money(minorUnits: 50, currency: cny)),
        ]
        .enumerated().map {
            RefundRecord(refundId: $1.0, amount: $1.1, refundedAt: at, position: Int64($0 + 1), loggedAt: at)
        }
        #expect(t.refundState == .refunded)
        #expect(t.refundedAmount == Money(minorUnits: 250, currency: cny))
    }
}
