import LedgerCore

/// The audit of domain.md section 6 over the projections (chain-broken is the store's).
public enum Audit {}

extension Audit {
    /// Every finding of domain.md section 6 except chain-broken, from the fold of a log (or of a
    /// prefix of it: the report "as of" that position). Pure and deterministic: sorted, and at most
    /// one finding per ``Finding/key``. O(orders + transactions + users); no wall clock.
    ///
    /// **Log time** (`now`) is `p.logTime`, the latest `occurredAt` replayed. A window "has passed"
    /// when `now > start + window` (strictly: at exactly start + window the fact is still inside
    /// it). With an empty log nothing is windowed.
    ///
    /// **Active grant**: an EntitlementGranted not taken back by a later EntitlementRevoked of the
    /// same user (and grant id, when the revocation names one). Grants are netted against
    /// revocations everywhere below: a grant after a refund reversal replaces the revoked one.
    ///
    /// **Verified**: the transaction has a PaymentVerified or a SubscriptionRenewed (a renewal);
    /// `verifiedAt` is the `occurredAt` of the first of them.
    ///
    /// **Owner** of a transaction: its first TransactionBound's user; else, for a renewal, the
    /// user its original transaction is bound to; else the user of the order whose accountToken
    /// equals the verified appAccountToken (several: the smallest order id); else (per grant) the
    /// user of the order the grant names.
    ///
    /// **Owed units**: ``Projections/owedGranted(_:)`` (catalogue in force at the purchase, net of
    /// refunds, partial refunds taking back whole units rounded up).
    ///
    /// The rules, each documented on its own function: ``doubleGrant``, ``missingGrant``,
    /// ``grantWithoutPayment``, ``refundNotRevoked``, ``revokedWithoutRefund``, ``wrongUser``,
    /// ``productMismatch``, ``orphanPayment``, ``receiptReused``, ``staleOrder``,
    /// ``subscriptionDrift``, ``negativeBalance``. One finding per root cause:
    /// - an unverified transaction's grants are grant-without-payment only (never also double-grant);
    /// - an orphan payment is orphan-payment only (never also missing-grant: nobody to grant to);
    /// - a period transaction with no active grant is missing-grant; with two or more it is
    ///   double-grant; refunded or store-revoked it is refund-not-revoked's: subscription-drift
    ///   only judges a verified, unrefunded period transaction with exactly one active grant.
    /// Other rules are independent (a receipt replayed to a second user and granted to them is
    /// receipt-reused, wrong-user and double-grant at once: three facts, all true).
    public static func run(_ p: Projections, options: AuditOptions = AuditOptions()) -> [Finding] {
        var c = Context(p: p, options: options)
        for defs in p.products.values {
            guard let d = defs.first else { continue }
            c.catalogue[d.channel, default: [:]][d.storeProductId] = defs
        }
        for t in p.transactions.values {
            // Fast path: the common clean transaction allocates nothing (no grant list, no
            // owed-versus-granted unless a rule needs it).
            var activeCount = 0
            for g in t.grants where g.revokedAt == nil { activeCount += 1 }
            let active = activeCount == t.grants.count ? t.grants : t.activeGrants
            grantWithoutPayment(t, active, &c)
            doubleGrant(t, active, &c)
            missingGrant(t, active, &c)
            refundNotRevoked(t, active, &c)
            revokedWithoutRefund(t, &c)
            wrongUser(t, active, &c)
            orphanPayment(t, &c)
            receiptReused(t, &c)
            subscriptionDrift(t, active, &c)
        }
        for o in p.orders.values {
            productMismatch(o, &c)
            staleOrder(o, &c)
        }
        for u in p.users.values { negativeBalance(u, &c) }
        c.findings.sort()
        return c.findings
    }

    struct Context {
        let p: Projections
        let options: AuditOptions
        /// accountToken (lowercased) -> order id; built on first need (most transactions are bound).
        var tokenOrders: [String: String]?
        /// `p.products` by channel and store product id (no key string built per lookup).
        var catalogue: [Channel: [String: [ProductDefinition]]] = [:]
        var findings: [Finding] = []

        /// The entitlement one unit of `t`'s product gives, as ``Projections/product(_:_:at:)`` finds it.
        func entitlement(_ t: TransactionView) -> Entitlement? {
            guard let channel = t.channel, let id = t.productId, let defs = catalogue[channel]?[id], !defs.isEmpty else { return nil }
            guard let time = t.purchaseDate else { return defs.last?.entitlement }
            return (defs.last(where: { $0.validFrom <= time }) ?? defs.first)?.entitlement
        }

