import LedgerCore

/// The audit rules of refunds and revocations: money returned must be taken back; nothing taken back without a reason.
extension Audit {
    /// **refund-not-revoked**: either the transaction is refunded (a Refunded fact not undone by a
    /// RefundReversed) and its net granted units exceed what it is still owed, or a verified Apple
    /// REVOKE notification names it and it still has an active grant; and log time is past the
    /// latest of those facts (`refundedAt`, `storeRevokedAt`) + the refund window. User and order:
    /// the owner and the binding's order; positions: the latest Refunded / REVOKE and the active
    /// grants; amount: the refunded amount (REVOKE only: the price).
    static func refundNotRevoked(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard !active.isEmpty, t.refundState == .refunded || t.storeRevokedPosition != nil else { return }
        let og = c.p.owedGranted(t)
        let refunded = t.refundState == .refunded && og.netUnits > og.owedUnits
        let revoked = t.storeRevokedPosition != nil
        guard refunded || revoked else { return }
        let start = [refunded ? t.refundedAt : nil, t.storeRevokedAt].compactMap { $0 }.max()
        guard c.passed(start, c.options.refundWindow) else { return }
        let what = refunded ? "refunded (\(t.refundedAmount.map(\.description) ?? "?"))" : "revoked by the store (REVOKE)"
        c.add(.refundNotRevoked, t.channel, user: c.owner(t)?.user ?? active[0].userId, order: t.orderId, tx: t.transactionId,
              [refunded ? t.refundedPosition : nil, t.storeRevokedPosition] + active.map(\.position),
              refunded ? (t.refundedAmount ?? t.price) : t.price,
              "Transaction \(t.transactionId) was \(what) at \(start?.iso8601 ?? "?") but \(active.count) grant(s) are still active after the \(c.options.refundWindow) window.")
    }

    /// **revoked-without-refund**: an EntitlementRevoked whose reason is not `support`, for a
    /// transaction with no Refunded fact and no Apple REVOKE notification anywhere in the replayed
    /// log (whatever the reason says: `refund` with no refund behind it is the finding). One
    /// finding per (transaction, revoked user): positions: those revocations; order: the binding's;
    /// amount: the price.
    static func revokedWithoutRefund(_ t: TransactionView, _ c: inout Context) {
        guard !t.revocations.isEmpty, t.refunds.isEmpty, t.storeRevokedPosition == nil else { return }
        var byUser: [String: [RevocationRecord]] = [:]
        for r in t.revocations where r.reason != .support { byUser[r.userId, default: []].append(r) }
        for (user, rs) in byUser {
            c.add(.revokedWithoutRefund, t.channel, user: user, order: t.orderId, tx: t.transactionId, rs.map(\.position), t.price,
                  "Transaction \(t.transactionId) was revoked from \(user) (\(rs.map(\.reason.raw).joined(separator: ", "))) with no refund, store revoke or support reason behind it.")
        }
    }
}
