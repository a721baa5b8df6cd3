import LedgerCore

/// The audit rules of payments and binding: every payment bound to one order and one user, and
/// Google purchases acknowledged.
extension Audit {
    /// A verified transaction that is not a renewal, has no TransactionBound and no move to a user,
    /// and belongs to no subscription's user (a Google purchase token linked to a bound one is not
    /// an orphan).
    static func isOrphan(_ t: TransactionView) -> Bool {
        t.verified && !t.isRenewal && t.bindings.isEmpty && t.transfers.isEmpty && t.subscriptionUserId == nil
    }

    /// **orphan-payment**: a verified transaction that is an orphan (see ``isOrphan(_:)``; renewals
    /// belong to their subscription's user and need no binding of their own). No window: it is an
    /// orphan until bound. User and order: none (that is the finding); positions: the verification
    /// and the client reports; amount: the revenue.
    static func orphanPayment(_ t: TransactionView, _ c: inout Context) {
        guard isOrphan(t) else { return }
        let reporters = Set(t.reports.compactMap(\.userId)).sorted()
        let hint = reporters.isEmpty ? "no signed-in client report" : "reported by \(reporters.joined(separator: ", "))"
        c.add(
            .orphanPayment, t.channel, user: nil, order: nil, tx: t.transactionId, app: t.keyApp,
            [t.verifiedPosition] + t.reports.map(\.position), t.revenue,
            "Transaction \(t.transactionId) (\(t.productId ?? "?")) was paid but is bound to no order and no user (\(hint))."
        )
    }

    /// **receipt-reused**: the presentations of a transaction (client reports: the signed-in user,
    /// none for a signed-out app, and `orderId ?? applicationUsername`; TransactionBound: user and
    /// order) name more than one user, or more than one (non-nil) order, beyond those a
    /// TransactionTransferred moved it between (a move is not a reuse). Verified or not, granted or
    /// not. The rightful presentation is the first binding (else the first presentation, with the
    /// first order any presentation names); the finding names the first presentation, in log order,
    /// whose user is neither the rightful one nor one the transaction moved to or from, or whose
    /// non-nil order is neither the rightful one nor a move's. A renewal judged as its
    /// subscription's (``Audit/Context/bySubscription(_:)``) is rightfully presented by its owner
    /// at the time (``Audit/Context/owner(_:at:)``): one presentation to another user (a restore
    /// while signed in to a second account, bound created-after-payment) is a reuse, and its
    /// positions lead with the owner's proof. A binding
    /// weaker than a token that gives the purchase to another user than the order its store-signed
    /// token names is a reuse too (positions: that order's first fact, the verification, and every
    /// presentation).
    /// Positions: every presentation; amount: the revenue.
    static func receiptReused(_ t: TransactionView, _ c: inout Context) {
        if !(t.bindings.isEmpty && t.reports.isEmpty), c.bySubscription(t) { return renewalReused(t, &c) }
        if let b = t.bindings.first, t.transfers.isEmpty, let signed = c.signedOrder(contradicting: b, of: t) {
            let shown = (t.reports.map(\.position) + t.bindings.map(\.position)).sorted()
            c.add(
                .receiptReused, t.channel, user: b.userId, order: b.orderId, tx: t.transactionId, app: t.keyApp,
                [signed.first, t.verifiedPosition] + shown, t.revenue,
                "Transaction \(t.transactionId) was signed by the store for order \(signed.order) of \(signed.user) (its account token) but bound (\(b.method.rawValue)) to \(b.orderId.map { "order \($0) of " } ?? "")\(b.userId)."
            )
            return
        }
        guard t.reports.count + t.bindings.count > 1 else { return }
        if let b = t.bindings.first, let bound = b.orderId, t.transfers.isEmpty {
            // Fast path: every presentation names the first binding's user (or none) and no other
            // order: no conflict, nothing to allocate.
            let agree =
                t.reports.allSatisfy {
                    ($0.userId == nil || $0.userId == b.userId) && ($0.orderId == nil || $0.orderId == bound)
                }
                && t.bindings.allSatisfy { $0.userId == b.userId && ($0.orderId == nil || $0.orderId == bound) }
            if agree { return }
        }
        var shown = t.reports.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown += t.bindings.map { (user: Optional($0.userId), order: $0.orderId, position: $0.position) }
        shown.sort { $0.position < $1.position }
        guard let ownerUser = t.bindings.first?.userId ?? shown.first(where: { $0.user != nil })?.user else { return }
        let ownerOrder = t.bindings.first?.orderId ?? shown.first(where: { $0.order != nil })?.order
        let movedUsers = Set(t.transfers.flatMap { [$0.toUserId] + ($0.fromUserId.map { [$0] } ?? []) })
        let movedOrders = Set(t.transfers.compactMap(\.orderId))
        func rightful(_ user: String?) -> Bool { user == nil || user == ownerUser || movedUsers.contains(user!) }
        func rightfulOrder(_ order: String?) -> Bool {
            order == nil || ownerOrder == nil || order == ownerOrder || movedOrders.contains(order!)
        }
        guard let conflict = shown.first(where: { !rightful($0.user) || !rightfulOrder($0.order) }) else { return }
        let users = Set(shown.compactMap(\.user)).sorted(), orders = Set(shown.compactMap(\.order)).sorted()
        c.add(
            .receiptReused, t.channel, user: conflict.user, order: conflict.order, tx: t.transactionId, app: t.keyApp,
            shown.map(\.position), t.revenue,
            "Transaction \(t.transactionId) of \(ownerUser)\(ownerOrder.map { " (order \($0))" } ?? "") was presented for users [\(users.joined(separator: ", "))] and orders [\(orders.joined(separator: ", "))]."
        )
    }