        /// `now > start + window`, in log time.
        func passed(_ start: Timestamp?, _ window: Duration) -> Bool {
            guard let start, let now = p.logTime else { return false }
            let w = window.components
            let micros = w.seconds * 1_000_000 + w.attoseconds / 1_000_000_000_000
            return now.microseconds - start.microseconds > micros
        }

        /// The owner of `t` (see ``Audit/run(_:options:)``) without the per-grant order fallback,
        /// and the position that proves it.
        mutating func owner(_ t: TransactionView) -> (user: String, position: Int64?)? {
            if let b = t.bindings.first { return (b.userId, b.position) }
            if let u = t.subscriptionUserId {
                return (u, t.originalTransactionId.flatMap { p.transactions[$0]?.bindings.first?.position })
            }
            guard let token = t.appAccountToken else { return nil }
            if tokenOrders == nil {
                var index: [String: String] = [:]
                for o in p.orders.values {
                    guard let tok = o.created?.accountToken?.lowercased() else { continue }
                    if let seen = index[tok], seen < o.orderId { continue }
                    index[tok] = o.orderId
                }
                tokenOrders = index
            }
            if let id = tokenOrders?[token], let o = p.orders[id], let u = o.userId { return (u, o.positions.first) }
            return nil
        }

        func orderPrice(_ orderId: String?) -> Money? { orderId.flatMap { p.orders[$0]?.created?.price } }

        mutating func add(_ kind: FindingKind, _ channel: Channel?, user: String?, order: String?, tx: String?,
                          _ positions: [Int64?], _ amount: Money?, _ detail: String) {
            findings.append(Finding(kind: kind, channel: channel, userId: user, orderId: order, transactionId: tx,
                                    positions: Array(Set(positions.compactMap { $0 })), amountAtRisk: amount, detail: detail))
        }
    }

    static func times(_ m: Money?, _ n: Int) -> Money? {
        m.map { Money(minorUnits: $0.minorUnits * Int64(n), currency: $0.currency) }
    }

    /// `m * num / den`, rounded up, without overflow (num <= den).
    static func prorate(_ m: Money, _ num: Int64, _ den: Int64) -> Money {
        guard den > 0, num < den else { return m }
        let product = m.minorUnits.magnitude.multipliedFullWidth(by: UInt64(max(0, num)))
        let (q, r) = UInt64(den).dividingFullWidth(product)
        let v = Int64(q) + (r == 0 ? 0 : 1)
        return Money(minorUnits: m.minorUnits < 0 ? -v : v, currency: m.currency)
    }

    /// The money the buyer paid and kept: the price less what was refunded (same currency).
    static func netPaid(_ t: TransactionView) -> Money? {
        guard let price = t.price else { return nil }
        guard let r = t.refundedAmount, r.currency == price.currency else { return price }
        return Money(minorUnits: max(0, price.minorUnits - r.minorUnits), currency: price.currency)
    }

    // MARK: - transaction rules

    /// **grant-without-payment**: the transaction is not verified (no PaymentVerified and no
    /// SubscriptionRenewed; it may have only VerificationFailed facts) and has at least one active
    /// grant. No window. One finding per transaction: user and order of its first active grant
    /// (order: the grant's, else the transaction's binding); positions: the active grants and the
    /// failed verifications; amount: (the price, else the named order's price) x active grants.
    static func grantWithoutPayment(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard !t.verified, let first = active.first else { return }
        let order = first.orderId ?? t.orderId
        let price = t.price ?? c.orderPrice(order)
        let failed = t.failedVerifications.map { "\($0.code)\($0.retryable ? " (retryable)" : "")" }
        let why = failed.isEmpty ? "was never verified" : "only failed verification (\(failed.joined(separator: ", ")))"
        c.add(.grantWithoutPayment, t.channel, user: first.userId, order: order, tx: t.transactionId,
              active.map(\.position) + t.failedVerifications.map(\.position), times(price, active.count),
              "Transaction \(t.transactionId) has \(active.count) active grant(s) (\(active.map(\.grantId).joined(separator: ", "))) but \(why).")
    }

    /// **double-grant**: a verified transaction with two or more active grants (to one user or
    /// several, one order or several). No window. User: the owner, else the first grant's user;
    /// order: the binding's; positions: the verification and the active grants; amount:
    /// price x (active grants - 1).
    static func doubleGrant(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard t.verified, active.count > 1 else { return }
        let desc = active.map { "\($0.grantId) to \($0.userId)" }.joined(separator: ", ")
        c.add(.doubleGrant, t.channel, user: c.owner(t)?.user ?? active[0].userId, order: t.orderId, tx: t.transactionId,
              [t.verifiedPosition] + active.map(\.position), times(t.price, active.count - 1),
              "Transaction \(t.transactionId) was paid once but has \(active.count) active grants (\(desc)).")
    }

