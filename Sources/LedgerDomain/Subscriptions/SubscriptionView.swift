import LedgerCore
import LedgerFoldStore

/// A subscription's state as the store last signed it (docs/domain.md, subscription states).
public enum SubscriptionStatus: Hashable, Sendable, CustomStringConvertible {
    case active, grace, billingRetry, onHold, paused, expired(ExpirationReason), revoked
    public var description: String {
        switch self {
        case .active: return "active"
        case .grace: return "grace"
        case .billingRetry: return "billing-retry"
        case .onHold: return "on-hold"
        case .paused: return "paused"
        case .expired(let r): return "expired(\(r.raw))"
        case .revoked: return "revoked"
        }
    }
}

/// A subscription, keyed by channel and original transaction id (Google: purchase token).
public struct SubscriptionView: Hashable, Sendable, Codable {
    public struct Period: Hashable, Sendable, Codable {
        /// The key of the period's transaction (``TransactionView/key``: its id unless that collides).
        public var transactionId: String
        public var productId: String
        public var purchaseDate: Timestamp
        public var expiresDate: Timestamp
        public var revoked = false
        public var upgraded = false
        /// When an immediate upgrade ended it: time after this is not owed for its transaction.
        public var upgradedAt: Timestamp?
    }

    /// A renewal that failed, and the grace or billing retry that followed.
    public struct Failure: Hashable, Sendable, Codable {
        public var at: Timestamp
        public var graceUntil: Timestamp?
        public var billingRetry: Bool
    }

    /// A grace period the store signed after a failed renewal: access until `until`.
    public struct Grace: Hashable, Sendable, Codable {
        public var at: Timestamp
        public var until: Timestamp
    }

    public struct Expiry: Hashable, Sendable, Codable {
        public var at: Timestamp
        public var reason: ExpirationReason
    }

    public struct Upgrade: Hashable, Sendable, Codable {
        public var at: Timestamp
        public var toProductId: String
    }

    /// Google: the purchase token that replaced this one, and when.
    public struct Supersession: Hashable, Sendable, Codable {
        public var at: Timestamp
        public var by: String
    }

    public var channel: Channel
    public var originalTransactionId: String
    public var periods: [Period] = []
    public var productId: String?
    /// A downgrade waiting for the next renewal.
    public var pendingProductId: String?
    public var autoRenew: Bool?
    public var failure: Failure?
    public var expiry: Expiry?
    public var pausedAt: Timestamp?
    /// The user it belongs to: the binding of its original (or earliest bound) purchase.
    public var userId: String?
    public var resumedAt: Timestamp?
    /// Immediate plan changes (upgrades), by the store's clock.
    public var upgrades: [Upgrade] = []
    /// Google: the purchase token this subscription replaced (its user carries over).
    public var linkedFrom: String?
    /// Google: replaced by another purchase token (upgrade, downgrade, resubscribe) at this time.
    public var superseded: Supersession?
    /// Google SUBSCRIPTION_ON_HOLD: a payment failed after grace, no access (by the store's clock).
    public var onHoldAt: Timestamp?
    /// The store took the running period back (Apple REVOKE, Google SUBSCRIPTION_REVOKED).
    public var revokedAt: Timestamp?
    /// The buyer's answer to a price increase, and the new price.
    public var priceConsent: PriceConsent?
    public var newPrice: Money?
    /// Every grace the store signed, by the failure's time: the time each period may be granted
    /// beyond its end (``failure`` keeps only the latest failure, for the state).
    public var graces: [Grace] = []
    public var positions = PositionList()

    /// A period is upgraded away when an upgrade to another product happened while it ran.
    mutating func markUpgrades() {
        for i in periods.indices where !periods[i].upgraded {
            let period = periods[i]
            if let u = upgrades.first(where: {
                $0.toProductId != period.productId && period.purchaseDate <= $0.at && $0.at < period.expiresDate
            }) {
                periods[i].upgraded = true
                periods[i].upgradedAt = u.at
            }
        }
    }

    public init(channel: Channel, originalTransactionId: String) {
        self.channel = channel
        self.originalTransactionId = originalTransactionId
    }

    public static func == (a: SubscriptionView, b: SubscriptionView) -> Bool {
        a.key == b.key && a.positions == b.positions
    }
    public func hash(into h: inout Hasher) {
        h.combine(key)
        h.combine(positions)
    }

    public var key: String { "\(channel.rawValue):\(originalTransactionId)" }

    /// The latest expiresDate over the transactions that were neither revoked nor upgraded away:
    /// recomputed from the facts, never taken from the latest message.
    public var expiresAt: Timestamp? {
        let latest = periods.filter { !$0.revoked && !$0.upgraded }.map(\.expiresDate).max()
        guard let s = superseded else { return latest }
        return latest.map { min($0, s.at) }
    }

