import LedgerCore
import LedgerDomain

/// What the projections must show for one order.
public struct OrderExpectation: Hashable, Sendable {
    public var status: OrderStatus
    public var bindingMethod: BindingMethod?
    public var productMismatch: Bool
    /// The store transaction the order is bound to, when checked.
    public var transactionId: String?

    public init(
        _ status: OrderStatus, method: BindingMethod? = nil, productMismatch: Bool = false, transactionId: String? = nil
    ) {
        self.status = status
        self.bindingMethod = method
        self.productMismatch = productMismatch
        self.transactionId = transactionId
    }
}

/// Owed versus granted for one store transaction, and whom it belongs to.
public struct TransactionExpectation: Hashable, Sendable {
    public var verified: Bool
    /// The user it belongs to (its binding, or for a renewal its subscription's user); nil: an orphan.
    public var userId: String?
    public var orderId: String?
    public var owedUnits: Int64
    public var grantedUnits: Int64
    public var revokedUnits: Int64
    public var status: OwedGranted.Status
    /// How many EntitlementGranted facts name it.
    public var grants: Int
    /// The distinct users whose app reported it, sorted; nil: not checked.
    public var reportedBy: [String]?

    public init(
        owed: Int64, granted: Int64, revoked: Int64 = 0, status: OwedGranted.Status = .ok, user: String?,
        order: String? = nil,
        verified: Bool = true, grants: Int = 1, reportedBy: [String]? = nil
    ) {
        self.verified = verified
        self.userId = user
        self.orderId = order
        self.owedUnits = owed
        self.grantedUnits = granted
        self.revokedUnits = revoked
        self.status = status
        self.grants = grants
        self.reportedBy = reportedBy
    }
}

/// Entitlement time left at a moment, from the stacked periods.
public struct RemainingDays: Hashable, Sendable {
    public var entitlement: String
    public var at: Timestamp
    public var days: Int64
    public init(_ entitlement: String, at: Timestamp, days: Int64) {
        self.entitlement = entitlement
        self.at = at
        self.days = days
    }
}

public struct UserExpectation: Hashable, Sendable {
    public var coinBalance: Int64
    /// The balance is below zero and flagged (`negativeSince` set).
    public var negativeFlagged: Bool
    public var ownedFeatures: [String]
    public var remaining: [RemainingDays]

    public init(coins: Int64 = 0, negative: Bool = false, features: [String] = [], remaining: [RemainingDays] = []) {
        self.coinBalance = coins
        self.negativeFlagged = negative
        self.ownedFeatures = features
        self.remaining = remaining
    }
}

public struct SubscriptionExpectation: Hashable, Sendable {
    public var status: SubscriptionStatus
    public var expiresAt: Timestamp?
    /// The product in force, when checked.
    public var productId: String?

    public init(_ status: SubscriptionStatus, expiresAt: Timestamp?, productId: String? = nil) {
        self.status = status
        self.expiresAt = expiresAt
        self.productId = productId
    }
}

/// The documented outcome of a scenario (or of a prefix of it). Only the keys listed are checked.
public struct Expectation: Hashable, Sendable {
    public var orders: [String: OrderExpectation] = [:]
    public var transactions: [String: TransactionExpectation] = [:]
    public var users: [String: UserExpectation] = [:]
    /// Keyed like `Projections.subscriptions`: `appstore:<originalTransactionId>`.
    public var subscriptions: [String: SubscriptionExpectation] = [:]
    /// The kinds of `Projections.anomalies`, in log order (usually none).
    public var anomalyKinds: [String] = []
    /// What the audit must report over the whole log, by finding kind.
    /// Not checked by the fold; documented here for the audit and end-to-end tests.
    public var auditFindings: [String] = []

    public init(
        orders: [String: OrderExpectation] = [:], transactions: [String: TransactionExpectation] = [:],
        users: [String: UserExpectation] = [:], subscriptions: [String: SubscriptionExpectation] = [:],
        anomalies: [String] = [], auditFindings: [String] = []
    ) {
        self.orders = orders
        self.transactions = transactions
        self.users = users
        self.subscriptions = subscriptions
        self.anomalyKinds = anomalies
        self.auditFindings = auditFindings
    }

    /// Every way `p` differs from this expectation, one line each; empty when it meets it.
    public func mismatches(in p: Projections) -> [String] {
        var out: [String] = []
        func check<T: Equatable>(_ what: String, _ actual: T, _ expected: T) {
            if actual != expected { out.append("\(what): \(actual), expected \(expected)") }
        }
        for (id, e) in orders.sorted(by: { $0.key < $1.key }) {
            guard let o = p.orders[id] else {
                out.append("order \(id): absent")
                continue
            }
            check("order \(id) status", o.status, e.status)
            check("order \(id) bindingMethod", o.bindingMethod, e.bindingMethod)
            check("order \(id) productMismatch", o.productMismatch, e.productMismatch)
            if let tx = e.transactionId { check("order \(id) transactionId", o.transactionId, tx) }
        }
        for (id, e) in transactions.sorted(by: { $0.key < $1.key }) {
            guard let t = p.transactions[id] else {
                out.append("transaction \(id): absent")
                continue
            }
            let og = p.owedGranted(t)
            check("transaction \(id) verified", t.verified, e.verified)
            check("transaction \(id) userId", og.userId, e.userId)
            check("transaction \(id) orderId", og.orderId, e.orderId)
            check("transaction \(id) owedUnits", og.owedUnits, e.owedUnits)
            check("transaction \(id) grantedUnits", og.grantedUnits, e.grantedUnits)
            check("transaction \(id) revokedUnits", og.revokedUnits, e.revokedUnits)
            check("transaction \(id) status", og.status, e.status)
            check("transaction \(id) grants", t.grants.count, e.grants)
            if let r = e.reportedBy {
                check("transaction \(id) reportedBy", Set(t.reports.compactMap(\.userId)).sorted(), r)
            }
        }
        for (id, e) in users.sorted(by: { $0.key < $1.key }) {
            guard let u = p.users[id] else {
                out.append("user \(id): absent")
                continue
            }
            check("user \(id) coinBalance", u.coinBalance, e.coinBalance)
            check("user \(id) negativeFlagged", u.negativeSince != nil, e.negativeFlagged)
            check("user \(id) ownedFeatures", u.ownedFeatures, e.ownedFeatures)
            for r in e.remaining {
                check(
                    "user \(id) \(r.entitlement) days left at \(r.at)", u.remainingDays(r.entitlement, at: r.at), r.days
                )
            }
        }
        for (key, e) in subscriptions.sorted(by: { $0.key < $1.key }) {
            guard let s = p.subscriptions[key] else {
                out.append("subscription \(key): absent")
                continue
            }
            check("subscription \(key) status", s.status, e.status)
            check("subscription \(key) expiresAt", s.expiresAt, e.expiresAt)
            if let product = e.productId { check("subscription \(key) productId", s.productId, product) }
        }
        check("anomalies", p.anomalies.map(\.kind), anomalyKinds)
        return out
    }
}

/// A named moment inside a scenario: what the projections show after its first `factCount` facts.
public struct Checkpoint: Hashable, Sendable {
    public var label: String
    public var factCount: Int
    public var expected: Expectation
}

/// A fact delivered again (a store retry, a duplicated notification, a repeated query): the same
/// content under the same idempotency key, which the log stores once.
public struct Redelivery: Hashable, Sendable {
    /// Index in `Scenario.facts` of the original.
    public var index: Int
    /// How many facts of the log had been appended when it arrived again.
    public var afterFactCount: Int
    public var at: Timestamp
    /// Why it came again.
    public var note: String
}
