import LedgerCore
import LedgerFoldStore

/// The audit rules of subscriptions: time granted against time paid.
extension Audit {
    /// **subscription-drift**: a verified transaction of a subscription or period product (the
    /// catalogue gives days of an entitlement), not refunded and not store-revoked, with exactly
    /// one active grant whose (unit, units left after partial revocations) differs from what is
    /// owed: the period the store signed, `[purchaseDate, expiresDate)` in whole days, ended early by
    /// an immediate upgrade (the catalogue's days only when the store gave no expiry); e.g. 7 days of
    /// vip for a 30-day month, the old plan's full month kept after an upgrade, or days of another
    /// entitlement. No grant is missing-grant, two or more is
    /// double-grant. No window. User: the owner, else the grantee; positions: the verification and
    /// the grant; amount: price x |granted - owed| / owed days, rounded up (the whole price when the
    /// unit differs or more than twice is granted).
    ///
    /// Several active grants of which one was partly taken back (a move to another user with the
    /// remaining days) are judged together, by the days left in them; positions: the verification
    /// and every active grant.
    static func subscriptionDrift(_ t: TransactionView, _ active: Few<GrantRecord>, _ c: inout Context) {
        guard t.verified, !active.isEmpty, t.refundState != .refunded, t.storeRevokedPosition == nil,
            let e = c.entitlement(t), e.periodEntitlement != nil
        else { return }
        let owed = t.owedUnits(of: e)
        let g = active[0]
        var got = (unit: g.units.unit, count: g.unitsLeft)
        if active.count > 1 {
            guard let part = partlyTakenBack(t, active, c) else { return }
            got = (part.unit, part.left)
        }
        guard got != owed else { return }
        // Grace up to its end may be granted too: the days from this period's end to the end of the
        // grace that followed it, and, for a period recovered in grace at the recovery's time, the
        // grace days before it, which the renewal paid for.
        if got.unit == owed.unit, got.count > owed.count, got.count <= owed.count.addingSaturated(graceAllowed(t, c)) {
            return
        }
        let amount: Money?
        if got.unit == owed.unit, let revenue = t.revenue {
            amount = prorate(revenue, abs(got.count - owed.count), owed.count)
        } else {
            amount = t.revenue
        }
        let grants =
            active.count == 1
            ? "grant \(g.grantId) gave" : "grants \(active.map(\.grantId).joined(separator: ", ")) leave"
        c.add(
            .subscriptionDrift, t.channel, user: c.owner(t)?.user ?? g.userId, order: t.orderId, tx: t.transactionId,
            app: t.keyApp,
            [t.verifiedPosition] + active.map(\.position), amount,
            "Transaction \(t.transactionId) (\(t.productId ?? "?")) paid for \(owed.count) \(owed.unit) but \(grants) \(got.count) \(got.unit)."
        )
    }
}

extension Audit {
    /// The days of grace a grant of `t` may hold beyond its period: those after it
    /// (``graceDays(after:_:_:)``) and, for a renewal recovered inside a grace, those before it
    /// (``graceDays(before:_:_:usedUntil:)``) that the period before did not take. One read of the
    /// subscription (it may be spilled); 0 without one.
    static func graceAllowed(_ t: TransactionView, _ c: Context) -> Int64 {
        guard let channel = t.channel, let orig = t.originalTransactionId,
            let (graces, periods) = c.p.subscriptions.with(
                Projections.subscriptionKey(channel, orig), { ($0.graces, $0.periods) }),
            !graces.isEmpty
        else { return 0 }
        let before = graceDays(before: t, graces, periods) { period in
            c.p.transactions.with(period.transactionId) { graceTaken(by: $0, graces, periods, c) } ?? nil
        }
        return graceDays(after: t, graces, periods).addingSaturated(before)
    }

