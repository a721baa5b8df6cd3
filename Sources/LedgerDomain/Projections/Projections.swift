import LedgerCore

/// Where a fact sits in the log.
public struct FactContext: Hashable, Sendable {
    public var position: Int64
    public var occurredAt: Timestamp
    public init(position: Int64, occurredAt: Timestamp) { self.position = position; self.occurredAt = occurredAt }
}

/// Every projection of the log as one pure, deterministic fold: `apply` each fact in log order.
///
/// Order status, subscriptions, user entitlements and owed-versus-granted per store transaction.
/// Nothing here depends on the wall clock or on arrival order beyond the log's own order; a fact
/// that cannot be applied as it stands becomes an ``Anomaly`` and never stops the fold.
public struct Projections: Sendable {
    public private(set) var products: [String: [ProductDefinition]] = [:]
    public private(set) var orders: [String: OrderView] = [:]
    public private(set) var transactions: [String: TransactionView] = [:]
    public private(set) var subscriptions: [String: SubscriptionView] = [:]
    public private(set) var users: [String: UserView] = [:]
    public private(set) var anomalies: [Anomaly] = []
    /// The last position applied.
    public private(set) var position: Int64 = 0
    /// The latest `occurredAt` applied: the log's clock.
    public private(set) var logTime: Timestamp?

    /// When set, the keys of every view changed since ``takeChanges()``.
    public var tracksChanges: Bool
    public private(set) var changes = Changes()

    /// Keys of the views changed since ``takeChanges()``. (Anomalies are append-only: a writer
    /// keeps how many it has written and takes the rest.)
    public struct Changes: Sendable {
        public var orders: Set<String> = []
        public var transactions: Set<String> = []
        public var subscriptions: Set<String> = []
        public var users: Set<String> = []
    }

    public init(tracksChanges: Bool = false) { self.tracksChanges = tracksChanges }

    public mutating func takeChanges() -> Changes {
        defer { changes = Changes() }
        return changes
    }

    static func productKey(_ c: Channel?, _ id: String) -> String { "\(c?.rawValue ?? "?"):\(id)" }

    /// The product definition in force at `time`: the latest whose validFrom is not after it
    /// (the earliest one when the catalogue starts later).
    public func product(_ channel: Channel?, _ id: String, at time: Timestamp?) -> ProductDefinition? {
        guard let defs = products[Self.productKey(channel, id)], !defs.isEmpty else { return nil }
        guard let time else { return defs.last }
        return defs.last(where: { $0.validFrom <= time }) ?? defs.first
    }

    // MARK: - apply