    /// **missing-grant**: a verified payment or renewal that is owed something (owed units > 0;
    /// for a product the catalogue does not know: not refunded; never after an Apple REVOKE of
    /// it, which owes nothing), has no active grant, is not an
    /// orphan payment (see ``orphanPayment``), and log time is past `verifiedAt` + the
    /// missing-grant window. User and order: the owner and the binding's order; positions: the
    /// verification, the bindings, and any grants and revocations (all taken back); amount: the
    /// price less any refund.
    static func missingGrant(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard t.verified, active.isEmpty, !isOrphan(t), c.passed(t.verifiedAt, c.options.missingGrantWindow) else { return }
        let og = c.p.owedGranted(t)
        let owes = t.storeRevokedPosition == nil && (og.status == .unknownProduct ? t.refundState != .refunded : og.owedUnits > 0)
        guard owes else { return }
        let owed = og.unit.map { "\(og.owedUnits) \($0)" } ?? "product \(t.productId ?? "?") (not in the catalogue)"
        c.add(.missingGrant, t.channel, user: c.owner(t)?.user, order: t.orderId, tx: t.transactionId,
              [t.verifiedPosition] + t.bindings.map(\.position) + t.grants.map(\.position) + t.revocations.map(\.position),
              netPaid(t),
              "\(t.isRenewal ? "Renewal" : "Payment") \(t.transactionId) verified at \(t.verifiedAt?.iso8601 ?? "?") owes \(owed) and has no active grant after the \(c.options.missingGrantWindow) window.")
    }

    /// **refund-not-revoked**: either the transaction is refunded (a Refunded fact not undone by a
    /// RefundReversed) and its net granted units exceed what it is still owed, or a verified Apple
    /// REVOKE notification names it and it still has an active grant; and log time is past the
    /// latest of those facts (`refundedAt`, `storeRevokedAt`) + the refund window. User and order:
    /// the owner and the binding's order; positions: the latest Refunded / REVOKE and the active
    /// grants; amount: the refunded amount (REVOKE only: the price).
    static func refundNotRevoked(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard !active.isEmpty, t.refundState == .refunded || t.storeRevokedPosition != nil else { return }
        let og = c.p.owedGranted(t)
        let refunded = t.refundState == .refunded && og.netUnits > og.owedUnits
        let revoked = t.storeRevokedPosition != nil
        guard refunded || revoked else { return }
        let start = [refunded ? t.refundedAt : nil, t.storeRevokedAt].compactMap { $0 }.max()
        guard c.passed(start, c.options.refundWindow) else { return }
        let what = refunded ? "refunded (\(t.refundedAmount.map(\.description) ?? "?"))" : "revoked by the store (REVOKE)"
        c.add(.refundNotRevoked, t.channel, user: c.owner(t)?.user ?? active[0].userId, order: t.orderId, tx: t.transactionId,
              [refunded ? t.refundedPosition : nil, t.storeRevokedPosition] + active.map(\.position),
              refunded ? (t.refundedAmount ?? t.price) : t.price,
              "Transaction \(t.transactionId) was \(what) at \(start?.iso8601 ?? "?") but \(active.count) grant(s) are still active after the \(c.options.refundWindow) window.")
    }

    /// **revoked-without-refund**: an EntitlementRevoked whose reason is not `support`, for a
    /// transaction with no Refunded fact and no Apple REVOKE notification anywhere in the replayed
    /// log (whatever the reason says: `refund` with no refund behind it is the finding). One
    /// finding per (transaction, revoked user): positions: those revocations; order: the binding's;
    /// amount: the price.
    static func revokedWithoutRefund(_ t: TransactionView, _ c: inout Context) {
        guard !t.revocations.isEmpty, t.refunds.isEmpty, t.storeRevokedPosition == nil else { return }
        var byUser: [String: [RevocationRecord]] = [:]
        for r in t.revocations where r.reason != .support { byUser[r.userId, default: []].append(r) }
        for (user, rs) in byUser {
            c.add(.revokedWithoutRefund, t.channel, user: user, order: t.orderId, tx: t.transactionId, rs.map(\.position), t.price,
                  "Transaction \(t.transactionId) was revoked from \(user) (\(rs.map(\.reason.raw).joined(separator: ", "))) with no refund, store revoke or support reason behind it.")
        }
    }

