import LedgerCore
@testable import LedgerDomain
import Testing

/// Google's voided purchases as the store dates them and however they reach the log: before the
/// verification, or days after the void.
@Suite("Google voids")
struct VoidTests {
    static let hour: Int64 = 3_600_000_000

    /// A Google purchase of `quantity` coins_60, bought at the history's start.
    static func verify(_ h: inout History, quantity: Int64 = 1, at bought: Timestamp) {
        h.add(
            .paymentVerified(
                PaymentVerified(
                    channel: .googleplay, transactionId: "GPA.1", originalTransactionId: "tok1", productId: "coins_60",
                    quantity: quantity, purchaseDate: bought,
                    price: Money(minorUnits: 600 * quantity, currency: History.cny))))
    }

    static func void(_ h: inout History, quantity: Int64?, at: Timestamp, after seconds: Int64 = 1) {
        h.add(
            .purchaseVoided(
                PurchaseVoided(transactionId: "GPA.1", purchaseToken: "tok1", voidedAt: at, voidedQuantity: quantity)),
            after: seconds)
    }

    @Test("a void logged before its verification is partial or whole as the quantity bought says")
    func voidBeforeVerification() {
        for (voided, whole) in [(Int64(1), false), (3, true), (5, true)] {
            var h = History()
            let bought = h.now
            Self.void(&h, quantity: voided, at: bought)
            let void = h.last
            Self.verify(&h, quantity: 3, at: bought)
            let t = h.fold().transactions["GPA.1"]
            if whole {
                #expect(t?.storeRevokedPosition == void && t?.voidedQuantity == nil, "\(voided) of 3")
            } else {
                #expect(t?.storeRevokedPosition == nil && t?.voidedQuantity == 1 && t?.voidedPosition == void)
            }
        }
    }

    @Test("the acknowledgement deadline is judged by the store's time of a void, not the time it was logged")
    func voidLoggedAfterTheDeadline() {
        for (voidedAfterHours, finding) in [(Int64(1), false), (80, true)] {
            var h = History()
            let bought = h.now
            Self.verify(&h, at: bought)
            // Logged four days later: the store voided it after an hour (before the deadline), or after 80.
            Self.void(
                &h, quantity: nil,
                at: Timestamp(microsecondsSince1970: bought.microseconds + voidedAfterHours * Self.hour),
                after: 4 * 86_400)
            #expect(h.kinds().contains("unacknowledged-purchase") == finding, "voided after \(voidedAfterHours) h")
        }
        // A partial void leaves the rest to acknowledge.
        var h = History()
        let bought = h.now
        Self.verify(&h, quantity: 3, at: bought)
        Self.void(&h, quantity: 1, at: Timestamp(microsecondsSince1970: bought.microseconds + Self.hour))
        h.wait(hours: 80)
        // At risk: what Google would still return, the two units not voided.
        let late = h.audit().first { $0.kind == .unacknowledgedPurchase }
        #expect(late?.amountAtRisk == Money(minorUnits: 1200, currency: History.cny))
    }

    @Test("revenue dates a void by the store's time: a partial void's share on its day, the rest on the whole void's")
    func revenueAtTheStoresDates() {
        let day: Int64 = 24 * Self.hour
        var h = History()
        let bought = h.now
        Self.verify(&h, quantity: 3, at: bought)
        Self.void(
            &h, quantity: 1, at: Timestamp(microsecondsSince1970: bought.microseconds + 3 * day), after: 5 * 86_400)
        Self.void(&h, quantity: nil, at: Timestamp(microsecondsSince1970: bought.microseconds + 6 * day), after: 86_400)
        let rows = Revenue.compute(h.fold(), by: .day).filter { $0.ledger.refunds > 0 }
        // Logged on days 5 and 6; voided on days 3 (one unit of three: 6.00) and 6 (the rest: 12.00).
        let day3 = Timestamp(microsecondsSince1970: bought.microseconds + 3 * day).iso8601.prefix(10)
        let day6 = Timestamp(microsecondsSince1970: bought.microseconds + 6 * day).iso8601.prefix(10)
        #expect(rows.map(\.period) == [String(day3), String(day6)])
        #expect(rows.map(\.ledger.refunded) == [600, 1200])
    }

    @Test("a whole void answers a partial void's notice, whichever comes first")
    func aWholeVoidCompletesANotice() {
        var h = History()
        Self.verify(&h, quantity: 3, at: h.now)
        h.partialVoidNotice("GPA.1", token: "tok1")
        #expect(!h.fold().untranslated.isEmpty)
        Self.void(&h, quantity: nil, at: h.now)
        #expect(h.fold().untranslated.isEmpty)
    }
}