    public mutating func apply(_ fact: Fact, _ ctx: FactContext) {
        position = ctx.position
        if logTime.map({ ctx.occurredAt > $0 }) ?? true { logTime = ctx.occurredAt }
        let p = ctx.position
        switch fact {
        case .productDefined(let d), .productChanged(let d):
            let key = Self.productKey(d.channel, d.storeProductId)
            var defs = products[key] ?? []
            defs.append(d)
            defs.sort { ($0.validFrom, $0.version) < ($1.validFrom, $1.version) }
            products[key] = defs
            // What the transactions of this product owe may change (a rare fact: a scan is fine).
            if tracksChanges {
                for (id, t) in transactions where t.productId == d.storeProductId { changes.transactions.insert(id) }
            }

        case .orderCreated(let f):
            updateOrder(f.orderId, p) { $0.created = f }
            if let tx = orders[f.orderId]?.transactionId { refreshOrder(f.orderId, from: tx) }
            touchUser(f.userId, p)

        case .paymentLaunched(let f):
            updateOrder(f.orderId, p) { o in
                o.launchAttempts = max(o.launchAttempts, f.attempt)
                if o.launchedAt.map({ $0 < ctx.occurredAt }) ?? true { o.launchedAt = ctx.occurredAt }
            }

        case .orderClosed(let f):
            updateOrder(f.orderId, p) { o in
                o.closeReason = f.reason
                if o.paid { o.closedAfterPayment = true }
            }
            if orders[f.orderId]?.paid == true {
                anomaly(p, "order-closed-after-payment", "order \(f.orderId) was closed (\(f.reason.raw)) after its payment was verified")
            }

        case .clientCallbackReceived(let f):
            touchUser(f.userId, p)
            if let orderId = f.orderId {
                updateOrder(orderId, p) { $0.lastCallbackState = f.state }
            }
            if let txId = f.transactionId {
                updateTransaction(txId, p) { t in
                    if t.channel == nil { t.channel = f.channel }
                    t.reports.append((f.userId, f.orderId ?? f.applicationUsername, p))
                }
            }

        case .storeNotificationReceived(let f):
            if let orig = f.originalTransactionId, f.channel == .googleplay {
                let code = f.type.raw
                if code == "10" || code == "SUBSCRIPTION_PAUSED" {
                    updateSubscription(f.channel, orig, p) { $0.pausedAt = f.signedAt ?? $0.pausedAt ?? Timestamp(microsecondsSince1970: 0) }
                } else if code == "7" || code == "1" || code == "SUBSCRIPTION_RESTARTED" || code == "SUBSCRIPTION_RECOVERED" {
                    updateSubscription(f.channel, orig, p) { $0.resumedAt = f.signedAt }
                }
            }
            // Apple REVOKE (family sharing withdrawn): the store took the purchase back.
            if f.channel == .appstore, f.type.raw == "REVOKE", f.verification == "signature-ok", let txId = f.transactionId {
                updateTransaction(txId, p) { t in
                    if t.channel == nil { t.channel = f.channel }
                    t.storeRevokedPosition = p
                    t.storeRevokedAt = ctx.occurredAt
                }
            }

        case .paymentVerified(let f):
            let renewal = f.originalTransactionId.map { $0 != f.transactionId } ?? false
            updateTransaction(f.transactionId, p) { t in
                t.channel = f.channel
                t.originalTransactionId = f.originalTransactionId
                t.productId = f.productId
                t.quantity = f.quantity
                t.purchaseDate = f.purchaseDate
                t.expiresDate = f.expiresDate
                t.price = f.price
                t.appAccountToken = f.appAccountToken?.lowercased
                if t.verifiedPosition == nil { t.verifiedPosition = p; t.verifiedAt = ctx.occurredAt }
                t.isRenewal = t.isRenewal || renewal
            }
            if let orig = f.originalTransactionId, let expires = f.expiresDate {
                addPeriod(f.channel, orig, transactionId: f.transactionId, productId: f.productId,
                          purchase: f.purchaseDate, expires: expires, p)
            }
            transactionChanged(f.transactionId)

        case .verificationFailed(let f):
            updateTransaction(f.transactionId, p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.failedVerifications.append((f.code, f.retryable, p))
            }

        case .transactionBound(let f):
            if let orderId = f.orderId, orders[orderId]?.created == nil {
                anomaly(p, "binding-to-unknown-order", "transaction \(f.transactionId) bound to order \(orderId), which has no OrderCreated yet")
            }
            updateTransaction(f.transactionId, p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.bindings.append(BindingRecord(orderId: f.orderId, userId: f.userId, method: f.method, position: p))
            }
            touchUser(f.userId, p)
            if let orderId = f.orderId {
                updateOrder(orderId, p) { o in
                    if o.transactionId == nil { o.transactionId = f.transactionId; o.bindingMethod = f.method }
                }
            }
            if let orig = transactions[f.transactionId]?.originalTransactionId, let c = transactions[f.transactionId]?.channel {
                subscriptionUserChanged(c, orig)
            }
            transactionChanged(f.transactionId)

        case .entitlementGranted(let f):
            let anchor = transactions[f.transactionId]?.purchaseDate ?? ctx.occurredAt
            updateTransaction(f.transactionId, p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.grants.append(GrantRecord(grantId: f.grantId, userId: f.userId, orderId: f.orderId, entitlement: f.entitlement,
                                            quantity: f.quantity, position: p, at: anchor))
            }
            updateUser(f.userId, p) { u in
                Self.credit(&u, f.entitlement, quantity: f.quantity, anchor: anchor, grantId: f.grantId, sign: 1)
                // A credit can bring a negative balance back to zero or above: no longer flagged.
                Self.checkBalance(&u, p)
            }
            transactionChanged(f.transactionId)

        case .entitlementRevoked(let f):
            var taken: [GrantRecord] = []
            updateTransaction(f.transactionId, p) { t in
                for i in t.grants.indices where t.grants[i].revokedAt == nil && t.grants[i].userId == f.userId
                    && (f.grantId == nil || t.grants[i].grantId == f.grantId) {
                    t.grants[i].revokedAt = p
                    taken.append(t.grants[i])
                }
                t.revocations.append(RevocationRecord(userId: f.userId, reason: f.reason, position: p, grantsRevoked: taken.count))
            }
            if taken.isEmpty {
                anomaly(p, "revocation-without-grant", "user \(f.userId) had no active grant for transaction \(f.transactionId) to revoke (\(f.reason.raw))")
            }
            updateUser(f.userId, p) { u in
                for g in taken { Self.credit(&u, g.entitlement, quantity: g.quantity, anchor: g.at, grantId: g.grantId, sign: -1) }
                Self.checkBalance(&u, p, cause: f.transactionId)
            }
            transactionChanged(f.transactionId)

        case .coinsSpent(let f):
            updateUser(f.userId, p) { u in
                u.coinsSpent += f.amount
                Self.checkBalance(&u, p)
            }

        case .subscriptionRenewed(let f):
            if subscriptions[Self.subscriptionKey(f.channel, f.originalTransactionId)] == nil && transactions[f.originalTransactionId] == nil {
                anomaly(p, "renewal-for-unknown-subscription", "renewal \(f.transactionId) names subscription \(f.originalTransactionId), which no verified purchase started")
            }
            updateTransaction(f.transactionId, p) { t in
                t.channel = f.channel
                t.originalTransactionId = f.originalTransactionId
                t.productId = f.productId
                t.purchaseDate = f.purchaseDate
                t.expiresDate = f.expiresDate
                if let price = f.price { t.price = price }
                if t.verifiedPosition == nil { t.verifiedPosition = p; t.verifiedAt = ctx.occurredAt }
                t.isRenewal = true
            }
            addPeriod(f.channel, f.originalTransactionId, transactionId: f.transactionId, productId: f.productId,
                      purchase: f.purchaseDate, expires: f.expiresDate, p)
            transactionChanged(f.transactionId)

        case .renewalFailed(let f):
            // Notifications arrive out of order: the latest failure by the store's clock stands.
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.failure.map({ $0.at <= ctx.occurredAt }) ?? true {
                    s.failure = (ctx.occurredAt, f.gracePeriodExpiresAt, f.inBillingRetry)
                }
            }

        case .autoRenewChanged(let f):
            updateSubscription(f.channel, f.originalTransactionId, p) { $0.autoRenew = f.enabled }

        case .planChanged(let f):
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                let latest = s.periods.map(\.purchaseDate).max()
                switch f.effective {
                case .immediate:
                    // An upgrade takes effect at once: the period running at the change is upgraded
                    // away, whether its transaction arrived before or after this notification.
                    s.upgrades.append((at: ctx.occurredAt, toProductId: f.toProductId))
                    s.markUpgrades()
                    if latest.map({ $0 <= ctx.occurredAt }) ?? true {
                        s.productId = f.toProductId
                        s.pendingProductId = nil
                    }
                case .nextRenewal:
                    // Pending until a period of the new product starts; it may have arrived already.
                    if !s.periods.contains(where: { $0.productId == f.toProductId && $0.purchaseDate >= ctx.occurredAt }) {
                        s.pendingProductId = f.toProductId
                    }
                }
            }
            if f.effective == .immediate { upgradesChanged(f.channel, f.originalTransactionId, p) }

