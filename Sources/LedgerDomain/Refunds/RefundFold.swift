import LedgerCore

/// Refunds and revocations: money returned, its reversal, the store's revocations and voids, and
/// what fulfilment took back. Refunds and reversals apply in the store's order, not the log's.
extension Projections {
    /// Apple REVOKE (family sharing withdrawn) of a transaction, or Google SUBSCRIPTION_REVOKED (12)
    /// of a subscription's current period: the store took the purchase back.
    mutating func storeRevocation(_ f: StoreNotificationReceived, _ ctx: FactContext) {
        guard f.verification == "signature-ok" else { return }
        let code = f.type.raw
        var txId: String?
        if f.channel == .appstore, code == "REVOKE" {
            txId = f.transactionId.map { txKey(f.channel, f.app, $0) }
        } else if f.channel == .googleplay, code == "12" || code == "SUBSCRIPTION_REVOKED" {
            txId =
                f.transactionId.map { txKey(f.channel, f.app, $0) }
                ?? f.originalTransactionId.flatMap { currentPeriod(f.channel, $0, at: f.signedAt ?? ctx.occurredAt) }
        }
        guard let txId else { return }
        revokedByStore(txId, f.channel, at: f.signedAt, ctx)
    }

    /// The store took transaction `key` back, whole, at this fact (and at `at` by its own clock).
    mutating func revokedByStore(_ key: String, _ channel: Channel, at: Timestamp?, _ ctx: FactContext) {
        updateTransaction(key, ctx.position) { t in
            if t.channel == nil { t.channel = channel }
            t.storeRevokedPosition = ctx.position
            t.storeRevokedAt = ctx.occurredAt
            if let at, t.revokedAtByStore.map({ at < $0 }) ?? true { t.revokedAtByStore = at }
        }
        refundsChanged(key)
    }

    /// The store's revocation as a fact of its own (StoreRevoked): of the transaction it names, or
    /// of the subscription's period running at `revokedAt`.
    mutating func apply(_ f: StoreRevoked, _ ctx: FactContext) {
        guard
            let txId = f.transactionId.map({ txKey(f.channel, f.app, $0) })
                ?? currentPeriod(f.channel, f.originalTransactionId, at: f.revokedAt)
        else {
            anomaly(
                ctx.position, "revocation-of-unknown-purchase",
                "store revocation \(f.notificationId) names \(f.originalTransactionId), of which no period ran at \(f.revokedAt.iso8601)"
            )
            return
        }
        if subscriptions.contains(Self.subscriptionKey(f.channel, f.originalTransactionId)) {
            updateSubscription(f.channel, f.originalTransactionId, ctx.position) { s in
                if s.revokedAt.map({ $0 > f.revokedAt }) ?? true { s.revokedAt = f.revokedAt }
            }
        }
        revokedByStore(txId, f.channel, at: f.revokedAt, ctx)
    }

    /// Google voided a purchase: all of it (a store revocation), or part of its quantity.
    mutating func apply(_ f: PurchaseVoided, _ ctx: FactContext) {
        // A void with its quantity, or of the whole purchase, answers a partial void's notice.
        complete(.voidedQuantity, f.channel, transactionId: f.transactionId, original: nil)
        void(f.channel, f.app, f.transactionId, quantity: f.voidedQuantity, at: f.voidedAt, ctx)
    }

    /// A Voided Purchases API line with its `voidedQuantity`, imported as a statement, records the
    /// quantity a partial void's notification lacked (and only then changes the transaction: other
    /// statement lines are for reconciliation).
    mutating func voidedQuantity(_ l: StatementLine, _ ctx: FactContext) {
        guard l.source == .googleplayVoided, l.kind == .refund, let tx = l.transactionId, let q = l.quantity,
            awaitsVoidedQuantity(l.channel, tx)
        else { return }
        complete(.voidedQuantity, l.channel, transactionId: tx, original: nil)
        void(l.channel, l.app, tx, quantity: q, at: l.at, ctx)
    }

