import LedgerCore

/// The audit (docs/domain.md) over the projections (chain-broken is the store's).
public enum Audit {}

extension Audit {
    /// Every audit finding except chain-broken, from the fold of a log (or of a
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
    /// **Owner** of a transaction: the user a TransactionTransferred of it moved it to; else, for a
    /// renewal, the subscription's owner (the user its original transaction is bound to, until a
    /// TransactionTransferred of the original or of any period moves the subscription; as of each
    /// grant for wrong-user), whatever a weaker binding of the renewal's own made after the
    /// subscription's says (a restore on a second account is a presentation to that account, not
    /// a move), when the store signed no token of the renewal's own (``Context/bySubscription(_:)``);
    /// else its first TransactionBound's user, unless that binding is weaker than a token and the
    /// store-signed token names another user's order (``Context/signedOrder(contradicting:of:)``);
    /// else the order the token names: Apple's appAccountToken, Google's
    /// obfuscatedExternalAccountId or WeChat's out_trade_no, as an order's id or the token it was
    /// minted with (several: the smallest order id); else (per grant) the user of the order the
    /// grant names.
    ///
    /// **Owed units**: ``Projections/owedGranted(_:)`` (catalogue in force at the purchase, the period
    /// the store signed for a subscription, net of refunds and store revocations; a partial refund
    /// takes back its share of the units, rounded down).
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
        // In place: iterating a table copies each view out first.
        p.transactions.forEachInPlace(readAhead: readAhead) { _, t in
            // Sandbox purchases are shown apart and judged by no rule.
            guard !t.isSandbox else { return }
            // Fast path: the common clean transaction allocates nothing (no grant list, no
            // owed-versus-granted unless a rule needs it).
            let active = t.activeGrantCount == t.grants.count ? t.grants : t.activeGrants
            grantWithoutPayment(t, active, &c)
            doubleGrant(t, active, &c)
            missingGrant(t, active, &c)
            refundNotRevoked(t, active, &c)
            revokedWithoutRefund(t, &c)
            wrongUser(t, active, &c)
            orphanPayment(t, &c)
            receiptReused(t, &c)
            subscriptionDrift(t, active, &c)
            unacknowledgedPurchase(t, &c)
        }
        p.orders.forEachInPlace(readAhead: readAhead) { _, o in
            productMismatch(o, &c)
            staleOrder(o, &c)
        }
        p.users.forEachInPlace(readAhead: readAhead) { _, u in negativeBalance(u, &c) }
        reconcile(&c)
        untranslatedNotifications(p, &c)
        c.findings.sort()
        return c.findings
    }

    /// Spilled pages of views read back at once, ahead of the one the rules go through. The rules
    /// go through one table at a time once the log is read, with the cores to themselves; with one
    /// page ahead they waited on its reader (a 10 M-fact audit kept to 64 MiB: 9.4 s after the log
    /// was read, 5.7 s with two).
    static let readAhead = 2

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
            guard let channel = t.channel, let id = t.productId, let defs = catalogue[channel]?[id], !defs.isEmpty
            else { return nil }
            guard let time = t.purchaseDate else { return defs.last?.entitlement }
            return (defs.last(where: { $0.validFrom <= time }) ?? defs.first)?.entitlement
        }

        /// `now > start + window`, in log time.
        func passed(_ start: Timestamp?, _ window: Duration) -> Bool {
            guard let start, let now = p.logTime else { return false }
            return now.microseconds - start.microseconds > window.microseconds
        }

        /// The owner of `t` (see ``Audit/run(_:options:)``) without the per-grant order fallback,
        /// and what proves it (``position(of:)``).
        mutating func owner(_ t: TransactionView, at position: Int64 = .max) -> Owner? {
            if let m = t.transfers.last(where: { $0.position < position }) {
                return Owner(user: m.toUserId, proof: .position(m.position))
            }
            // A renewal the store signed nothing of its own for is its subscription's: a weaker
            // binding to another user made after the subscription's (a restore while signed in to
            // a second account, bound created-after-payment) presents it to that user
            // (receipt-reused) and does not move it; a TransactionTransferred does.
            if let b = t.bindings.first, bySubscription(t), let o = subscriptionOwner(t, at: position),
                let since = self.position(of: o.proof), since < b.position
            {
                return o
            }
            if let b = t.bindings.first {
                // The store signed the token: a weaker binding to another user does not outweigh it.
                if let signed = signedOrder(contradicting: b, of: t) {
                    return Owner(user: signed.user, proof: .position(signed.first))
                }
                return Owner(user: b.userId, proof: .position(b.position))
            }
            if let o = subscriptionOwner(t, at: position) { return o }
            if let id = order(named: t.accountToken),
                let (user, first) = p.orders.with(id, { ($0.userId, $0.positions.first) }),
                let user
            {
                return Owner(user: user, proof: .position(first))
            }
            return nil
        }

        /// Whether `t` is judged as a period of its subscription, whoever a binding of its own
        /// names: a renewal of a subscription whose owner is known (the fold gives none to one
        /// signed with another token than its original's), unsigned
        /// (``TransactionView/isUnsignedRenewal``) or unbound.
        func bySubscription(_ t: TransactionView) -> Bool {
            t.isRenewal && t.subscriptionUserId != nil && (t.isUnsignedRenewal || t.bindings.isEmpty)
        }

        /// The owner, just before `position`, of the subscription `t` is a period of (the fold
        /// keeps its owner now on each period, as `subscriptionUserId`): the user its original
        /// transaction is bound to, until a move.
        func subscriptionOwner(_ t: TransactionView, at position: Int64) -> Owner? {
            guard let user = t.subscriptionUserId else { return nil }
            guard let c = t.channel, let orig = t.originalTransactionId else {
                return Owner(user: user, proof: .position(nil))
            }
            // A subscription that moved: its owner then, not now (few subscriptions ever move); when
            // nothing says who held it then, the order its token names, as for any purchase.
            if !p.subscriptionOwners.isEmpty, let owners = p.subscriptionOwners[Projections.subscriptionKey(c, orig)] {
                guard let o = owners.owner(before: position) else { return nil }
                return Owner(
                    user: o.userId, proof: o.position.map { .position($0) } ?? .originalBinding(t.channel, t.app, orig))
            }
            return Owner(user: user, proof: .originalBinding(t.channel, t.app, orig))
        }

        /// The order the store-signed token of `t` names (Apple's appAccountToken, Google's
        /// obfuscatedExternalAccountId, WeChat's out_trade_no), when `b`, a binding by anything weaker than a token (a
        /// hint, the sku fallback, an order made after payment, by hand), gave the transaction to
        /// another user. Most bindings with a token are made by it; a token that names none of our
        /// orders (Google's account id as a hash of the user's, as Google advises) decides nothing.
        mutating func signedOrder(
            contradicting b: BindingRecord, of t: TransactionView
        ) -> (
            order: String, user: String, first: Int64?
        )? {
            // In memory first (the orders' keys and the index of tokens); orders read back only when
            // the token names another order than the bound one, which may carry the same token.
            guard let token = t.accountToken, !b.method.isSignedToken, let id = order(named: token), id != b.orderId,
                let (user, first) = p.orders.with(id, { ($0.userId, $0.positions.first) }), let user, user != b.userId,
                (b.orderId.flatMap { p.orders.with($0, { $0.accountToken?.lowercased() }) ?? nil })
                    != token.lowercased()
            else { return nil }
            return (id, user, first)
        }

        /// A transaction's owner, and where the proof of it lies.
        struct Owner {
            var user: String
            var proof: Proof
        }

        /// A position, or a renewal's: the first binding of its original transaction, looked up only
        /// when a finding names it. (Every renewal's owner is asked for; looking its original up
        /// each time read most of a limited fold's spilled transactions back one by one: 415,000
        /// reads of a 10-million-fact audit kept to 64 MiB.)
        enum Proof {
            case position(Int64?)
            case originalBinding(Channel?, String?, String)
        }

        func position(of proof: Proof) -> Int64? {
            switch proof {
            case .position(let p): p
            case .originalBinding(let channel, let app, let id):
                p.withTransaction(channel, app, id) { $0.bindings.first?.position } ?? nil
            }
        }

        /// accountToken (lowercased) -> the first order (by id) minted with it.
        mutating func buildTokenOrders() {
            var index: [String: String] = [:]
            p.orders.forEachInPlace(readAhead: readAhead) { _, o in
                guard let tok = o.accountToken?.lowercased() else { return }
                if let seen = index[tok], seen < o.orderId { return }
                index[tok] = o.orderId
            }
            tokenOrders = index
        }

        /// The order a statement line names: our order id (WeChat out_trade_no), or the token an
        /// order was minted with (Apple appAccountToken, Google obfuscatedExternalAccountId), read
        /// as that order's id; else the line's value as given.
        mutating func order(named value: String?) -> String? {
            guard let value else { return nil }
            if p.orders.contains(value) { return value }
            if tokenOrders == nil { buildTokenOrders() }
            return tokenOrders?[value.lowercased()] ?? value
        }

        func orderPrice(_ orderId: String?) -> Money? { orderId.flatMap { p.orders.with($0, \.price) ?? nil } }

        /// `app`: the app that tells the transaction from another with its id that came first
        /// (``TransactionView/keyApp``), in the finding's key: two apps' findings about one id are
        /// two, and the first's keep the keys they had before the second came.
        mutating func add(
            _ kind: FindingKind, _ channel: Channel?, user: String?, order: String?, tx: String?, app: String? = nil,
            _ positions: [Int64?], _ amount: Money?, _ detail: String
        ) {
            findings.append(
                Finding(
                    kind: kind, channel: channel, userId: user, orderId: order, transactionId: tx, app: app,
                    positions: Array(Set(positions.compactMap { $0 })), amountAtRisk: amount, detail: detail))
        }
    }

    static func times(_ m: Money?, _ n: Int) -> Money? {
        guard let m else { return nil }
        return Money(
            minorUnits: m.minorUnits.multipliedSaturated(by: Int64(n)), fraction: Int64(m.fraction) * Int64(n),
            currency: m.currency)
            ?? Money(minorUnits: .max, currency: m.currency)
    }

    /// `m * num / den`, rounded up, and never more than `m` (a share of it).
    static func prorate(_ m: Money, _ num: Int64, _ den: Int64) -> Money {
        guard den > 0, num < den else { return m }
        return scaled(m, num, den)
    }

    /// `units * num / den` rounded down, for `0 <= num <= den`: a share never larger than `units`.
    public static func share(_ units: Int64, _ num: Int64, _ den: Int64) -> Int64 {
        guard den > 0, num > 0, units > 0 else { return 0 }
        guard num < den else { return units }
        let product = units.magnitude.multipliedFullWidth(by: UInt64(num))
        return Int64(UInt64(den).dividingFullWidth(product).quotient)
    }

    /// `m * num / den`, rounded up, for any `num >= 0` (an excess may be several prices); held at
    /// `Int64.max` instead of overflowing.
    static func scaled(_ m: Money, _ num: Int64, _ den: Int64) -> Money {
        guard m.isWholeMinorUnits else {
            // An inexact store amount: exactly, in millionths of a minor unit, rounded up to one.
            guard den > 0, num > 0, m.minorUnits >= 0, m.fraction > 0 || m.minorUnits > 0 else {
                return Money(minorUnits: 0, currency: m.currency)
            }
            let whole = scaled(
                Money(
                    minorUnits: m.minorUnits.multipliedSaturated(by: 1_000_000).addingSaturated(Int64(m.fraction)),
                    currency: m.currency), num, den)
            return Money(
                minorUnits: whole.minorUnits / 1_000_000, fraction: whole.minorUnits % 1_000_000, currency: m.currency)
                ?? whole
        }
        guard den > 0, num > 0, m.minorUnits > 0 else { return Money(minorUnits: 0, currency: m.currency) }
        let product = m.minorUnits.magnitude.multipliedFullWidth(by: UInt64(num))
        guard product.high < UInt64(den) else { return Money(minorUnits: .max, currency: m.currency) }
        let (q, r) = UInt64(den).dividingFullWidth(product)
        let v = q.addingReportingOverflow(r == 0 ? 0 : 1)
        return Money(
            minorUnits: v.overflow || v.partialValue > UInt64(Int64.max) ? .max : Int64(v.partialValue),
            currency: m.currency)
    }

    /// The money the buyer paid and kept: the price less what was refunded (same currency).
    static func netPaid(_ t: TransactionView) -> Money? {
        guard let price = t.price else { return nil }
        guard let r = t.refundedAmount, r.currency == price.currency else { return price }
        guard let net = price.adding(r.negated), net.minorUnits >= 0, net.fraction >= 0 else {
            return Money(minorUnits: 0, currency: price.currency)
        }
        return net
    }
}
