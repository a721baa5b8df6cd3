import LedgerCore
import LedgerFoldStore

public struct GrantRecord: Hashable, Sendable, Codable {
    public var grantId: String
    public var userId: String
    public var orderId: String?
    public var entitlement: Entitlement
    public var quantity: Int64
    public var position: Int64
    public var at: Timestamp
    /// Units taken back by partial revocations.
    public var revokedUnits: Int64 = 0
    /// The position of the revocation that took it back whole (or its last part).
    @CompactInt64 public var revokedAt: Int64?

    public init(
        grantId: String, userId: String, orderId: String?, entitlement: Entitlement, quantity: Int64, position: Int64,
        at: Timestamp, revokedAt: Int64? = nil, revokedUnits: Int64 = 0
    ) {
        self.grantId = grantId
        self.userId = userId
        self.orderId = orderId
        self.entitlement = entitlement
        self.quantity = quantity
        self.position = position
        self.at = at
        self.revokedAt = revokedAt
        self.revokedUnits = revokedUnits
    }

    /// What it gave, counted in its unit (coins, days of an entitlement, a feature).
    public var units: (unit: String, count: Int64) { entitlement.units(quantity: quantity) }
    /// The units it still gives: none once revoked whole.
    public var unitsLeft: Int64 { revokedAt == nil ? max(0, units.count.subtractingSaturated(revokedUnits)) : 0 }
}

/// A grant without a store transaction (goodwill, compensation, promotion, migration), or with
/// one but for another reason than the purchase: shown to finance in its own section.
public struct PolicyGrant: Hashable, Sendable, Codable {
    public var grant: GrantRecord
    public var reason: GrantReason
    public var authorizedBy: String?
    public var transactionId: String?
}

/// Entitlement time of one kind (`vip`), stacked across every product that feeds it.
public struct PeriodSummary: Hashable, Sendable {
    public var entitlement: String
    public var totalDays: Int64
    public var startsAt: Timestamp
    public var endsAt: Timestamp
}

/// What one user holds, from the grants, revocations and spends fulfilment recorded.
public struct UserView: Hashable, Sendable, Codable {
    public var userId: String
    public var coinsCredited: Int64 = 0
    public var coinsSpent: Int64 = 0
    public var coinsClawedBack: Int64 = 0
    /// Net count of active grants per non-consumable feature.
    public var features: [String: Int64] = [:]
    /// Active period grants: (entitlement, anchor, days, grant id).
    public var periodGrants: [PeriodGrant] = []
    /// Position of the fact that first took the balance below zero, while it is below zero.
    public var negativeSince: Int64?
    /// The transaction whose clawback (EntitlementRevoked) took the balance below zero at
    /// `negativeSince`; nil when a CoinsSpent did.
    public var negativeCause: String?
    public var positions = PositionList()

    public struct PeriodGrant: Hashable, Sendable, Codable {
        public var entitlement: String
        public var anchor: Timestamp
        public var days: Int64
        public var grantId: String
    }

    public init(userId: String) { self.userId = userId }

    /// credits - spends - clawbacks. Kept negative when it is: flagged, never floored.
    public var coinBalance: Int64 {
        coinsCredited.subtractingSaturated(coinsSpent).subtractingSaturated(coinsClawedBack)
    }

    public var ownedFeatures: [String] { features.filter { $0.value > 0 }.map(\.key).sorted() }

    /// Periods stack (docs/domain.md, entitlements): each grant extends the end by its days, from its anchor or
    /// from the current end, whichever is later.
    public var periods: [PeriodSummary] {
        var byName: [String: PeriodSummary] = [:]
        for g in periodGrants.sorted(by: { ($0.anchor, $0.grantId) < ($1.anchor, $1.grantId) }) {
            if var p = byName[g.entitlement] {
                p.endsAt = max(p.endsAt, g.anchor).addingDaysSaturated(g.days)
                p.totalDays = p.totalDays.addingSaturated(g.days)
                byName[g.entitlement] = p
            } else {
                byName[g.entitlement] = PeriodSummary(
                    entitlement: g.entitlement, totalDays: g.days, startsAt: g.anchor,
                    endsAt: g.anchor.addingDaysSaturated(g.days))
            }
        }
        return byName.values.sorted { $0.entitlement < $1.entitlement }
    }

    /// Whole days of `entitlement` left at `time` (rounded down).
    public func remainingDays(_ entitlement: String, at time: Timestamp) -> Int64 {
        guard let p = periods.first(where: { $0.entitlement == entitlement }), p.endsAt > time else { return 0 }
        return p.endsAt.microseconds.subtractingSaturated(time.microseconds) / 86_400_000_000
    }
}
