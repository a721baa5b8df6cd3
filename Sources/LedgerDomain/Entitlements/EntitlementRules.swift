import LedgerCore
import LedgerFoldStore

/// The audit rules of entitlements: what fulfilment granted against what was paid for.
extension Audit {
    /// **grant-without-payment**: the transaction is not verified (no PaymentVerified and no
    /// SubscriptionRenewed; it may have only VerificationFailed facts) and has at least one active
    /// grant. No window. One finding per transaction: user and order of its first active grant
    /// (order: the grant's, else the transaction's binding); positions: the active grants and the
    /// failed verifications; amount: (the price, else the named order's price) x active grants.
    static func grantWithoutPayment(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        guard !t.verified, let first = active.first else { return }
        let order = first.orderId ?? t.orderId
        let price = t.price ?? c.orderPrice(order)
        let failed = t.failedVerifications.map { "\($0.code)\($0.retryable ? " (retryable)" : "")" }
        let why = failed.isEmpty ? "was never verified" : "only failed verification (\(failed.joined(separator: ", ")))"
        c.add(
            .grantWithoutPayment, t.channel, user: first.userId, order: order, tx: t.transactionId, app: t.keyApp,
            active.map(\.position) + t.failedVerifications.map(\.position), times(price, active.count),
            "Transaction \(t.transactionId) has \(active.count) active grant(s) (\(active.map(\.grantId).joined(separator: ", "))) but \(why)."
        )
    }

    /// **double-grant**: a verified transaction with two or more active grants (to one user or
    /// several, one order or several). No window. User: the owner, else the first grant's user;
    /// order: the binding's; positions: the verification and the active grants; amount:
    /// price x (active grants - 1).
    ///
    /// Grants partly taken back count for what is left of them: when one of the active grants was
    /// (a subscription moved to another user with its remaining days: the old grant less those days,
    /// and a grant of them to the new owner), the grants are double only if the units left in them
    /// exceed what one payment owes; the amount is then revenue x excess / owed, rounded up. Days
    /// left that differ from the owed period are subscription-drift's.
    static func doubleGrant(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        guard t.verified, !active.isEmpty else { return }
        guard active.count > 1 else { return overGrant(t, active[0], &c) }
        if let part = partlyTakenBack(t, active, c) {
            guard !part.period, part.left > part.owed else { return }
            let desc = active.map { "\($0.grantId) to \($0.userId) (\($0.unitsLeft) left)" }.joined(separator: ", ")
            c.add(
                .doubleGrant, t.channel, user: c.owner(t)?.user ?? active[0].userId, order: t.orderId,
                tx: t.transactionId, app: t.keyApp,
                [t.verifiedPosition] + active.map(\.position),
                t.revenue.map { scaled($0, part.left - part.owed, part.owed) },
                "Transaction \(t.transactionId) paid for \(part.owed) \(part.unit) but its active grants (\(desc)) leave \(part.left)."
            )
            return
        }
        let desc = active.map { "\($0.grantId) to \($0.userId)" }.joined(separator: ", ")
        c.add(
            .doubleGrant, t.channel, user: c.owner(t)?.user ?? active[0].userId, order: t.orderId, tx: t.transactionId,
            app: t.keyApp,
            [t.verifiedPosition] + active.map(\.position), times(t.revenue, active.count - 1),
            "Transaction \(t.transactionId) was paid once but has \(active.count) active grants (\(desc)).")
    }

    /// The active grants of `t` counted for what is left of them, when one of them was partly
    /// taken back: the units left in all, what one payment owes, and whether they are days. Nil
    /// when every active grant is whole (they are counted by number), when there is only one, or
    /// when the catalogue does not know the product or the grants are of another unit.
    static func partlyTakenBack(
        _ t: TransactionView, _ active: Few<GrantRecord>, _ c: Context
    )
        -> (left: Int64, owed: Int64, unit: String, period: Bool)?
    {
        guard active.count > 1, active.contains(where: { $0.revokedUnits > 0 }), let e = c.entitlement(t) else {
            return nil
        }
        let owed = t.owedUnits(of: e)
        guard owed.count > 0 else { return nil }
        var left: Int64 = 0
        for g in active {
            guard g.units.unit == owed.unit else { return nil }
            left = left.addingSaturated(g.unitsLeft)
        }
        return (left, owed.count, owed.unit, e.periodEntitlement != nil)
    }

    /// **double-grant** (an over-grant): a verified transaction of a coin or feature product, not
    /// refunded, voided or revoked by the store, whose one active grant gives more units than the
    /// transaction owes (120 coins for a 60-coin product). Positions: the verification and the
    /// grant; amount: the revenue x excess / owed units, rounded up.
    static func overGrant(_ t: TransactionView, _ g: GrantRecord, _ c: inout Context) {
        guard t.refunds.isEmpty, t.voidedQuantity == nil, t.storeRevokedPosition == nil,
            let e = c.entitlement(t), e.periodEntitlement == nil
        else { return }
        let owed = t.owedUnits(of: e), got = (unit: g.units.unit, count: g.unitsLeft)
        guard got.unit == owed.unit, owed.count > 0, got.count > owed.count else { return }
        let excess = got.count - owed.count
        c.add(
            .doubleGrant, t.channel, user: c.owner(t)?.user ?? g.userId, order: t.orderId, tx: t.transactionId,
            app: t.keyApp,
            [t.verifiedPosition, g.position], t.revenue.map { scaled($0, excess, owed.count) },
            "Transaction \(t.transactionId) paid for \(owed.count) \(owed.unit) but grant \(g.grantId) gave \(got.count): \(excess) too many."
        )
    }

