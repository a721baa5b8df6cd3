import LedgerCore

public enum OrderStatus: String, CaseIterable, Sendable, Hashable {
    case created, launched
    case callbackReceived = "callback-received"
    case paid, fulfilled, closed, refunded
    /// Facts name the order but its OrderCreated has not been replayed (yet).
    case unknown
}

/// One of our orders.
public struct OrderView: Hashable, Sendable {
    public var orderId: String
    public var created: OrderCreated?
    public var launchAttempts: Int64 = 0
    public var lastCallbackState: CallbackState?
    public var transactionId: String?
    public var bindingMethod: BindingMethod?
    public var verifiedProductId: String?
    public var paid = false
    /// Net grants (granted minus revoked) recorded for the order's transaction.
    public var netGrants: Int64 = 0
    public var refunded: Money?
    public var closeReason: CloseReason?
    public var closedAfterPayment = false
    /// `occurredAt` of the latest PaymentLaunched (the stale-order window runs from it).
    public var launchedAt: Timestamp?
    public var positions: [Int64] = []

    public init(orderId: String) { self.orderId = orderId }

    public var userId: String? { created?.userId }
    /// The verified product differs from the ordered one (seed 003: the wrong item was delivered).
    public var productMismatch: Bool {
        guard let v = verifiedProductId, let o = created?.productId else { return false }
        return v != o
    }

    public var status: OrderStatus {
        if created == nil && !paid { return .unknown }
        if paid, let r = refunded, r.minorUnits > 0 { return .refunded }
        if paid && netGrants > 0 { return .fulfilled }
        if paid { return .paid }
        if closeReason != nil { return .closed }
        if lastCallbackState == .purchased || lastCallbackState == .restored { return .callbackReceived }
        if launchAttempts > 0 { return .launched }
        return .created
    }
}

public struct BindingRecord: Hashable, Sendable {
    public var orderId: String?
    public var userId: String
    public var method: BindingMethod
    public var position: Int64
}

public struct GrantRecord: Hashable, Sendable {
    public var grantId: String
    public var userId: String
    public var orderId: String?
    public var entitlement: Entitlement
    public var quantity: Int64
    public var position: Int64
    public var at: Timestamp
    public var revokedAt: Int64?
}

public struct RevocationRecord: Hashable, Sendable {
    public var userId: String
    public var reason: RevocationReason
    public var position: Int64
    /// How many grants it took back (0: nothing was granted to revoke).
    public var grantsRevoked: Int
}

public enum RefundState: String, Sendable, Hashable {
    case none, requested, declined, refunded, reversed
}

/// One store transaction: what the rules owe for it and what fulfilment granted.
public struct TransactionView: Hashable, Sendable {
    public var transactionId: String
    public var channel: Channel?
    public var originalTransactionId: String?
    public var productId: String?
    public var quantity: Int64 = 1
    public var purchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var price: Money?
    public var appAccountToken: String?
    public var verifiedPosition: Int64?
    /// `occurredAt` of the fact at `verifiedPosition` (PaymentVerified or SubscriptionRenewed): the
    /// missing-grant window runs from it.
    public var verifiedAt: Timestamp?
    public var failedVerifications: [(code: Int64, retryable: Bool, position: Int64)] = []
    public var isRenewal = false
    public var bindings: [BindingRecord] = []
    /// Users and orders named by client reports of this transaction.
    public var reports: [(userId: String, orderId: String?, position: Int64)] = []
    public var refunds: [String: Money] = [:]
    public var refundState: RefundState = .none
    public var refundPositions: [Int64] = []
    /// Position and `occurredAt` of the latest Refunded fact (the refund-not-revoked window runs from it).
    public var refundedPosition: Int64?
    public var refundedAt: Timestamp?
    /// Position and `occurredAt` of the latest verified Apple REVOKE notification naming this
    /// transaction (family sharing withdrawn): like a full refund, the grant must be taken back.
    public var storeRevokedPosition: Int64?
    public var storeRevokedAt: Timestamp?
    public var grants: [GrantRecord] = []
    public var revocations: [RevocationRecord] = []
    public var upgraded = false
    public var positions: [Int64] = []
    /// The user of the subscription this renewal belongs to (renewals need no binding of their own).
    public var subscriptionUserId: String?

    public init(transactionId: String) { self.transactionId = transactionId }

    public static func == (a: TransactionView, b: TransactionView) -> Bool { a.transactionId == b.transactionId && a.positions == b.positions }
    public func hash(into h: inout Hasher) { h.combine(transactionId); h.combine(positions) }

    public var verified: Bool { verifiedPosition != nil }
    /// The user it belongs to: its first binding, else its subscription's user.
    public var userId: String? { bindings.first?.userId ?? subscriptionUserId }
    public var orderId: String? { bindings.first?.orderId }
    public var refundedAmount: Money? {
        // In the price's currency (else the first refund's by id): refunds are never summed across
        // currencies, and the choice does not depend on dictionary order.
        guard refundState == .refunded, let first = refunds.sorted(by: { $0.key < $1.key }).first?.value else { return nil }
        let currency = price?.currency ?? first.currency
        return Money(minorUnits: refunds.values.filter { $0.currency == currency }.reduce(0) { $0 + $1.minorUnits }, currency: currency)
    }
    public var activeGrants: [GrantRecord] { grants.filter { $0.revokedAt == nil } }
}