    /// Until when the grant of `t` holds grace after its period: its end plus the days granted
    /// beyond what it paid for and the grace days before it, as far as the grace after it allows them
    /// (days beyond that are its own finding). Nil when it takes none, or when its grants are not one plain grant of its unit
    /// (no grant, or several: findings of their own).
    static func graceTaken(
        by t: TransactionView, _ graces: [SubscriptionView.Grace], _ periods: [SubscriptionView.Period], _ c: Context
    ) -> Timestamp? {
        guard t.verified, let end = t.expiresDate, let e = c.entitlement(t), e.periodEntitlement != nil else {
            return nil
        }
        let active = t.activeGrants
        guard active.count == 1 else { return nil }
        let owed = t.owedUnits(of: e)
        guard active[0].units.unit == owed.unit, active[0].unitsLeft > owed.count else { return nil }
        // Its grant holds the grace days before it first (a period recovered in grace, dated from
        // the recovery), then those after it.
        let beyond = active[0].unitsLeft - owed.count - graceDays(before: t, graces, periods)
        let days = min(beyond, graceDays(after: t, graces, periods))
        guard days > 0 else { return nil }
        return Timestamp(microsecondsSince1970: end.microseconds.addingSaturated(days.multipliedSaturated(by: day)))
    }

    /// A day, in microseconds.
    static let day: Int64 = 86_400_000_000

    /// The days of grace the store signed after `t`'s period, rounded up; 0 when none. A grace
    /// follows the period whose end lies nearest its renewal failure, among those that began by the
    /// failure and end before the grace does (the grace runs past the period it follows): a grace
    /// after a later period is that period's, and allows this one nothing. A recovery that keeps the
    /// renewal date begins at the end of the period the grace followed, and ends further from the
    /// failure than that period does, even inside a long grace (thirty days of grace after a
    /// February); a failure logged late is still nearest the end of the period it followed, once the
    /// recovery after it, which outlasts the grace, is left out.
    static func graceDays(
        after t: TransactionView, _ graces: [SubscriptionView.Grace], _ periods: [SubscriptionView.Period]
    ) -> Int64 {
        guard let start = t.purchaseDate, let end = t.expiresDate else { return 0 }
        var days: Int64 = 0
        for grace in graces where grace.at >= start && grace.until > end {
            func distance(_ e: Timestamp) -> Int64 { abs(e.microseconds - grace.at.microseconds) }
            let nearer = periods.contains {
                $0.transactionId != t.key && $0.purchaseDate <= grace.at && $0.expiresDate < grace.until
                    && distance($0.expiresDate) < distance(end)
            }
            if !nearer { days = max(days, (grace.until.microseconds - end.microseconds + day - 1) / day) }
        }
        return days
    }

    /// The days of grace a renewal recovered in, rounded up; 0 when none. A renewal whose period the
    /// store dates from the recovery (Google does) began inside the grace that followed the period
    /// before it: a recovery in grace keeps the renewal date, so the days from that period's end (or
    /// from the failure, when it came later: a period missing from the log is no grace) to this
    /// one's start are paid by this renewal, but for those the period before was granted already
    /// (`usedUntil`: until when its grant holds grace, ``graceTaken(by:_:_:_:)``): paid once, granted once.
    static func graceDays(
        before t: TransactionView, _ graces: [SubscriptionView.Grace], _ periods: [SubscriptionView.Period],
        usedUntil: (SubscriptionView.Period) -> Timestamp? = { _ in nil }
    ) -> Int64 {
        guard t.isRenewal, let start = t.purchaseDate,
            let before = periods.filter({ $0.transactionId != t.key && $0.expiresDate <= start }).max(by: {
                $0.expiresDate < $1.expiresDate
            }),
            let grace = graces.last(where: {
                $0.at >= before.purchaseDate && $0.at <= start && $0.until >= start && $0.until > before.expiresDate
            })
        else { return 0 }
        // From the renewal date, and never before the failure: a period missing from the log
        // between them is not grace. Nor the days the period before was granted.
        let from = max(before.expiresDate, grace.at, usedUntil(before) ?? grace.at)
        return max(0, (start.microseconds - from.microseconds + day - 1) / day)
    }
}

extension Audit {
    /// How many subscriptions are in each state as the stores last signed it (`active`, `grace`,
    /// `on-hold`, `expired(billing-retry)`...): the report's summary of the subscription lifecycle.
    public static func subscriptionStates(_ p: Projections) -> [String: Int64] {
        var out: [String: Int64] = [:]
        p.subscriptions.forEachInPlace { _, s in out[s.status.description, default: 0] += 1 }
        return out
    }
}
