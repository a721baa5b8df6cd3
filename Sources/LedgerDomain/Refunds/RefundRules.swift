import LedgerCore
import LedgerFoldStore

/// The audit rules of refunds and revocations: money returned must be taken back; nothing taken back without a reason.
extension Audit {
    /// **refund-not-revoked**: either the transaction is refunded (a Refunded fact that returned
    /// money, not undone by a RefundReversed dated at or after it by the store) or partly voided,
    /// and its net granted units exceed what it is still owed (a partial refund takes back
    /// `units * refunded / paid`, rounded down); or the store revoked it (Apple REVOKE, Google
    /// SUBSCRIPTION_REVOKED, a voided purchase) and it still has an active grant; and log time is
    /// past the latest of those facts + the refund window. User: who holds the active grants (after a
    /// move, the old owner may), the owner when several do; order: the binding's; positions: the latest standing refund, void or revocation and the active
    /// grants; amount: the refunded amount (a revocation: the revenue; none for a family-shared copy).
    static func refundNotRevoked(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        let refund = t.refundState == .refunded ? t.latestStandingRefund : nil
        guard !active.isEmpty, refund != nil || t.voidedQuantity != nil || t.storeRevokedPosition != nil else { return }
        let og = c.p.owedGranted(t)
        let overGranted = og.netUnits > og.owedUnits
        let refunded = refund != nil && overGranted
        let voided = t.voidedQuantity != nil && overGranted
        let revoked = t.storeRevokedPosition != nil
        guard refunded || voided || revoked else { return }
        let start = [refunded ? refund?.loggedAt : nil, voided ? t.voidedAt : nil, t.storeRevokedAt].compactMap { $0 }
            .max()
        guard c.passed(start, c.options.refundWindow) else { return }
        let what =
            refunded
            ? "refunded (\(t.refundedAmount.map(\.description) ?? "?"))"
            : revoked
                ? "revoked by the store" : "partly voided by the store (\(t.voidedQuantity ?? 0) of \(t.quantity))"
        // Who holds what is to be taken back: after a move, the old owner may still hold it.
        let holder =
            active.allSatisfy({ $0.userId == active[0].userId })
            ? active[0].userId : c.owner(t)?.user ?? active[0].userId
        c.add(
            .refundNotRevoked, t.channel, user: holder, order: t.orderId,
            tx: t.transactionId, app: t.keyApp,
            [refunded ? refund?.position : nil, voided ? t.voidedPosition : nil, t.storeRevokedPosition]
                + active.map(\.position),
            t.revenue == nil ? nil : refunded ? (t.refundedAmount ?? t.price) : t.price,
            "Transaction \(t.transactionId) was \(what) at \(start?.iso8601 ?? "?") but \(active.count) grant(s) are still active after the \(c.options.refundWindow) window."
        )
    }

    /// Revocations other than `support` with no refund, void or store revocation behind them.
    static func revokedWithoutRefundApplies(_ t: TransactionView) -> Bool {
        t.refunds.isEmpty && t.storeRevokedPosition == nil && t.voidedQuantity == nil
            && t.revocations.contains { $0.reason != .support && $0.reason != .upgrade }
    }

    /// **revoked-without-refund**: an EntitlementRevoked whose reason is not `support`, for a
    /// transaction with no refund that returned money, no store revocation and no void anywhere in the
    /// replayed log (whatever the reason says: `refund` with no refund behind it is the finding). One
    /// finding per (transaction, revoked user): positions: those revocations; order: the binding's;
    /// amount: the price.
    static func revokedWithoutRefund(_ t: TransactionView, _ c: inout Context) {
        guard revokedWithoutRefundApplies(t) else { return }
        var byUser: [String: [RevocationRecord]] = [:]
        for r in t.revocations where r.reason != .support && r.reason != .upgrade {
            byUser[r.userId, default: []].append(r)
        }
        for (user, rs) in byUser {
            c.add(
                .revokedWithoutRefund, t.channel, user: user, order: t.orderId, tx: t.transactionId, app: t.keyApp,
                rs.map(\.position),
                t.revenue,
                "Transaction \(t.transactionId) was revoked from \(user) (\(rs.map(\.reason.raw).joined(separator: ", "))) with no refund, store revoke or support reason behind it."
            )
        }
    }
}
