import LedgerCore

public struct RevocationRecord: Hashable, Sendable {
    public var userId: String
    public var reason: RevocationReason
    public var position: Int64
    /// How many grants it took back (0: nothing was granted to revoke).
    public var grantsRevoked: Int
}

public enum RefundState: String, Sendable, Hashable {
    case none, requested, declined, refunded, reversed
}

extension TransactionView {
    /// The money refunded (while a refund stands).
    public var refundedAmount: Money? {
        // In the price's currency (else the first refund's by id): refunds are never summed across
        // currencies, and the choice does not depend on dictionary order.
        guard refundState == .refunded, let first = refunds.sorted(by: { $0.key < $1.key }).first?.value else { return nil }
        let currency = price?.currency ?? first.currency
        return Money(minorUnits: refunds.values.filter { $0.currency == currency }.reduce(0) { $0.addingSaturated($1.minorUnits) },
                     currency: currency)
    }

    /// How many units the buyer is still owed once refunds are taken into account: none when
    /// unverified or refunded in full; a partial refund takes back whole units, rounded up.
    public var quantityOwedAfterRefunds: Int64 {
        let bought: Int64 = verified ? quantity : 0
        guard refundState == .refunded, let refunded = refundedAmount else { return bought }
        guard let price, price.minorUnits > 0, refunded.minorUnits < price.minorUnits else { return 0 }
        let back = refunded.minorUnits.multipliedSaturated(by: quantity).addingSaturated(price.minorUnits - 1) / price.minorUnits
        return max(0, bought - back)
    }
}
