import LedgerCore

/// For one store transaction: what the rules say the user is owed and what fulfilment granted.
public struct OwedGranted: Hashable, Sendable {
    public enum Status: String, Sendable, Hashable, CaseIterable {
        case ok, missing, excess
        /// Verified, but no product definition maps its product to an entitlement.
        case unknownProduct = "unknown-product"
        /// Verified in a store environment other than production (sandbox, Xcode): shown with what
        /// it owes and was granted, never judged, as the audit shows it apart with no finding.
        case sandbox
    }

    public var transactionId: String
    public var channel: Channel?
    public var userId: String?
    public var orderId: String?
    public var productId: String?
    /// What one unit of the product gives, by the catalogue in force at the purchase.
    public var entitlement: Entitlement?
    /// `coins`, `feature:no_ads` or `days:vip`.
    public var unit: String?
    public var owedUnits: Int64
    public var grantedUnits: Int64
    public var revokedUnits: Int64
    public var status: Status

    public var netUnits: Int64 { grantedUnits.subtractingSaturated(revokedUnits) }
}

extension Entitlement {
    /// What a grant or an owed entitlement is counted in, and how many of them.
    public func units(quantity: Int64) -> (unit: String, count: Int64) {
        switch self {
        case .coins(let n): return ("coins", n.multipliedSaturated(by: quantity))
        case .feature(let f): return ("feature:\(f)", quantity)
        case .subscription(let e, _, let d, _): return ("days:\(e)", d.multipliedSaturated(by: quantity))
        case .period(let e, let d): return ("days:\(e)", d.multipliedSaturated(by: quantity))
        }
    }
}

extension Projections {
    /// Owed versus granted for one transaction.
    public func owedGranted(_ t: TransactionView) -> OwedGranted {
        let def = t.productId.flatMap { product(t.channel, $0, at: t.purchaseDate) }
        let owed = def.map { t.owedUnits(of: $0.entitlement) }.map {
            (unit: $0.unit, count: t.unitsOwedAfterRefunds($0.count))
        }
        var granted: Int64 = 0, revoked: Int64 = 0
        var unit = owed?.unit
        for g in t.grants {
            let u = g.units
            if unit == nil { unit = u.unit }
            granted = granted.addingSaturated(u.count)
            revoked = revoked.addingSaturated(g.revokedAt != nil ? u.count : min(g.revokedUnits, u.count))
        }
        let owedUnits = owed?.count ?? 0
        let net = granted.subtractingSaturated(revoked)
        let status: OwedGranted.Status
        if t.verified && def == nil {
            status = .unknownProduct
        } else if t.verified && t.isSandbox {
            status = .sandbox
        } else if net < owedUnits {
            status = .missing
        } else if net > owedUnits {
            status = .excess
        } else {
            status = .ok
        }
        return OwedGranted(
            transactionId: t.transactionId, channel: t.channel, userId: t.userId, orderId: t.orderId,
            productId: t.productId, entitlement: def?.entitlement, unit: unit, owedUnits: owedUnits,
            grantedUnits: granted, revokedUnits: revoked, status: status)
    }
}
