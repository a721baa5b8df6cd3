import LedgerCore

/// Refunds and revocations: money returned, its reversal, the store's notices, and what fulfilment took back.
extension Projections {
    /// Apple REVOKE (family sharing withdrawn): the store took the purchase back.
    mutating func storeRevocation(_ f: StoreNotificationReceived, _ ctx: FactContext) {
        guard f.channel == .appstore, f.type.raw == "REVOKE", f.verification == "signature-ok", let txId = f.transactionId else { return }
        updateTransaction(txId, ctx.position) { t in
            if t.channel == nil { t.channel = f.channel }
            t.storeRevokedPosition = ctx.position
            t.storeRevokedAt = ctx.occurredAt
        }
    }

    mutating func apply(_ f: EntitlementRevoked, _ ctx: FactContext) {
        let p = ctx.position
        var taken: [GrantRecord] = []
        updateTransaction(f.transactionId, p) { t in
            for i in t.grants.indices where t.grants[i].revokedAt == nil && t.grants[i].userId == f.userId
                && (f.grantId == nil || t.grants[i].grantId == f.grantId) {
                t.grants[i].revokedAt = p
                taken.append(t.grants[i])
            }
            t.revocations.append(RevocationRecord(userId: f.userId, reason: f.reason, position: p, grantsRevoked: taken.count))
        }
        if taken.isEmpty {
            anomaly(p, "revocation-without-grant", "user \(f.userId) had no active grant for transaction \(f.transactionId) to revoke (\(f.reason.raw))")
        }
        updateUser(f.userId, p) { u in
            for g in taken { Self.credit(&u, g.entitlement, quantity: g.quantity, anchor: g.at, grantId: g.grantId, sign: -1) }
            Self.checkBalance(&u, p, cause: f.transactionId)
        }
        transactionChanged(f.transactionId)
    }

    mutating func apply(_ f: Refunded, _ ctx: FactContext) {
        let p = ctx.position
        if transactions[f.transactionId]?.verified != true {
            anomaly(p, "refund-for-unknown-transaction", "refund \(f.refundId) of \(f.amount) names transaction \(f.transactionId), which was never verified")
        }
        updateTransaction(f.transactionId, p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.refunds[f.refundId] = f.amount
            t.refundState = .refunded
            t.refundPositions.append(p)
            t.refundedPosition = p
            t.refundedAt = ctx.occurredAt
        }
        setRevoked(f.transactionId, true)
        transactionChanged(f.transactionId)
    }

    mutating func reverseRefund(_ f: RefundNotice, _ ctx: FactContext) {
        let p = ctx.position
        if transactions[f.transactionId]?.refundState != .refunded {
            anomaly(p, "reversal-without-refund", "refund reversal for transaction \(f.transactionId), which has no refund")
        }
        updateTransaction(f.transactionId, p) { t in
            if t.channel == nil { t.channel = f.channel }
            if t.refundState == .refunded { t.refundState = .reversed }
            t.refundPositions.append(p)
        }
        setRevoked(f.transactionId, false)
        transactionChanged(f.transactionId)
    }

    mutating func setRevoked(_ txId: String, _ revoked: Bool) {
        guard let t = transactions[txId], let orig = t.originalTransactionId, let c = t.channel else { return }
        let key = Self.subscriptionKey(c, orig)
        guard var s = subscriptions[key], let i = s.periods.firstIndex(where: { $0.transactionId == txId }) else { return }
        s.periods[i].revoked = revoked
        subscriptions[key] = s
        if tracksChanges { changes.subscriptions.insert(key) }
    }

    mutating func refundNotice(_ f: RefundNotice, _ p: Int64, state: RefundState) {
        updateTransaction(f.transactionId, p) { t in
            if t.channel == nil { t.channel = f.channel }
            if t.refundState == .none || t.refundState == .requested { t.refundState = state }
            t.refundPositions.append(p)
        }
    }
}
