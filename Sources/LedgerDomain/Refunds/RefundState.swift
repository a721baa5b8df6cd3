import LedgerCore

public struct RevocationRecord: Hashable, Sendable, Codable {
    public var userId: String
    public var reason: RevocationReason
    public var position: Int64
    /// How many grants it took back, in whole or in part (0: nothing was granted to revoke).
    public var grantsRevoked: Int
}

public enum RefundState: String, Sendable, Hashable, Codable {
    case none, requested, declined, refunded, reversed
}

/// One refund that returned money, as the store dated it.
public struct RefundRecord: Hashable, Sendable, Codable {
    public var refundId: String
    public var amount: Money
    /// The store's time: refunds and reversals apply in this order, whatever order they arrive in.
    public var refundedAt: Timestamp
    public var position: Int64
    /// `occurredAt` of the fact: the refund-not-revoked window runs from it.
    public var loggedAt: Timestamp
}

/// A refund reversal, as the store dated it; it names its refund when the store said which.
public struct ReversalRecord: Hashable, Sendable, Codable {
    public var refundId: String?
    public var at: Timestamp
    public var position: Int64
}

extension TransactionView {
    /// Whether a reversal dated at or after the refund (and naming it, or naming none) undid it.
    public func isReversed(_ r: RefundRecord) -> Bool {
        reversals.contains { ($0.refundId == nil || $0.refundId == r.refundId) && $0.at >= r.refundedAt }
    }

    /// The refunds that stand: not undone by a later reversal in the store's order.
    public var standingRefunds: [RefundRecord] { refunds.filter { !isReversed($0) } }

    /// Refunded while a refund stands; reversed when every refund was undone; else what the
    /// store's notices said (requested, declined).
    public var refundState: RefundState {
        if refunds.isEmpty { return noticeState }
        return standingRefunds.isEmpty ? .reversed : .refunded
    }

    /// The latest standing refund by the log: the refund-not-revoked window runs from it.
    public var latestStandingRefund: RefundRecord? { standingRefunds.max { $0.position < $1.position } }

    /// The money refunded (while a refund stands), in the price's currency (else the first refund's
    /// by id): refunds are never summed across currencies, and the choice does not depend on order.
    public var refundedAmount: Money? {
        let standing = standingRefunds
        guard let first = standing.min(by: { $0.refundId < $1.refundId }) else { return nil }
        let currency = price?.currency ?? first.amount.currency
        return standing.filter { $0.amount.currency == currency }
            .reduce(Money(minorUnits: 0, currency: currency)) {
                $0.adding($1.amount) ?? Money(minorUnits: .max, currency: currency)
            }
    }

    /// The units still owed of `units` once refunds and store revocations are taken into
    /// account: none when unverified, refunded in full or revoked by the store in full; a partial
    /// refund takes back the share of the money, `units * refunded / paid` rounded down, and a
    /// partial void the share of the quantity.
    public func unitsOwedAfterRefunds(_ units: Int64) -> Int64 {
        guard verified else { return 0 }
        if storeRevokedPosition != nil { return 0 }
        var owed = units
        if let voided = voidedQuantity, quantity > 0 {
            owed = owed.subtractingSaturated(Audit.share(owed, voided, quantity))
        }
        guard refundState == .refunded, let refunded = refundedAmount else { return max(0, owed) }
        guard let price, price.currency == refunded.currency, price.millionths > 0,
            refunded.millionths < price.millionths
        else { return 0 }
        // Exactly: amounts compare in millionths of a minor unit (an inexact store amount too).
        return max(0, owed.subtractingSaturated(Audit.share(owed, refunded.millionths, price.millionths)))
    }
}
