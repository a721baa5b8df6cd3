import LedgerCore

/// Orders: created, launched, closed; paid, fulfilled and refunded follow their bound transaction.
extension Projections {
    mutating func apply(_ f: OrderCreated, _ ctx: FactContext) {
        let p = ctx.position
        updateOrder(f.orderId, p) { $0.created = f }
        if let tx = orders[f.orderId]?.transactionId { refreshOrder(f.orderId, from: tx) }
        touchUser(f.userId, p)
    }

    mutating func apply(_ f: PaymentLaunched, _ ctx: FactContext) {
        let p = ctx.position
        updateOrder(f.orderId, p) { o in
            o.launchAttempts = max(o.launchAttempts, f.attempt)
            if o.launchedAt.map({ $0 < ctx.occurredAt }) ?? true { o.launchedAt = ctx.occurredAt }
        }
    }

    mutating func apply(_ f: OrderClosed, _ ctx: FactContext) {
        let p = ctx.position
        updateOrder(f.orderId, p) { o in
            o.closeReason = f.reason
            if o.paid { o.closedAfterPayment = true }
        }
        if orders[f.orderId]?.paid == true {
            anomaly(p, "order-closed-after-payment", "order \(f.orderId) was closed (\(f.reason.raw)) after its payment was verified")
        }
    }

    /// Keeps the bound order in step with its transaction.
    mutating func transactionChanged(_ txId: String) {
        guard let t = transactions[txId] else { return }
        for orderId in Set(t.bindings.compactMap(\.orderId)) where orders[orderId]?.transactionId == txId {
            refreshOrder(orderId, from: txId)
        }
    }

    mutating func refreshOrder(_ orderId: String, from txId: String) {
        guard let t = transactions[txId], var o = orders[orderId] else { return }
        o.paid = t.verified
        o.verifiedProductId = t.productId
        o.netGrants = Int64(t.activeGrants.count)
        o.refunded = t.refundedAmount
        orders[orderId] = o
        if tracksChanges { changes.orders.insert(orderId) }
    }
}