    /// **wrong-user**: an active grant to a user other than the transaction's owner (see
    /// ``Audit/run(_:options:)``; with no owner, the user of the order the grant names; with
    /// neither, no finding). One finding per (transaction, recipient): user: the recipient;
    /// order: the binding's, else the grant's; positions: the proof of ownership (binding, the
    /// original's binding, the token's order or the grant's order) and the grants; amount:
    /// (price, else the order's price) x those grants.
    static func wrongUser(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard !active.isEmpty else { return }
        let owner = c.owner(t)
        var wrong: [String: (grants: [GrantRecord], owner: String, proof: Int64?)] = [:]
        for g in active {
            var expected = owner
            if expected == nil, let oid = g.orderId, let o = c.p.orders[oid], let u = o.userId { expected = (u, o.positions.first) }
            guard let e = expected, e.user != g.userId else { continue }
            wrong[g.userId, default: ([], e.user, e.position)].grants.append(g)
        }
        for (user, w) in wrong {
            let order = t.orderId ?? w.grants[0].orderId
            c.add(.wrongUser, t.channel, user: user, order: order, tx: t.transactionId, [w.proof] + w.grants.map(\.position),
                  times(t.price ?? c.orderPrice(order), w.grants.count),
                  "Transaction \(t.transactionId) belongs to \(w.owner) but \(w.grants.count) grant(s) went to \(user).")
        }
    }

    /// A verified transaction that is not a renewal and has no TransactionBound.
    static func isOrphan(_ t: TransactionView) -> Bool { t.verified && !t.isRenewal && t.bindings.isEmpty }

    /// **orphan-payment**: a verified transaction that is not a renewal (renewals belong to their
    /// subscription's user and need no binding of their own) and has no TransactionBound. No
    /// window: it is an orphan until bound. User and order: none (that is the finding); positions:
    /// the verification and the client reports; amount: the price.
    static func orphanPayment(_ t: TransactionView, _ c: inout Context) {
        guard isOrphan(t) else { return }
        let reporters = Set(t.reports.map(\.userId)).sorted()
        let hint = reporters.isEmpty ? "no client report" : "reported by \(reporters.joined(separator: ", "))"
        c.add(.orphanPayment, t.channel, user: nil, order: nil, tx: t.transactionId, [t.verifiedPosition] + t.reports.map(\.position), t.price,
              "Transaction \(t.transactionId) (\(t.productId ?? "?")) was paid but is bound to no order and no user (\(hint)).")
    }

    /// **receipt-reused**: the presentations of a transaction (client reports: the signed-in user
    /// and `orderId ?? applicationUsername`; TransactionBound: user and order) name more than one
    /// user, or more than one (non-nil) order. Verified or not, granted or not. The rightful
    /// presentation is the first binding (else the first presentation, with the first order any
    /// presentation names); the finding names the first presentation, in log order, whose user
    /// differs from it or whose non-nil order differs from its order (user and that order, nil if
    /// it named none). Positions: every presentation; amount: the price.
    static func receiptReused(_ t: TransactionView, _ c: inout Context) {
        guard t.reports.count + t.bindings.count > 1 else { return }
        if let b = t.bindings.first, let bound = b.orderId {
            // Fast path: every presentation names the first binding's user and no other order:
            // no conflict, nothing to allocate.
            let agree = t.reports.allSatisfy { $0.userId == b.userId && ($0.orderId == nil || $0.orderId == bound) }
                && t.bindings.allSatisfy { $0.userId == b.userId && ($0.orderId == nil || $0.orderId == bound) }
            if agree { return }
        }
        var shown = t.reports.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown += t.bindings.map { (user: $0.userId, order: $0.orderId, position: $0.position) }
        shown.sort { $0.position < $1.position }
        let ownerUser = t.bindings.first?.userId ?? shown[0].user
        let ownerOrder = t.bindings.first?.orderId ?? shown.first(where: { $0.order != nil })?.order
        guard let conflict = shown.first(where: { $0.user != ownerUser || ($0.order != nil && ownerOrder != nil && $0.order != ownerOrder) })
        else { return }
        let users = Set(shown.map(\.user)).sorted(), orders = Set(shown.compactMap(\.order)).sorted()
        c.add(.receiptReused, t.channel, user: conflict.user, order: conflict.order, tx: t.transactionId, shown.map(\.position), t.price,
              "Transaction \(t.transactionId) of \(ownerUser)\(ownerOrder.map { " (order \($0))" } ?? "") was presented for users [\(users.joined(separator: ", "))] and orders [\(orders.joined(separator: ", "))].")
    }

