import LedgerCore

/// The audit rules of payments and binding: every payment bound to one order and one user.
extension Audit {
    /// A verified transaction that is not a renewal and has no TransactionBound.
    static func isOrphan(_ t: TransactionView) -> Bool { t.verified && !t.isRenewal && t.bindings.isEmpty }

    /// **orphan-payment**: a verified transaction that is not a renewal (renewals belong to their
    /// subscription's user and need no binding of their own) and has no TransactionBound. No
    /// window: it is an orphan until bound. User and order: none (that is the finding); positions:
    /// the verification and the client reports; amount: the price.
    static func orphanPayment(_ t: TransactionView, _ c: inout Context) {
        guard isOrphan(t) else { return }
        let reporters = Set(t.reports.map(\.userId)).sorted()
        let hint = reporters.isEmpty ? "no client report" : "reported by \(reporters.joined(separator: ", "))"
        c.add(.orphanPayment, t.channel, user: nil, order: nil, tx: t.transactionId, [t.verifiedPosition] + t.reports.map(\.position), t.price,
              "Transaction \(t.transactionId) (\(t.productId ?? "?")) was paid but is bound to no order and no user (\(hint)).")
    }

    /// **receipt-reused**: the presentations of a transaction (client reports: the signed-in user
    /// and `orderId ?? applicationUsername`; TransactionBound: user and order) name more than one
    /// user, or more than one (non-nil) order. Verified or not, granted or not. The rightful
    /// presentation is the first binding (else the first presentation, with the first order any
    /// presentation names); the finding names the first presentation, in log order, whose user
    /// differs from it or whose non-nil order differs from its order (user and that order, nil if
    /// it named none). Positions: every presentation; amount: the price.
    static func receiptReused(_ t: TransactionView, _ c: inout Context) {
        guard t.reports.count + t.bindings.count > 1 else { return }
        if let b = t.bindings.first, let bound = b.orderId {
            // Fast path: every presentation names the first binding's user and no other order:
            // no conflict, nothing to allocate.
            let agree = t.reports.allSatisfy { $0.userId == b.userId && ($0.orderId == nil || $0.orderId == bound) }
                && t.bindings.allSatisfy { $0.userId == b.userId && ($0.orderId == nil || $0.orderId == bound) }
            if agree { return }
        }
        var shown = t.reports.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown += t.bindings.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown.sort { $0.position < $1.position }
        let ownerUser = t.bindings.first?.userId ?? shown[0].user
        let ownerOrder = t.bindings.first?.orderId ?? shown.first(where: { $0.order != nil })?.order
        guard let conflict = shown.first(where: { $0.user != ownerUser || ($0.order != nil && ownerOrder != nil && $0.order != ownerOrder) })
        else { return }
        let users = Set(shown.map(\.user)).sorted(), orders = Set(shown.compactMap(\.order)).sorted()
        c.add(.receiptReused, t.channel, user: conflict.user, order: conflict.order, tx: t.transactionId, shown.map(\.position), t.price,
              "Transaction \(t.transactionId) of \(ownerUser)\(ownerOrder.map { " (order \($0))" } ?? "") was presented for users [\(users.joined(separator: ", "))] and orders [\(orders.joined(separator: ", "))].")
    }
}
