import LedgerCore

/// The audit rules of orders: the product delivered, and orders left hanging.
extension Audit {
    /// **product-mismatch**: an order whose bound transaction (the first TransactionBound naming
    /// it) was verified with a product other than the order's (`OrderView.productMismatch`). One
    /// finding per order: user: the order's; positions: the order's first fact, the verification
    /// and the binding; amount: the verified price (else the order's). A sandbox transaction is
    /// shown apart and judged by no rule, this one included.
    static func productMismatch(_ o: OrderView, _ c: inout Context) {
        guard o.productMismatch, let txId = o.transactionId, let created = o.created else { return }
        let t = c.p.transactions[txId]
        guard t?.isSandbox != true else { return }
        let binding = t?.bindings.first(where: { $0.orderId == o.orderId })?.position
        // The order holds the transaction's key: the store's id, with the app where it is not the
        // first transaction with that id.
        let id = c.p.storeTransactionId(key: txId)
        c.add(
            .productMismatch, created.channel, user: created.userId, order: o.orderId, tx: id,
            app: Projections.app(ofKey: txId, id: id), [o.positions.first, t?.verifiedPosition, binding],
            t?.price ?? created.price,
            "Order \(o.orderId) was for \(created.productId) but its transaction \(id) was verified as \(o.verifiedProductId ?? "?")."
        )
    }

    /// **stale-order**: an order with a PaymentLaunched, not paid (no verified bound transaction),
    /// not closed, and log time past its latest launch + the stale-order window. User: the
    /// order's; positions: every fact of the order; amount: the order's price.
    static func staleOrder(_ o: OrderView, _ c: inout Context) {
        guard o.launchAttempts > 0, !o.paid, o.closeReason == nil, c.passed(o.launchedAt, c.options.staleOrderWindow)
        else { return }
        c.add(
            .staleOrder, o.channel, user: o.userId, order: o.orderId, tx: nil, o.positions.map { $0 }, o.price,
            "Order \(o.orderId) was launched at \(o.launchedAt?.iso8601 ?? "?") and is neither paid nor closed after the \(c.options.staleOrderWindow) window."
        )
    }
}