        case .subscriptionExpired(let f):
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.expiry.map({ $0.at <= ctx.occurredAt }) ?? true { s.expiry = (ctx.occurredAt, f.reason) }
            }

        case .refundRequested(let f):
            refundNotice(f, p, state: .requested)
        case .refundDeclined(let f):
            refundNotice(f, p, state: .declined)

        case .refunded(let f):
            if transactions[f.transactionId]?.verified != true {
                anomaly(p, "refund-for-unknown-transaction", "refund \(f.refundId) of \(f.amount) names transaction \(f.transactionId), which was never verified")
            }
            updateTransaction(f.transactionId, p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.refunds[f.refundId] = f.amount
                t.refundState = .refunded
                t.refundPositions.append(p)
                t.refundedPosition = p
                t.refundedAt = ctx.occurredAt
            }
            setRevoked(f.transactionId, true)
            transactionChanged(f.transactionId)

        case .refundReversed(let f):
            if transactions[f.transactionId]?.refundState != .refunded {
                anomaly(p, "reversal-without-refund", "refund reversal for transaction \(f.transactionId), which has no refund")
            }
            updateTransaction(f.transactionId, p) { t in
                if t.channel == nil { t.channel = f.channel }
                if t.refundState == .refunded { t.refundState = .reversed }
                t.refundPositions.append(p)
            }
            setRevoked(f.transactionId, false)
            transactionChanged(f.transactionId)
        }
    }

    /// A stored fact that does not decode (an unknown type stored on purpose, or a payload an older
    /// build accepted): recorded as an anomaly, and the fold goes on.
    public mutating func skip(_ ctx: FactContext, type: String, reason: String) {
        position = ctx.position
        anomaly(ctx.position, "undecodable-fact", "\(type): \(reason)")
    }

    // MARK: - helpers

    static func subscriptionKey(_ c: Channel, _ orig: String) -> String { "\(c.rawValue):\(orig)" }

    static func credit(_ u: inout UserView, _ e: Entitlement, quantity: Int64, anchor: Timestamp, grantId: String, sign: Int64) {
        switch e {
        case .coins(let n):
            if sign > 0 { u.coinsCredited += n * quantity } else { u.coinsClawedBack += n * quantity }
        case .feature(let name):
            u.features[name, default: 0] += sign
        case .subscription, .period:
            guard let name = e.periodEntitlement, let days = e.periodDays else { return }
            if sign > 0 {
                u.periodGrants.append(.init(entitlement: name, anchor: anchor, days: days * quantity, grantId: grantId))
            } else if let i = u.periodGrants.firstIndex(where: { $0.grantId == grantId }) {
                u.periodGrants.remove(at: i)
            }
        }
    }

    /// `cause`: the transaction of a clawback (nil for a spend).
    static func checkBalance(_ u: inout UserView, _ p: Int64, cause: String? = nil) {
        if u.coinBalance < 0 {
            if u.negativeSince == nil { u.negativeSince = p; u.negativeCause = cause }
        } else {
            u.negativeSince = nil
            u.negativeCause = nil
        }
    }

    mutating func anomaly(_ p: Int64, _ kind: String, _ detail: String) {
        anomalies.append(Anomaly(position: p, kind: kind, detail: detail))
    }

    mutating func updateOrder(_ id: String, _ p: Int64, _ body: (inout OrderView) -> Void) {
        // Mutated in place (one lookup, no copy): the closures never touch `self`.
        Self.touch(&orders[id, default: OrderView(orderId: id)], p, body)
        if tracksChanges { changes.orders.insert(id) }
    }

    mutating func updateTransaction(_ id: String, _ p: Int64, _ body: (inout TransactionView) -> Void) {
        Self.touch(&transactions[id, default: TransactionView(transactionId: id)], p, body)
        if tracksChanges { changes.transactions.insert(id) }
    }

    mutating func updateSubscription(_ c: Channel, _ orig: String, _ p: Int64, _ body: (inout SubscriptionView) -> Void) {
        let key = Self.subscriptionKey(c, orig)
        Self.touch(&subscriptions[key, default: SubscriptionView(channel: c, originalTransactionId: orig)], p, body)
        if tracksChanges { changes.subscriptions.insert(key) }
    }

    mutating func updateUser(_ id: String, _ p: Int64, _ body: (inout UserView) -> Void) {
        Self.touch(&users[id, default: UserView(userId: id)], p, body)
        if tracksChanges { changes.users.insert(id) }
    }

    mutating func touchUser(_ id: String, _ p: Int64) { updateUser(id, p) { _ in } }

    @inline(__always)
    static func touch<V: PositionedView>(_ v: inout V, _ p: Int64, _ body: (inout V) -> Void) {
        body(&v)
        if v.positions.last != p { v.positions.append(p) }
    }

    mutating func addPeriod(_ c: Channel, _ orig: String, transactionId: String, productId: String,
                            purchase: Timestamp, expires: Timestamp, _ p: Int64) {
        let refunded = transactions[transactionId]?.refundState == .refunded
        updateSubscription(c, orig, p) { s in
            if let i = s.periods.firstIndex(where: { $0.transactionId == transactionId }) {
                s.periods[i].expiresDate = max(s.periods[i].expiresDate, expires)
            } else {
                s.periods.append(.init(transactionId: transactionId, productId: productId, purchaseDate: purchase, expiresDate: expires))
            }
            // The product in force is the one of the latest purchase (a pending downgrade lands here).
            if let latest = s.periods.max(by: { $0.purchaseDate < $1.purchaseDate }), latest.transactionId == transactionId {
                s.productId = productId
                if s.pendingProductId == productId { s.pendingProductId = nil }
            }
            if refunded, let i = s.periods.firstIndex(where: { $0.transactionId == transactionId }) {
                s.periods[i].revoked = true
            }
            s.markUpgrades()
        }
        upgradesChanged(c, orig, p)
        subscriptionUserChanged(c, orig)
    }

    /// Marks the transactions of upgraded periods.
    mutating func upgradesChanged(_ c: Channel, _ orig: String, _ p: Int64) {
        guard let s = subscriptions[Self.subscriptionKey(c, orig)] else { return }
        for period in s.periods where period.upgraded && transactions[period.transactionId]?.upgraded != true {
            updateTransaction(period.transactionId, p) { $0.upgraded = true }
        }
    }

    /// Renewals belong to the user their original transaction is bound to.
    mutating func subscriptionUserChanged(_ c: Channel, _ orig: String) {
        guard let s = subscriptions[Self.subscriptionKey(c, orig)] else { return }
        // The owner: the binding of the original transaction; Google names a subscription by its
        // purchase token, which is no transaction id, so there it is the binding of the earliest
        // purchase that has one.
        let byPurchase = s.periods.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        var user = transactions[orig]?.bindings.first?.userId
        if user == nil {
            for period in byPurchase {
                if let u = transactions[period.transactionId]?.bindings.first?.userId { user = u; break }
            }
        }
        if c == .googleplay, let first = byPurchase.first?.transactionId {
            // A Google renewal keeps the purchase token and gets a new order id: every period but
            // the first purchase is a renewal.
            for period in s.periods where transactions[period.transactionId]?.isRenewal != (period.transactionId != first) {
                transactions[period.transactionId]?.isRenewal = period.transactionId != first
                if tracksChanges { changes.transactions.insert(period.transactionId) }
            }
        }
        let key = Self.subscriptionKey(c, orig)
        if subscriptions[key]?.userId != user {
            subscriptions[key]?.userId = user
            if tracksChanges { changes.subscriptions.insert(key) }
        }
        for period in s.periods where period.transactionId != orig && transactions[period.transactionId]?.bindings.isEmpty != false {
            if transactions[period.transactionId]?.subscriptionUserId != user {
                transactions[period.transactionId]?.subscriptionUserId = user
                if tracksChanges { changes.transactions.insert(period.transactionId) }
            }
        }
    }

    mutating func setRevoked(_ txId: String, _ revoked: Bool) {
        guard let t = transactions[txId], let orig = t.originalTransactionId, let c = t.channel else { return }
        let key = Self.subscriptionKey(c, orig)
        guard var s = subscriptions[key], let i = s.periods.firstIndex(where: { $0.transactionId == txId }) else { return }
        s.periods[i].revoked = revoked
        subscriptions[key] = s
        if tracksChanges { changes.subscriptions.insert(key) }
    }

    mutating func refundNotice(_ f: RefundNotice, _ p: Int64, state: RefundState) {
        updateTransaction(f.transactionId, p) { t in
            if t.channel == nil { t.channel = f.channel }
            if t.refundState == .none || t.refundState == .requested { t.refundState = state }
            t.refundPositions.append(p)
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

/// A view that keeps the positions of the facts behind it.
protocol PositionedView { var positions: [Int64] { get set } }
extension OrderView: PositionedView {}
extension TransactionView: PositionedView {}
extension SubscriptionView: PositionedView {}
extension UserView: PositionedView {}
