import LedgerCore

/// Payments: client reports, store notifications, verifications and bindings of store transactions.
extension Projections {
    mutating func apply(_ f: ClientCallbackReceived, _ ctx: FactContext) {
        let p = ctx.position
        if let user = f.userId { touchUser(user, p) }
        if let orderId = f.orderId {
            updateOrder(orderId, p) { $0.lastCallbackState = f.state }
        }
        if let txId = f.transactionId {
            updateTransaction(txKey(f.channel, f.app, txId), p) { t in
                if t.channel == nil { t.channel = f.channel }
                t.reports.append(.init(userId: f.userId, orderId: f.orderId ?? f.applicationUsername, position: p))
            }
        }
    }

    /// A store notification: Google pauses and resumes subscriptions; Apple REVOKE takes a
    /// purchase back. Other notifications are facts of their own (renewals, refunds...).
    mutating func apply(_ f: StoreNotificationReceived, _ ctx: FactContext) {
        pauseOrResume(f, ctx)
        storeRevocation(f, ctx)
        untranslated(f, ctx)
    }

    mutating func apply(_ f: PaymentVerified, _ ctx: FactContext) {
        let p = ctx.position
        // A renewal is a later period of a subscription: what the product is decides, never the ids
        // alone (a Google one-time purchase names its purchase token as the original id).
        let renewal = f.originalTransactionId.map { $0 != f.transactionId } ?? false && isSubscription(f)
        let key = txKey(f.channel, f.app, f.transactionId)
        var wholeVoid = false
        updateTransaction(key, p) { t in
            t.channel = f.channel
            t.originalTransactionId = f.originalTransactionId
            t.productId = f.productId
            t.quantity = f.quantity
            t.purchaseDate = f.purchaseDate
            t.expiresDate = f.expiresDate
            t.price = f.price
            t.accountToken = f.appAccountToken?.lowercased ?? f.obfuscatedAccountId ?? f.outTradeNo
            t.environment = f.environment
            t.ownership = f.ownership
            t.termsFromSubscription = false
            if t.verifiedPosition == nil {
                t.verifiedPosition = p
                t.verifiedAt = ctx.occurredAt
            }
            t.isRenewal = t.isRenewal || renewal
            wholeVoid = t.voidIsWhole()
        }
        if let orig = f.originalTransactionId, let expires = f.expiresDate {
            if let old = f.linkedPurchaseToken, old != orig {
                supersede(f.channel, old, by: orig, at: f.purchaseDate, p)
            }
            addPeriod(
                f.channel, orig, transaction: key, productId: f.productId,
                purchase: f.purchaseDate, expires: expires, p)
            renewalsTakeTerms(f.channel, f.app, orig, p)
        }
        // After the period exists, so that it is marked revoked too.
        if wholeVoid { refundsChanged(key) }
        transactionChanged(key)
        complete(.verification, f.channel, transactionId: f.transactionId, original: f.originalTransactionId)
        if let token = f.purchaseToken, token != f.originalTransactionId {
            complete(.verification, f.channel, transactionId: nil, original: token)
        }
    }

    /// Whether a verified purchase is of a subscription: the store signed an expiry, or the
    /// catalogue says the product renews.
    func isSubscription(_ f: PaymentVerified) -> Bool {
        if f.expiresDate != nil { return true }
        if case .subscription = product(f.channel, f.productId, at: f.purchaseDate)?.entitlement { return true }
        return false
    }

    /// The transaction moves to another user from here on.
    mutating func apply(_ f: TransactionTransferred, _ ctx: FactContext) {
        let key = txKey(f.channel, f.app, f.transactionId)
        updateTransaction(key, ctx.position) { t in
            if t.channel == nil { t.channel = f.channel }
            t.transfers.append(
                TransferRecord(
                    fromUserId: f.fromUserId, toUserId: f.toUserId, orderId: f.orderId, method: f.method,
                    position: ctx.position))
        }
        touchUser(f.toUserId, ctx.position)
        if let (orig, c) = subscriptionOf(key) { subscriptionUserChanged(c, orig, moved: true) }
        transactionChanged(key)
    }

    mutating func apply(_ f: PurchaseAcknowledged, _ ctx: FactContext) {
        updateTransaction(txKey(f.channel, f.app, f.transactionId), ctx.position) { t in
            if t.channel == nil { t.channel = f.channel }
            if t.acknowledgedAt.map({ f.acknowledgedAt < $0 }) ?? true { t.acknowledgedAt = f.acknowledgedAt }
        }
    }

    mutating func apply(_ f: VerificationFailed, _ ctx: FactContext) {
        let p = ctx.position
        updateTransaction(txKey(f.channel, f.app, f.transactionId), p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.failedVerifications.append(.init(code: f.code, retryable: f.retryable, position: p))
        }
    }

    mutating func apply(_ f: TransactionBound, _ ctx: FactContext) {
        let p = ctx.position
        if let orderId = f.orderId, orders.with(orderId, { !$0.isCreated }) ?? true {
            anomaly(
                p, "binding-to-unknown-order",
                "transaction \(f.transactionId) bound to order \(orderId), which has no OrderCreated yet")
        }
        let key = txKey(f.channel, f.app, f.transactionId)
        updateTransaction(key, p) { t in
            if t.channel == nil { t.channel = f.channel }
            t.bindings.append(BindingRecord(orderId: f.orderId, userId: f.userId, method: f.method, position: p))
        }
        touchUser(f.userId, p)
        if let orderId = f.orderId {
            updateOrder(orderId, p) { o in
                if o.transactionId == nil {
                    o.transactionId = key
                    o.bindingMethod = f.method
                }
            }
        }
        if let (orig, c) = subscriptionOf(key) {
            subscriptionUserChanged(c, orig)
        }
        transactionChanged(key)
    }

    /// The original transaction and channel of a transaction that has both (one of a subscription's).
    func subscriptionOf(_ key: String) -> (String, Channel)? {
        transactions.with(key) { t in t.originalTransactionId.flatMap { orig in t.channel.map { (orig, $0) } } } ?? nil
    }
}