    var latestPurchase: Timestamp? { periods.filter { !$0.revoked }.map(\.purchaseDate).max() }

    public var status: SubscriptionStatus {
        if !periods.isEmpty && periods.allSatisfy(\.revoked) { return .revoked }
        let latest = latestPurchase
        if let r = revokedAt, latest.map({ $0 <= r }) ?? true { return .revoked }
        if superseded != nil { return .expired(.superseded) }
        if let e = expiry, latest.map({ $0 <= e.at }) ?? true { return .expired(e.reason) }
        if let p = pausedAt, resumedAt.map({ $0 < p }) ?? true, latest.map({ $0 <= p }) ?? true { return .paused }
        // A failure stands until a payment recovers it: a period bought after it, or one that runs
        // more than a day past it (Apple's recovery in grace keeps the renewal date).
        let failed = failure.flatMap { f in recovered(after: f.at) ? nil : f }
        if let h = onHoldAt, !recovered(after: h), failed.map({ $0.at <= h }) ?? true { return .onHold }
        // Grace unless in billing retry (Google's grace notification gives no end: still grace).
        if let f = failed { return f.billingRetry ? .billingRetry : .grace }
        return .active
    }

    /// Whether a period paid for after `t` exists: bought after it, or running more than a day past it.
    func recovered(after t: Timestamp) -> Bool {
        let day: Int64 = 86_400_000_000
        return periods.contains {
            !$0.revoked && ($0.purchaseDate > t || $0.expiresDate.microseconds > t.microseconds + day)
        }
    }

    /// Until when the store's word gives access (docs/domain.md): the paid period (active, billing
    /// retry, on hold, expired), grace up to its end, none past a pause or a revocation.
    public var accessUntil: Timestamp? {
        let paid = expiresAt
        switch status {
        case .active, .billingRetry, .onHold, .expired: return paid
        case .grace: return [paid, failure?.graceUntil].compactMap { $0 }.max()
        case .paused: return [paid, pausedAt].compactMap { $0 }.min()
        case .revoked: return [paid, revokedAt].compactMap { $0 }.min()
        }
    }
}

/// Who a subscription belonged to over time: kept (in ``Projections``) only for one that moved,
/// by a TransactionTransferred of its original or of any of its periods. A renewal is owed to the
/// owner at its grant, not to whoever holds the subscription at the end of the log.
public struct SubscriptionOwners: Hashable, Sendable, Codable {
    public struct Owner: Hashable, Sendable, Codable {
        public var userId: String
        /// The binding or the move that made them the owner (none: a linked purchase token's owner).
        public var position: Int64?
        /// A move's: the user who held it before, as the mover saw it.
        public var fromUserId: String?
    }

    /// Before any move: the binding of its original (or earliest bound) purchase, or the owner of
    /// the purchase token it replaced.
    public var first: Owner?
    /// Each move, by position.
    public var moves: [Owner]

    /// The owner just before `position`: the last move before it, else the first owner (a grant
    /// logged before the binding that names the owner still owes that owner), else the user the
    /// first move names as the one who held it before; nil when nothing says.
    public func owner(before position: Int64) -> Owner? {
        if let move = moves.last(where: { ($0.position ?? 0) < position }) { return move }
        if let first { return first }
        return moves.first?.fromUserId.map { Owner(userId: $0, position: moves.first?.position) }
    }

    /// The owner now.
    public var current: Owner? { moves.last ?? first }
}

extension TransactionView {
    /// The period the store signed for this transaction, in whole days (rounded to the nearest):
    /// `[purchaseDate, expiresDate)`, ended early by an immediate upgrade. Intro and pay-up-front
    /// offers, offer codes and extensions change it; nil when the store gave no expiry.
    public var signedDays: Int64? {
        guard let start = purchaseDate, let end = upgradedAt ?? expiresDate, end > start else { return nil }
        let day: Int64 = 86_400_000_000
        return end.microseconds.subtractingSaturated(start.microseconds).addingSaturated(day / 2) / day
    }

    /// What the transaction owes of `entitlement` before refunds: a period product owes the period
    /// the store signed (the catalogue's nominal period only when the store gave none).
    public func owedUnits(of entitlement: Entitlement) -> (unit: String, count: Int64) {
        let nominal = entitlement.units(quantity: quantity)
        guard entitlement.periodEntitlement != nil, let days = signedDays else { return nominal }
        return (nominal.unit, days.multipliedSaturated(by: quantity))
    }
}
