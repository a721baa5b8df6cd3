import LedgerCore

/// Subscriptions: periods from verified purchases and renewals, billing problems, plan changes, expiry.
extension Projections {
    /// Google: `old` was replaced by `new` at `at`; it ends there, and its user carries over. Every
    /// renewal of the new token names the old one again: the earliest replacement stands.
    mutating func supersede(_ c: Channel, _ old: String, by new: String, at: Timestamp, _ p: Int64) {
        updateSubscription(c, old, p) { s in
            if s.superseded.map({ at < $0.at }) ?? true { s.superseded = .init(at: at, by: new) }
        }
        updateSubscription(c, new, p) { $0.linkedFrom = old }
    }

    /// The transaction of the period running at `at` (the latest one started by then).
    func currentPeriod(_ c: Channel, _ orig: String, at: Timestamp) -> String? {
        subscriptions.with(Self.subscriptionKey(c, orig)) { s in
            s.periods.filter { !$0.revoked && $0.purchaseDate <= at }
                .max { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }?.transactionId
        } ?? nil
    }

    /// Google Play pauses (10) and restarts or recoveries (7, 1) of a subscription.
    mutating func pauseOrResume(_ f: StoreNotificationReceived, _ ctx: FactContext) {
        guard let orig = f.originalTransactionId, f.channel == .googleplay else { return }
        let p = ctx.position
        let code = f.type.raw
        if code == "10" || code == "SUBSCRIPTION_PAUSED" {
            updateSubscription(f.channel, orig, p) {
                $0.pausedAt = f.signedAt ?? $0.pausedAt ?? Timestamp(microsecondsSince1970: 0)
            }
        } else if code == "7" || code == "1" || code == "SUBSCRIPTION_RESTARTED" || code == "SUBSCRIPTION_RECOVERED" {
            updateSubscription(f.channel, orig, p) { $0.resumedAt = f.signedAt }
        }
    }

    mutating func apply(_ f: SubscriptionRenewed, _ ctx: FactContext) {
        let p = ctx.position
        // A renewal known only from this fact is of its subscription's environment and ownership:
        // a sandbox subscription renews in the sandbox, a family-shared one stays shared.
        let terms = subscriptionTerms(f.channel, f.app, f.originalTransactionId)
        if !subscriptions.contains(Self.subscriptionKey(f.channel, f.originalTransactionId))
            && existingKey(f.channel, f.app, f.originalTransactionId) == nil
        {
            anomaly(
                p, "renewal-for-unknown-subscription",
                "renewal \(f.transactionId) names subscription \(f.originalTransactionId), which no verified purchase started"
            )
        }
        let key = txKey(f.channel, f.app, f.transactionId)
        var pending = false
        updateTransaction(key, p) { t in
            t.channel = f.channel
            t.originalTransactionId = f.originalTransactionId
            t.productId = f.productId
            t.purchaseDate = f.purchaseDate
            t.expiresDate = f.expiresDate
            if let price = f.price { t.price = price }
            if t.verifiedPosition == nil {
                t.verifiedPosition = p
                t.verifiedAt = ctx.occurredAt
                t.termsFromSubscription = true
                if let terms {
                    t.environment = terms.environment
                    t.ownership = terms.ownership
                } else {
                    pending = true
                }
            }
            t.isRenewal = true
        }
        // No purchase of it verified yet: the first that is gives this renewal its terms.
        if pending { termsPending.insert(Self.subscriptionKey(f.channel, f.originalTransactionId)) }
        addPeriod(
            f.channel, f.originalTransactionId, transaction: key, productId: f.productId,
            purchase: f.purchaseDate, expires: f.expiresDate, p)
        transactionChanged(key)
        complete(.verification, f.channel, transactionId: f.transactionId, original: f.originalTransactionId)
    }

