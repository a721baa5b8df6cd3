import LedgerCore
import LedgerFoldStore

/// Orders: created, launched, closed; paid, fulfilled and refunded follow their bound transaction.
extension Projections {
    mutating func apply(_ f: OrderCreated, _ ctx: FactContext) {
        let p = ctx.position
        // An order is created once: a second creation (another idempotency key) that differs, another
        // user say, changes nothing and is an anomaly; the first stands.
        var first: OrderCreated?
        updateOrder(f.orderId, p) { o in
            if let c = o.created { first = c } else { o.created = f }
        }
        if let first {
            if first != f {
                anomaly(
                    p, "order-created-again",
                    "order \(f.orderId) was created again (user \(f.userId), \(f.productId)) after its creation for user \(first.userId) (\(first.productId)); the first creation stands"
                )
            }
            return
        }
        if let tx = orders.with(f.orderId, \.transactionId) ?? nil { refreshOrder(f.orderId, from: tx) }
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
        if orders.with(f.orderId, \.paid) == true {
            anomaly(
                p, "order-closed-after-payment",
                "order \(f.orderId) was closed (\(f.reason.raw)) after its payment was verified")
        }
    }

    /// Keeps the bound order in step with its transaction.
    mutating func transactionChanged(_ txId: String) {
        // Nearly always one order: kept inline (`Few`), no array made per change.
        guard let bound = transactions.with(txId, { Few($0.bindings.lazy.compactMap(\.orderId)) }) else { return }
        for (i, orderId) in bound.enumerated()
        where !bound[..<i].contains(orderId) && orders.with(orderId, \.transactionId) == txId {
            refreshOrder(orderId, from: txId)
        }
    }

    mutating func refreshOrder(_ orderId: String, from txId: String) {
        guard
            let (paid, productId, grants, refunded) = transactions.with(
                txId,
                { t in
                    (t.verified, t.productId, Int64(t.activeGrantCount), t.refundedAmount)
                }),
            orders.update(
                orderId,
                { o in
                    o.paid = paid
                    o.verifiedProductId = productId
                    o.netGrants = grants
                    o.refunded = refunded
                })
        else { return }
        if tracksChanges { changes.orders.insert(orderId) }
    }
}