    /// `quantity` units of the purchase voided at `at` by the store's clock: all of it (a store
    /// revocation) when nil or not less than bought. Before the verification says how many were
    /// bought, a quantity is kept as a partial void, and the verification decides (``TransactionView/voidIsWhole()``).
    mutating func void(
        _ channel: Channel, _ app: String?, _ transactionId: String, quantity: Int64?, at: Timestamp,
        _ ctx: FactContext
    ) {
        let key = txKey(channel, app, transactionId)
        let bought = transactions.with(key, { $0.verified ? $0.quantity : nil }) ?? nil
        guard let q = quantity, q < bought ?? .max else { return revokedByStore(key, channel, at: at, ctx) }
        updateTransaction(key, ctx.position) { t in
            if t.channel == nil { t.channel = channel }
            t.voidedQuantity = q
            t.voidedPosition = ctx.position
            t.voidedAt = ctx.occurredAt
            t.voidedAtByStore = at
        }
        refundsChanged(key)
    }

    mutating func apply(_ f: Refunded, _ ctx: FactContext) {
        let p = ctx.position
        let key = txKey(f.channel, f.app, f.transactionId)
        guard f.returnedMoney else {
            // WeChat PROCESSING, ABNORMAL, CLOSED: no money returned (yet); kept as evidence only.
            updateTransaction(key, p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.refundPositions.append(p)
            }
            return
        }
        if transactions.with(key, \.verified) != true {
            anomaly(
                p, "refund-for-unknown-transaction",
                "refund \(f.refundId) of \(f.amount) names transaction \(f.transactionId), which was never verified")
        }
        updateTransaction(key, p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.refunds.removeAll { $0.refundId == f.refundId }
            t.refunds.append(
                RefundRecord(
                    refundId: f.refundId, amount: f.amount, refundedAt: f.refundedAt, position: p,
                    loggedAt: ctx.occurredAt))
            t.refundPositions.append(p)
        }
        refundsChanged(key)
    }

    mutating func reverseRefund(_ f: RefundNotice, _ ctx: FactContext) {
        let p = ctx.position
        let key = txKey(f.channel, f.app, f.transactionId)
        // A reversal naming its refund may arrive before it (the store's order is not the log's).
        if f.refundId == nil, transactions.with(key, { $0.refunds.isEmpty }) ?? true {
            anomaly(
                p, "reversal-without-refund", "refund reversal for transaction \(f.transactionId), which has no refund")
        }
        updateTransaction(key, p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.reversals.append(ReversalRecord(refundId: f.refundId, at: f.signedAt ?? ctx.occurredAt, position: p))
            t.refundPositions.append(p)
        }
        refundsChanged(key)
    }

    /// A refund, reversal or store revocation changed what stands: the subscription period and the order follow.
    mutating func refundsChanged(_ txId: String) {
        setRevoked(
            txId, transactions.with(txId, { $0.refundState == .refunded || $0.storeRevokedPosition != nil }) ?? false)
        transactionChanged(txId)
    }

    mutating func setRevoked(_ txId: String, _ revoked: Bool) {
        guard let (orig, c) = subscriptionOf(txId) else { return }
        let key = Self.subscriptionKey(c, orig)
        var found = false
        subscriptions.update(key) { s in
            guard let i = s.periods.firstIndex(where: { $0.transactionId == txId }) else { return }
            s.periods[i].revoked = revoked
            found = true
        }
        guard found else { return }
        if tracksChanges { changes.subscriptions.insert(key) }
    }

    mutating func refundNotice(_ f: RefundNotice, _ p: Int64, state: RefundState) {
        updateTransaction(txKey(f.channel, f.app, f.transactionId), p) { t in
            if t.channel == nil { t.channel = f.channel }
            if t.noticeState == .none || t.noticeState == .requested { t.noticeState = state }
            t.refundPositions.append(p)
        }
    }
}

