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
    }
}