    mutating func apply(_ f: RenewalFailed, _ ctx: FactContext) {
        let p = ctx.position
        // Notifications arrive out of order: the latest failure by the store's clock stands.
        updateSubscription(f.channel, f.originalTransactionId, p) { s in
            if s.failure.map({ $0.at <= ctx.occurredAt }) ?? true {
                s.failure = .init(
                    at: ctx.occurredAt, graceUntil: f.gracePeriodExpiresAt,
                    billingRetry: f.inBillingRetry && f.gracePeriodExpiresAt == nil)
            }
            if let until = f.gracePeriodExpiresAt {
                let grace = SubscriptionView.Grace(at: ctx.occurredAt, until: until)
                if !s.graces.contains(grace) {
                    s.graces.append(grace)
                    s.graces.sort { ($0.at, $0.until) < ($1.at, $1.until) }
                }
            }
        }
    }

    mutating func apply(_ f: AutoRenewChanged, _ ctx: FactContext) {
        let p = ctx.position
        updateSubscription(f.channel, f.originalTransactionId, p) { $0.autoRenew = f.enabled }
    }

    mutating func apply(_ f: PlanChanged, _ ctx: FactContext) {
        let p = ctx.position
        updateSubscription(f.channel, f.originalTransactionId, p) { s in
            let latest = s.periods.map(\.purchaseDate).max()
            switch f.effective {
            case .immediate:
                // An upgrade takes effect at once: the period running at the change is upgraded
                // away, whether its transaction arrived before or after this notification.
                s.upgrades.append(.init(at: ctx.occurredAt, toProductId: f.toProductId))
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
    }

    mutating func apply(_ f: SubscriptionExpired, _ ctx: FactContext) {
        let p = ctx.position
        updateSubscription(f.channel, f.originalTransactionId, p) { s in
            if s.expiry.map({ $0.at <= ctx.occurredAt }) ?? true {
                s.expiry = .init(at: ctx.occurredAt, reason: f.reason)
            }
        }
    }

    /// A change of state the store signed without a payment (docs/domain.md, subscription states).
    /// The latest change by the store's clock stands for each kind of state.
    mutating func apply(_ f: SubscriptionStateChanged, _ ctx: FactContext) {
        let p = ctx.position, at = f.effectiveAt
        switch f.change {
        case .paused:
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.pausedAt.map({ $0 <= at }) ?? true { s.pausedAt = at }
            }
        case .pauseScheduled, .priceConsent:
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if let c = f.priceConsent {
                    s.priceConsent = c
                    s.newPrice = f.newPrice ?? s.newPrice
                }
            }
        case .resumed:
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.resumedAt.map({ $0 <= at }) ?? true { s.resumedAt = at }
                if let h = s.onHoldAt, h <= at { s.onHoldAt = nil }
                if let fl = s.failure, fl.at <= at { s.failure = nil }
            }
        case .onHold:
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.onHoldAt.map({ $0 <= at }) ?? true { s.onHoldAt = at }
            }
        case .graceEnded:
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                if s.failure.map({ $0.at <= at }) ?? true {
                    s.failure = .init(at: at, graceUntil: s.failure?.graceUntil, billingRetry: true)
                }
            }
        case .extended:
            // Time the store gives without payment: the period named (else the latest) ends later.
            guard let until = f.expiresAt else { return }
            let tx = f.transactionId.map { txKey(f.channel, f.app, $0) }
            updateSubscription(f.channel, f.originalTransactionId, p) { s in
                let i =
                    tx.flatMap { t in s.periods.firstIndex { $0.transactionId == t } }
                    ?? s.periods.indices.max { s.periods[$0].purchaseDate < s.periods[$1].purchaseDate }
                if let i, s.periods[i].expiresDate < until { s.periods[i].expiresDate = until }
            }
        }
    }

    static func subscriptionKey(_ c: Channel, _ orig: String) -> String { "\(c.rawValue):\(orig)" }

    /// The environment and ownership of a subscription's purchase: its original transaction's once
    /// verified, else (Google names a subscription by its purchase token) its earliest verified
    /// period's; never a period's that took them from the subscription.
    func subscriptionTerms(
        _ c: Channel, _ app: String?, _ orig: String
    ) -> (environment: StoreEnvironment, ownership: Ownership)? {
        func own(_ t: TransactionView) -> (StoreEnvironment, Ownership)? {
            t.verifiedPosition == nil || t.termsFromSubscription ? nil : (t.environment, t.ownership)
        }
        if let terms = withTransaction(c, app, orig, own) ?? nil { return terms }
        guard let periods = subscriptions.with(Self.subscriptionKey(c, orig), \.periods) else { return nil }
        for period in periods.sorted(by: { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) })
        {
            if let terms = transactions.with(period.transactionId, own) ?? nil { return terms }
        }
        return nil
    }

    /// A purchase of the subscription was verified: the renewals logged before any purchase of it
    /// was (``termsPending``) take its terms now. Nothing to do, and no lookup, for the others.
    mutating func renewalsTakeTerms(_ c: Channel, _ app: String?, _ orig: String, _ p: Int64) {
        let key = Self.subscriptionKey(c, orig)
        guard termsPending.contains(key), let terms = subscriptionTerms(c, app, orig),
            let periods = subscriptions.with(key, \.periods)
        else { return }
        termsPending.remove(key)
        for period in periods
        where transactions.with(
            period.transactionId,
            {
                $0.termsFromSubscription && ($0.environment != terms.environment || $0.ownership != terms.ownership)
            }) == true
        {
            updateTransaction(period.transactionId, p) { t in
                t.environment = terms.environment
                t.ownership = terms.ownership
            }
            transactionChanged(period.transactionId)
        }
    }

    /// `transactionId`: the key of the period's transaction.
    mutating func addPeriod(
        _ c: Channel, _ orig: String, transaction transactionId: String, productId: String,
        purchase: Timestamp, expires: Timestamp, _ p: Int64
    ) {
        let (refunded, moved) =
            transactions.with(transactionId, { ($0.refundState == .refunded, !$0.transfers.isEmpty) }) ?? (false, false)
        updateSubscription(c, orig, p) { s in
            if let i = s.periods.firstIndex(where: { $0.transactionId == transactionId }) {
                s.periods[i].expiresDate = max(s.periods[i].expiresDate, expires)
            } else {
                s.periods.append(
                    .init(
                        transactionId: transactionId, productId: productId, purchaseDate: purchase, expiresDate: expires
                    ))
            }
            // The product in force is the one of the latest purchase (a pending downgrade lands here).
            if let latest = s.periods.max(by: { $0.purchaseDate < $1.purchaseDate }),
                latest.transactionId == transactionId
            {
                s.productId = productId
                if s.pendingProductId == productId { s.pendingProductId = nil }
            }
            if refunded, let i = s.periods.firstIndex(where: { $0.transactionId == transactionId }) {
                s.periods[i].revoked = true
            }
            s.markUpgrades()
        }
        upgradesChanged(c, orig, p)
        subscriptionUserChanged(c, orig, moved: moved)
    }

    /// Marks the transactions of upgraded periods.
    mutating func upgradesChanged(_ c: Channel, _ orig: String, _ p: Int64) {
        guard let periods = subscriptions.with(Self.subscriptionKey(c, orig), \.periods) else { return }
        for period in periods where period.upgraded && transactions.with(period.transactionId, \.upgraded) != true {
            updateTransaction(period.transactionId, p) {
                $0.upgraded = true
                $0.upgradedAt = period.upgradedAt
            }
        }
    }

    /// Renewals belong to the user their original transaction is bound to, until a move of the
    /// original or of any of its periods (a TransactionTransferred) gives the subscription to another.
    /// `moved`: a transaction of it has moved (a TransactionTransferred), which makes every period's
    /// moves worth reading; until one has, the first binding is the owner (the common case, read
    /// with one lookup, not one per period).
    mutating func subscriptionUserChanged(_ c: Channel, _ orig: String, moved: Bool = false) {
        let key = Self.subscriptionKey(c, orig)
        guard let (periods, linkedFrom) = subscriptions.with(key, { ($0.periods, $0.linkedFrom) }) else { return }
        // The first owner: the binding of the original transaction; Google names a subscription by
        // its purchase token, which is no transaction id, so there it is the binding of the earliest
        // purchase that has one.
        let byPurchase = periods.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        let origKey = existingKey(c, nil, orig)
        var first: SubscriptionOwners.Owner?
        var moves: [SubscriptionOwners.Owner] = []
        var keys = origKey.map { [$0] } ?? []
        for period in byPurchase where period.transactionId != origKey { keys.append(period.transactionId) }
        var bindings: [(key: String, binding: BindingRecord)] = []
        let readMoves = moved || subscriptionOwners[key] != nil
        // The token the store signed the original with, and each period's moves, read with its
        // binding: one lookup of each view (a spilled one read back once).
        var originalToken: CompactText?
        for k in keys {
            guard
                let (binding, token, transfers) = transactions.with(
                    k, { ($0.bindings.first, k == origKey ? $0.accountTokenValue : nil, readMoves ? $0.transfers : []) }
                )
            else { continue }
            if k == origKey { originalToken = token }
            if let binding { bindings.append((k, binding)) }
            if readMoves {
                for m in transfers {
                    moves.append(.init(userId: m.toUserId, position: m.position, fromUserId: m.fromUserId))
                }
            } else if binding != nil {
                break  // no moves: the first binding found is the owner
            }
        }
        // The first owner: the original's binding wherever it was logged; else a period's binding
        // made before the first move (one made after it is a later owner's, not the first).
        let firstMove = moves.compactMap(\.position).min() ?? .max
        if let b = bindings.first(where: { $0.key == origKey || $0.binding.position < firstMove })?.binding {
            first = .init(userId: b.userId, position: b.position)
        }
        // A linked purchase token carries the owner of the token it replaced.
        if first == nil, let old = linkedFrom, let u = subscriptions.with(Self.subscriptionKey(c, old), \.userId) ?? nil
        {
            first = .init(userId: u, position: nil)
        }
        moves.sort { ($0.position ?? 0) < ($1.position ?? 0) }
        let owners = SubscriptionOwners(first: first, moves: moves)
        let user = owners.current?.userId
        if moves.isEmpty {
            if subscriptionOwners[key] != nil { subscriptionOwners[key] = nil }
        } else if subscriptionOwners[key] != owners {
            subscriptionOwners[key] = owners
        }
        if c == .googleplay, let first = byPurchase.first?.transactionId {
            // A Google renewal keeps the purchase token and gets a new order id: every period but
            // the first purchase is a renewal.
            for period in periods
            where transactions.with(period.transactionId, \.isRenewal) != (period.transactionId != first) {
                transactions.update(period.transactionId) { $0.isRenewal = period.transactionId != first }
                if tracksChanges { changes.transactions.insert(period.transactionId) }
            }
        }
        if (subscriptions.with(key, \.userId) ?? nil) != user {
            subscriptions.update(key) { $0.userId = user }
            if tracksChanges { changes.subscriptions.insert(key) }
        }
        // A renewal signed with another token than its original's is another account's purchase in
        // the subscription group (Apple keeps one original id for every purchase in a group on one
        // Apple ID, whichever account of the app buys it): judged by its own token, not as the
        // subscription's (StoreKit 2 signs the token of the purchase that began it in each renewal).
        for period in periods where period.transactionId != origKey {
            let (current, token) =
                transactions.with(
                    period.transactionId, { ($0.subscriptionUserId, originalToken == nil ? nil : $0.accountTokenValue) }
                )
                ?? (nil, nil)
            let owner = token != nil && token != originalToken ? nil : user
            if current != owner {
                transactions.update(period.transactionId) { $0.subscriptionUserId = owner }
                if tracksChanges { changes.transactions.insert(period.transactionId) }
            }
        }
    }
}