extension Projections {
    /// Fulfilment took back whole grants of a transaction (or the grant it names), or `units` of them.
    mutating func apply(_ f: EntitlementRevoked, _ ctx: FactContext) {
        let p = ctx.position
        guard
            let txId = f.transactionId.map({ txKey(f.channel, f.app, $0) })
                ?? f.grantId.flatMap({ id in policyGrants[id] == nil ? "grant:\(id)" : nil })
        else {
            return revokePolicyGrant(f, ctx)
        }
        var taken: [(grant: GrantRecord, units: Int64?)] = []
        updateTransaction(txId, p) { t in
            var left = f.units
            for i in t.grants.indices
            where t.grants[i].revokedAt == nil && t.grants[i].userId == f.userId
                && (f.grantId == nil || t.grants[i].grantId == f.grantId)
            {
                guard let want = left else {
                    t.grants[i].revokedAt = p
                    taken.append((t.grants[i], nil))
                    continue
                }
                guard want > 0 else { break }
                let part = min(want, t.grants[i].unitsLeft)
                t.grants[i].revokedUnits = t.grants[i].revokedUnits.addingSaturated(part)
                if t.grants[i].unitsLeft == 0 { t.grants[i].revokedAt = p }
                taken.append((t.grants[i], part))
                left = want - part
            }
            t.revocations.append(
                RevocationRecord(userId: f.userId, reason: f.reason, position: p, grantsRevoked: taken.count))
        }
        if taken.isEmpty {
            anomaly(
                p, "revocation-without-grant",
                "user \(f.userId) had no active grant for transaction \(transactions[txId]?.transactionId ?? txId) to revoke (\(f.reason.raw))"
            )
        }
        updateUser(f.userId, p) { u in
            for (g, units) in taken { Self.takeBack(&u, g, units: units) }
            Self.checkBalance(&u, p, cause: txId)
        }
        transactionChanged(txId)
    }

    /// A grant without a transaction, named by its grant id.
    mutating func revokePolicyGrant(_ f: EntitlementRevoked, _ ctx: FactContext) {
        guard let id = f.grantId, var pg = policyGrants[id], pg.grant.revokedAt == nil, pg.grant.userId == f.userId
        else {
            anomaly(
                ctx.position, "revocation-without-grant",
                "user \(f.userId) had no active grant \(f.grantId ?? "?") to revoke (\(f.reason.raw))")
            return
        }
        let part = f.units.map { min($0, pg.grant.unitsLeft) }
        if let part { pg.grant.revokedUnits = pg.grant.revokedUnits.addingSaturated(part) }
        if part == nil || pg.grant.unitsLeft == 0 { pg.grant.revokedAt = ctx.position }
        policyGrants[id] = pg
        updateUser(f.userId, ctx.position) { u in
            Self.takeBack(&u, pg.grant, units: part)
            Self.checkBalance(&u, ctx.position)
        }
    }

    /// The user's side of a revocation: `units` of the grant, or all it still gave.
    static func takeBack(_ u: inout UserView, _ g: GrantRecord, units: Int64?) {
        guard let units else {
            if case .coins = g.entitlement {
                // Coins a partial revocation took back already are not taken again.
                let left = max(0, g.units.count.subtractingSaturated(g.revokedUnits))
                u.coinsClawedBack = u.coinsClawedBack.addingSaturated(left)
                return
            }
            return credit(&u, g.entitlement, quantity: g.quantity, anchor: g.at, grantId: g.grantId, sign: -1)
        }
        switch g.entitlement {
        case .coins: u.coinsClawedBack = u.coinsClawedBack.addingSaturated(units)
        case .feature:
            if g.revokedAt != nil {
                credit(&u, g.entitlement, quantity: g.quantity, anchor: g.at, grantId: g.grantId, sign: -1)
            }
        case .subscription, .period:
            if let i = u.periodGrants.firstIndex(where: { $0.grantId == g.grantId }) {
                u.periodGrants[i].days = u.periodGrants[i].days.subtractingSaturated(units)
                if u.periodGrants[i].days <= 0 { u.periodGrants.remove(at: i) }
            }
        }
    }
}
