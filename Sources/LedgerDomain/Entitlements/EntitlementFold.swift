import LedgerCore

/// Entitlements and coins: what fulfilment granted and what users spent.
extension Projections {
    mutating func apply(_ f: EntitlementGranted, _ ctx: FactContext) {
        let p = ctx.position
        guard !f.isPolicyGrant else { return grantByPolicy(f, ctx) }
        // A grant without a transaction that is no policy grant is counted against a stand-in
        // named by the grant (never verified, so the audit flags it).
        let txId = f.transactionId.map { grantedTransaction(f, $0) } ?? "grant:\(f.grantId)"
        // A period runs from the purchase; granted to the user the transaction was moved to, from
        // the grant (the rest of the period, not the whole of it again).
        let (purchased, movedHere) =
            transactions.with(txId) { t in (t.purchaseDate, t.transfers.contains { $0.toUserId == f.userId }) } ?? (
                nil, false
            )
        let anchor = movedHere ? ctx.occurredAt : purchased ?? ctx.occurredAt
        updateTransaction(txId, p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.grants.append(
                GrantRecord(
                    grantId: f.grantId, userId: f.userId, orderId: f.orderId, entitlement: f.entitlement,
                    quantity: f.quantity, position: p, at: anchor))
        }
        updateUser(f.userId, p) { u in
            Self.credit(&u, f.entitlement, quantity: f.quantity, anchor: anchor, grantId: f.grantId, sign: 1)
            // A credit can bring a negative balance back to zero or above: no longer flagged.
            Self.checkBalance(&u, p)
        }
        transactionChanged(txId)
    }

    /// The transaction a grant is counted against: the one of its channel and app. A grant that
    /// names no app (written before grants carried it): the transaction bound to its order, when that
    /// has the id, tells which of several with the same id it means.
    mutating func grantedTransaction(_ f: EntitlementGranted, _ id: String) -> String {
        if f.app == nil, let key = f.orderId.flatMap({ orders.with($0, \.transactionId) ?? nil }),
            transactions.with(key, { $0.transactionId == id && (f.channel == nil || $0.channel == f.channel) }) == true
        {
            return key
        }
        return txKey(f.channel, f.app, id)
    }

    /// A grant by policy: credited to the user, counted against no transaction, listed for finance.
    mutating func grantByPolicy(_ f: EntitlementGranted, _ ctx: FactContext) {
        let g = GrantRecord(
            grantId: f.grantId, userId: f.userId, orderId: f.orderId, entitlement: f.entitlement,
            quantity: f.quantity, position: ctx.position, at: ctx.occurredAt)
        policyGrants[f.grantId] = PolicyGrant(
            grant: g, reason: f.reason ?? .purchase, authorizedBy: f.authorizedBy, transactionId: f.transactionId)
        updateUser(f.userId, ctx.position) { u in
            Self.credit(&u, f.entitlement, quantity: f.quantity, anchor: ctx.occurredAt, grantId: f.grantId, sign: 1)
            Self.checkBalance(&u, ctx.position)
        }
    }

    mutating func apply(_ f: CoinsSpent, _ ctx: FactContext) {
        let p = ctx.position
        updateUser(f.userId, p) { u in
            u.coinsSpent = u.coinsSpent.addingSaturated(f.amount)
            Self.checkBalance(&u, p)
        }
    }

    static func credit(
        _ u: inout UserView, _ e: Entitlement, quantity: Int64, anchor: Timestamp, grantId: String, sign: Int64
    ) {
        switch e {
        case .coins(let n):
            let coins = n.multipliedSaturated(by: quantity)
            if sign > 0 {
                u.coinsCredited = u.coinsCredited.addingSaturated(coins)
            } else {
                u.coinsClawedBack = u.coinsClawedBack.addingSaturated(coins)
            }
        case .feature(let name):
            u.features[name, default: 0] += sign
        case .subscription, .period:
            guard let name = e.periodEntitlement, let days = e.periodDays else { return }
            if sign > 0 {
                u.periodGrants.append(
                    .init(
                        entitlement: name, anchor: anchor, days: days.multipliedSaturated(by: quantity),
                        grantId: grantId))
            } else if let i = u.periodGrants.firstIndex(where: { $0.grantId == grantId }) {
                u.periodGrants.remove(at: i)
            }
        }
    }

    /// `cause`: the transaction of a clawback (nil for a spend).
    static func checkBalance(_ u: inout UserView, _ p: Int64, cause: String? = nil) {
        if u.coinBalance < 0 {
            if u.negativeSince == nil {
                u.negativeSince = p
                u.negativeCause = cause
            }
        } else {
            u.negativeSince = nil
            u.negativeCause = nil
        }
    }
}