    /// **missing-grant**: a verified payment or renewal that is owed something (owed units > 0;
    /// for a product the catalogue does not know: not refunded; never after an Apple REVOKE of
    /// it, which owes nothing), has no active grant, is not an
    /// orphan payment (see ``orphanPayment``), and log time is past `verifiedAt` + the
    /// missing-grant window. User and order: the owner and the binding's order; positions: the
    /// verification, the bindings, and any grants and revocations (all taken back); amount: the
    /// price less any refund.
    static func missingGrant(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        // A refund reversed owes the entitlement again: the window runs from the latest reversal too.
        let start = ([t.verifiedAt] + t.reversals.map(\.at)).compactMap { $0 }.max()
        guard t.verified, active.isEmpty, !isOrphan(t), c.passed(start, c.options.missingGrantWindow) else { return }
        // One root cause, one finding: a revocation with nothing behind it is revoked-without-refund's.
        guard !revokedWithoutRefundApplies(t) else { return }
        let og = c.p.owedGranted(t)
        let owes =
            t.storeRevokedPosition == nil
            && (og.status == .unknownProduct ? t.refundState != .refunded : og.owedUnits > 0)
        guard owes else { return }
        let owed = og.unit.map { "\(og.owedUnits) \($0)" } ?? "product \(t.productId ?? "?") (not in the catalogue)"
        c.add(
            .missingGrant, t.channel, user: c.owner(t)?.user, order: t.orderId, tx: t.transactionId, app: t.keyApp,
            [t.verifiedPosition] + t.bindings.map(\.position) + t.grants.map(\.position) + t.revocations.map(\.position)
                + t.reversals.map(\.position),
            t.revenue == nil ? nil : netPaid(t),
            "\(t.isRenewal ? "Renewal" : "Payment") \(t.transactionId) verified at \(t.verifiedAt?.iso8601 ?? "?") owes \(owed) and has no active grant after the \(c.options.missingGrantWindow) window."
        )
    }

    /// **wrong-user**: an active grant to a user other than the transaction's owner when it was
    /// granted (the user of the last TransactionTransferred before it, else as ``Audit/run(_:options:)`` says; with no owner, the user of the order the grant names; with
    /// neither, no finding). One finding per (transaction, recipient): user: the recipient;
    /// order: the binding's, else the grant's; positions: the proof of ownership (binding, the
    /// original's binding, the token's order or the grant's order) and the grants; amount:
    /// (price, else the order's price) x those grants.
    static func wrongUser(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        guard !active.isEmpty else { return }
        var wrong: [String: (grants: [GrantRecord], owner: String, proof: Int64?)] = [:]
        for g in active {
            // The owner when the grant was made: a move to another user counts from its position.
            var expected = c.owner(t, at: g.position)
            if expected == nil, let oid = g.orderId, let o = c.p.orders[oid], let u = o.userId {
                expected = Context.Owner(user: u, proof: .position(o.positions.first))
            }
            guard let e = expected, e.user != g.userId else { continue }
            // The proof is looked up (an autoclosure) only for the first wrong grant to this user.
            wrong[g.userId, default: ([], e.user, c.position(of: e.proof))].grants.append(g)
        }
        for (user, w) in wrong {
            let order = t.orderId ?? w.grants[0].orderId
            c.add(
                .wrongUser, t.channel, user: user, order: order, tx: t.transactionId, app: t.keyApp,
                [w.proof] + w.grants.map(\.position),
                times(t.price == nil ? c.orderPrice(order) : t.revenue, w.grants.count),
                "Transaction \(t.transactionId) belongs to \(w.owner) but \(w.grants.count) grant(s) went to \(user).")
        }
    }

    /// **negative-balance**: a user whose coin balance (credits - spends - clawbacks) is below
    /// zero now. Positions: the fact that took it below zero (`negativeSince`). When that fact was
    /// a clawback (EntitlementRevoked), the finding names its transaction, order and channel, and
    /// the amount is the refunded amount (else the price) x min(deficit, coins clawed back from the
    /// user's grants of it, by whole and partial revocations) / those coins, rounded up: the money
    /// returned for coins already spent. A spend: no transaction, no amount.
    static func negativeBalance(_ u: UserView, _ c: inout Context) {
        guard u.coinBalance < 0, let since = u.negativeSince else { return }
        let deficit = u.coinBalance == .min ? .max : -u.coinBalance
        var amount: Money?
        let t = u.negativeCause.flatMap { c.p.transactions[$0] }
        if let t, let money = t.refundedAmount ?? t.price {
            let clawed = t.grants.filter { $0.userId == u.userId }
                .reduce(Int64(0)) { s, g in
                    guard case .coins = g.entitlement else { return s }
                    return s.addingSaturated(g.revokedAt != nil ? g.units.count : min(g.revokedUnits, g.units.count))
                }
            if clawed > 0 { amount = prorate(money, min(deficit, clawed), clawed) }
        }
        let cause = t.map { "the clawback of transaction \($0.transactionId)" } ?? "a spend"
        c.add(
            .negativeBalance, t?.channel, user: u.userId, order: t?.orderId, tx: t?.transactionId, app: t?.keyApp,
            [since],
            amount,
            "User \(u.userId) has a coin balance of \(u.coinBalance), below zero since \(cause) at position \(since).")
    }
}