    /// **subscription-drift**: a verified transaction of a subscription or period product (the
    /// catalogue gives days of an entitlement), not refunded and not store-revoked, with exactly
    /// one active grant whose (unit, units) differs from what is owed (e.g. 7 days of vip for a
    /// 30-day month, or days of another entitlement). No grant is missing-grant, two or more is
    /// double-grant. No window. User: the owner, else the grantee; positions: the verification and
    /// the grant; amount: price x |granted - owed| / owed days, rounded up (the whole price when the
    /// unit differs or more than twice is granted).
    static func subscriptionDrift(_ t: TransactionView, _ active: [GrantRecord], _ c: inout Context) {
        guard t.verified, active.count == 1, t.refundState != .refunded, t.storeRevokedPosition == nil,
              let e = c.entitlement(t), e.periodEntitlement != nil else { return }
        let owed = e.units(quantity: t.quantity)
        let g = active[0], got = g.entitlement.units(quantity: g.quantity)
        guard got != owed else { return }
        let amount: Money?
        if got.unit == owed.unit, let price = t.price {
            amount = prorate(price, abs(got.count - owed.count), owed.count)
        } else { amount = t.price }
        c.add(.subscriptionDrift, t.channel, user: c.owner(t)?.user ?? g.userId, order: t.orderId, tx: t.transactionId,
              [t.verifiedPosition, g.position], amount,
              "Transaction \(t.transactionId) (\(t.productId ?? "?")) paid for \(owed.count) \(owed.unit) but grant \(g.grantId) gave \(got.count) \(got.unit).")
    }

    // MARK: - order rules

    /// **product-mismatch**: an order whose bound transaction (the first TransactionBound naming
    /// it) was verified with a product other than the order's (`OrderView.productMismatch`). One
    /// finding per order: user: the order's; positions: the order's first fact, the verification
    /// and the binding; amount: the verified price (else the order's).
    static func productMismatch(_ o: OrderView, _ c: inout Context) {
        guard o.productMismatch, let txId = o.transactionId, let created = o.created else { return }
        let t = c.p.transactions[txId]
        let binding = t?.bindings.first(where: { $0.orderId == o.orderId })?.position
        c.add(.productMismatch, created.channel, user: created.userId, order: o.orderId, tx: txId,
              [o.positions.first, t?.verifiedPosition, binding], t?.price ?? created.price,
              "Order \(o.orderId) was for \(created.productId) but its transaction \(txId) was verified as \(o.verifiedProductId ?? "?").")
    }

    /// **stale-order**: an order with a PaymentLaunched, not paid (no verified bound transaction),
    /// not closed, and log time past its latest launch + the stale-order window. User: the
    /// order's; positions: every fact of the order; amount: the order's price.
    static func staleOrder(_ o: OrderView, _ c: inout Context) {
        guard o.launchAttempts > 0, !o.paid, o.closeReason == nil, c.passed(o.launchedAt, c.options.staleOrderWindow) else { return }
        c.add(.staleOrder, o.created?.channel, user: o.userId, order: o.orderId, tx: nil, o.positions, o.created?.price,
              "Order \(o.orderId) was launched at \(o.launchedAt?.iso8601 ?? "?") and is neither paid nor closed after the \(c.options.staleOrderWindow) window.")
    }

    // MARK: - user rules

    /// **negative-balance**: a user whose coin balance (credits - spends - clawbacks) is below
    /// zero now. Positions: the fact that took it below zero (`negativeSince`). When that fact was
    /// a clawback (EntitlementRevoked), the finding names its transaction, order and channel, and
    /// the amount is the refunded amount (else the price) x min(deficit, coins clawed back there) /
    /// coins clawed back, rounded up: the money returned for coins already spent. A spend: no
    /// transaction, no amount.
    static func negativeBalance(_ u: UserView, _ c: inout Context) {
        guard u.coinBalance < 0, let since = u.negativeSince else { return }
        let deficit = -u.coinBalance
        var amount: Money?
        let t = u.negativeCause.flatMap { c.p.transactions[$0] }
        if let t, let money = t.refundedAmount ?? t.price {
            let clawed = t.grants.filter { $0.revokedAt == since && $0.userId == u.userId }
                .reduce(Int64(0)) { s, g in
                    let units = g.entitlement.units(quantity: g.quantity)
                    return s + (units.unit == "coins" ? units.count : 0)
                }
            if clawed > 0 { amount = prorate(money, min(deficit, clawed), clawed) }
        }
        let cause = t.map { "the clawback of transaction \($0.transactionId)" } ?? "a spend"
        c.add(.negativeBalance, t?.channel, user: u.userId, order: t?.orderId, tx: t?.transactionId, [since], amount,
              "User \(u.userId) has a coin balance of \(u.coinBalance), below zero since \(cause) at position \(since).")
    }
}