    /// receipt-reused for a renewal judged as its subscription's: presented to a user other than its
    /// owner at the time, nor one a move of it or of its subscription gave it to.
    static func renewalReused(_ t: TransactionView, _ c: inout Context) {
        // Fast path: no presentation names anyone but the subscription's user.
        if let u = t.subscriptionUserId, t.reports.allSatisfy({ $0.userId == nil || $0.userId == u }),
            t.bindings.allSatisfy({ $0.userId == u })
        {
            return
        }
        var shown = t.reports.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown += t.bindings.map { (user: Optional($0.userId), order: $0.orderId, position: $0.position) }
        shown.sort { $0.position < $1.position }
        // Whom a move of this period or of the subscription gave it to presented it rightfully,
        // before the move too; whom a move took it from, only before (as its owner then).
        var movedTo = Set(t.transfers.map(\.toUserId))
        if !c.p.subscriptionOwners.isEmpty, let ch = t.channel, let orig = t.originalTransactionId,
            let owners = c.p.subscriptionOwners[Projections.subscriptionKey(ch, orig)]
        {
            movedTo.formUnion(owners.moves.map(\.userId))
        }
        for s in shown {
            guard let user = s.user, !movedTo.contains(user), let owner = c.owner(t, at: s.position), owner.user != user
            else { continue }
            let users = Set(shown.compactMap(\.user)).sorted(), orders = Set(shown.compactMap(\.order)).sorted()
            c.add(
                .receiptReused, t.channel, user: user, order: s.order, tx: t.transactionId, app: t.keyApp,
                [c.position(of: owner.proof)] + shown.map(\.position), t.revenue,
                "Renewal \(t.transactionId) of \(owner.user)'s subscription \(t.originalTransactionId ?? "?") was presented for users [\(users.joined(separator: ", "))] and orders [\(orders.joined(separator: ", "))]."
            )
            return
        }
    }

    /// **unacknowledged-purchase**: a verified Google Play purchase of a one-time product or a
    /// subscription's first period (never a renewal; sandbox is judged by no rule) whose deadline,
    /// `purchaseDate` + the acknowledgement window (72 hours; Google refunds a purchase left
    /// unacknowledged that long), log time has passed with no acknowledgement done by then: none,
    /// or one whose own time (`acknowledgedAt`, when the call succeeded) is after the deadline,
    /// however early it reached the log. A purchase the store voided whole or revoked before the
    /// deadline (a void by the store's own time, however late it reached the log) needed none; a
    /// partial void leaves the rest to acknowledge. User and order: the owner and the binding's
    /// order; positions: the verification and the bindings; amount: the revenue (less a partial
    /// void's share), which Google returns to the buyer.
    static func unacknowledgedPurchase(_ t: TransactionView, _ c: inout Context) {
        guard t.channel == .googleplay, t.verified, !t.isRenewal, let bought = t.purchaseDate ?? t.verifiedAt,
            c.passed(bought, c.options.acknowledgementWindow)
        else { return }
        let deadline = Timestamp(
            microsecondsSince1970: bought.microseconds.addingSaturated(c.options.acknowledgementWindow.microseconds))
        if let ack = t.acknowledgedAt, ack <= deadline { return }
        // Taken back whole before it: a partial void leaves the rest to acknowledge.
        if t.storeRevokedPosition != nil, let gone = t.revokedAtByStore ?? t.storeRevokedAt, gone < deadline { return }
        let late = t.acknowledgedAt.map { " (acknowledged only at \($0.iso8601))" } ?? ""
        // What Google would still return: the revenue less a partial void's share.
        var amount = t.revenue
        if let revenue = t.revenue, let q = t.voidedQuantity, t.quantity > 0 {
            amount = revenue.adding(revenue.share(q, t.quantity).negated) ?? revenue
        }
        c.add(
            .unacknowledgedPurchase, t.channel, user: c.owner(t)?.user, order: t.orderId, tx: t.transactionId,
            app: t.keyApp,
            [t.verifiedPosition] + t.bindings.map(\.position), amount,
            "Google purchase \(t.transactionId) bought at \(bought.iso8601) was not acknowledged by its deadline \(deadline.iso8601)\(late): Google refunds it."
        )
    }
}