public enum SubscriptionStatus: Hashable, Sendable, CustomStringConvertible {
    case active, grace, billingRetry, paused, expired(ExpirationReason), revoked
    public var description: String {
        switch self {
        case .active: return "active"
        case .grace: return "grace"
        case .billingRetry: return "billing-retry"
        case .paused: return "paused"
        case .expired(let r): return "expired(\(r.raw))"
        case .revoked: return "revoked"
        }
    }
}

/// A subscription, keyed by channel and original transaction id (Google: purchase token).
public struct SubscriptionView: Hashable, Sendable {
    public struct Period: Hashable, Sendable {
        public var transactionId: String
        public var productId: String
        public var purchaseDate: Timestamp
        public var expiresDate: Timestamp
        public var revoked = false
        public var upgraded = false
    }

    public var channel: Channel
    public var originalTransactionId: String
    public var periods: [Period] = []
    public var productId: String?
    /// A downgrade waiting for the next renewal.
    public var pendingProductId: String?
    public var autoRenew: Bool?
    public var failure: (at: Timestamp, graceUntil: Timestamp?, billingRetry: Bool)?
    public var expiry: (at: Timestamp, reason: ExpirationReason)?
    public var pausedAt: Timestamp?
    /// The user it belongs to: the binding of its original (or earliest bound) purchase.
    public var userId: String?
    public var resumedAt: Timestamp?
    /// Immediate plan changes (upgrades), by the store's clock.
    public var upgrades: [(at: Timestamp, toProductId: String)] = []
    public var positions: [Int64] = []

    /// A period is upgraded away when an upgrade to another product happened while it ran.
    mutating func markUpgrades() {
        for i in periods.indices where !periods[i].upgraded {
            let period = periods[i]
            if upgrades.contains(where: { $0.toProductId != period.productId && period.purchaseDate <= $0.at && $0.at < period.expiresDate }) {
                periods[i].upgraded = true
            }
        }
    }

    public init(channel: Channel, originalTransactionId: String) {
        self.channel = channel; self.originalTransactionId = originalTransactionId
    }

    public static func == (a: SubscriptionView, b: SubscriptionView) -> Bool { a.key == b.key && a.positions == b.positions }
    public func hash(into h: inout Hasher) { h.combine(key); h.combine(positions) }

    public var key: String { "\(channel.rawValue):\(originalTransactionId)" }

    /// The latest expiresDate over the transactions that were neither revoked nor upgraded away:
    /// recomputed from the facts, never taken from the latest message.
    public var expiresAt: Timestamp? {
        periods.filter { !$0.revoked && !$0.upgraded }.map(\.expiresDate).max()
    }

    var latestPurchase: Timestamp? { periods.filter { !$0.revoked }.map(\.purchaseDate).max() }

    public var status: SubscriptionStatus {
        if !periods.isEmpty && periods.allSatisfy(\.revoked) { return .revoked }
        let latest = latestPurchase
        if let e = expiry, latest.map({ $0 <= e.at }) ?? true { return .expired(e.reason) }
        if let p = pausedAt, resumedAt.map({ $0 < p }) ?? true, latest.map({ $0 <= p }) ?? true { return .paused }
        if let f = failure, latest.map({ $0 <= f.at }) ?? true { return f.graceUntil != nil ? .grace : .billingRetry }
        return .active
    }
}

/// Entitlement time of one kind (`vip`), stacked across every product that feeds it.
public struct PeriodSummary: Hashable, Sendable {
    public var entitlement: String
    public var totalDays: Int64
    public var startsAt: Timestamp
    public var endsAt: Timestamp
}

/// What one user holds, from the grants, revocations and spends fulfilment recorded.
public struct UserView: Hashable, Sendable {
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
    public var positions: [Int64] = []

    public struct PeriodGrant: Hashable, Sendable {
        public var entitlement: String
        public var anchor: Timestamp
        public var days: Int64
        public var grantId: String
    }

    public init(userId: String) { self.userId = userId }

    /// credits - spends - clawbacks. Kept negative when it is: flagged, never floored.
    public var coinBalance: Int64 { coinsCredited - coinsSpent - coinsClawedBack }

    public var ownedFeatures: [String] { features.filter { $0.value > 0 }.map(\.key).sorted() }

    /// Periods stack (seed 004, 4.4): each grant extends the end by its days, from its anchor or
    /// from the current end, whichever is later.
    public var periods: [PeriodSummary] {
        var byName: [String: PeriodSummary] = [:]
        for g in periodGrants.sorted(by: { ($0.anchor, $0.grantId) < ($1.anchor, $1.grantId) }) {
            let day: Int64 = 86_400_000_000
            if var p = byName[g.entitlement] {
                let start = max(p.endsAt, g.anchor)
                p.endsAt = Timestamp(microsecondsSince1970: start.microseconds + g.days * day)
                p.totalDays += g.days
                byName[g.entitlement] = p
            } else {
                byName[g.entitlement] = PeriodSummary(entitlement: g.entitlement, totalDays: g.days, startsAt: g.anchor,
                                                      endsAt: Timestamp(microsecondsSince1970: g.anchor.microseconds + g.days * day))
            }
        }
        return byName.values.sorted { $0.entitlement < $1.entitlement }
    }

    /// Whole days of `entitlement` left at `time` (rounded down).
    public func remainingDays(_ entitlement: String, at time: Timestamp) -> Int64 {
        guard let p = periods.first(where: { $0.entitlement == entitlement }), p.endsAt > time else { return 0 }
        return (p.endsAt.microseconds - time.microseconds) / 86_400_000_000
    }
}

/// A fact the projections could not apply as it stands; kept for the audit, never dropped.
public struct Anomaly: Hashable, Sendable {
    public var position: Int64
    public var kind: String
    public var detail: String
}
