import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

/// Subscription states as the stores sign them, and what the audit expects of each
/// (docs/domain.md, the stores' signed word).
@Suite("Subscriptions: lifecycle states")
struct LifecycleTests {
    static let day: Int64 = 86_400

    /// A month of vip bought, bound and granted for its 30 days (or `granting` days).
    static func paidMonth(_ h: inout History, granting days: Int64 = 30) {
        h.order("o1", "u1", "vip.month")
        h.verify("m1", "vip.month", original: "m1", days: 30)
        h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", .period(entitlement: "vip", days: days), order: "o1")
    }

    /// m1's vip month verified now, in `environment` and `ownership`.
    static func verifiedMonth(_ h: inout History, _ environment: StoreEnvironment, _ ownership: Ownership = .purchased)
    {
        h.add(
            .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: "m1", originalTransactionId: "m1", productId: "vip.month",
                    purchaseDate: h.now,
                    expiresDate: Timestamp(microsecondsSince1970: h.now.microseconds + 30 * Self.day * 1_000_000),
                    environment: environment, ownership: ownership, price: h.price("vip.month"))))
    }

    /// A renewal of m1's vip month, `tx`, for the period the store signed: `from` to `to`.
    static func renewal(_ h: inout History, _ tx: String, from: Timestamp, to: Timestamp) {
        h.add(
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: "m1", transactionId: tx, productId: "vip.month",
                    purchaseDate: from, expiresDate: to, price: h.price("vip.month"))))
    }

    /// m1's month granted `first` days; its renewal failed into sixteen days of grace and was
    /// recovered three days in, as m2, dated from the recovery to the month's end (27 days) and
    /// granted `second` days.
    static func recoveredInGrace(granting first: Int64 = 30, then second: Int64) throws -> History {
        var h = History()
        paidMonth(&h, granting: first)
        let end = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
        h.renewalFailed("n-grace", graceUntil: days(16, after: end), after: 30 * day + 3_600)
        h.wait(hours: 72)
        renewal(&h, "m2", from: days(3, after: end), to: days(30, after: end))
        h.grant("g2", "u1", "m2", .period(entitlement: "vip", days: second))
        return h
    }

    /// `d` days after `end`.
    static func days(_ d: Int64, after end: Timestamp) -> Timestamp {
        Timestamp(microsecondsSince1970: end.microseconds + d * day * 1_000_000)
    }

    static func state(
        _ h: inout History, _ change: LifecycleChange, at: Timestamp? = nil, expires: Timestamp? = nil, id: String
    ) {
        h.add(
            .subscriptionStateChanged(
                SubscriptionStateChanged(
                    channel: .appstore, originalTransactionId: "m1", notificationId: id, change: change,
                    effectiveAt: at ?? h.now, expiresAt: expires)))
    }

    static func subscription(_ h: History) -> SubscriptionView? { h.fold().subscriptions["appstore:m1"] }

    @Test("grace keeps access to its end; billing retry, on hold, a pause and a revocation end it")
    func statesAndAccess() throws {
        var h = History()
        Self.paidMonth(&h)
        let paidUntil = try #require(Self.subscription(h)?.expiresAt)
        #expect(Self.subscription(h)?.status == .active && Self.subscription(h)?.accessUntil == paidUntil)
        h.renewalFailed(
            "n-grace", graceUntil: Timestamp(microsecondsSince1970: paidUntil.microseconds + 16 * Self.day * 1_000_000),
            after: 30 * Self.day)
        #expect(Self.subscription(h)?.status == .grace)
        #expect(
            Self.subscription(h)?.accessUntil
                == Timestamp(microsecondsSince1970: paidUntil.microseconds + 16 * Self.day * 1_000_000))
        Self.state(&h, .graceEnded, id: "n-ended")
        #expect(Self.subscription(h)?.status == .billingRetry && Self.subscription(h)?.accessUntil == paidUntil)
        Self.state(&h, .onHold, id: "n-hold")
        #expect(Self.subscription(h)?.status == .onHold && Self.subscription(h)?.accessUntil == paidUntil)
        Self.state(&h, .resumed, id: "n-back")
        #expect(Self.subscription(h)?.status == .active)
        let pausedAt = h.now
        Self.state(&h, .paused, id: "n-pause")
        #expect(
            Self.subscription(h)?.status == .paused && Self.subscription(h)?.accessUntil == min(paidUntil, pausedAt))
        h.add(
            .storeRevoked(
                StoreRevoked(
                    channel: .appstore, originalTransactionId: "m1", transactionId: "m1", notificationId: "n-revoke",
                    revokedAt: h.now, revocationType: "FAMILY_REVOKE")))
        #expect(Self.subscription(h)?.status == .revoked)
    }

    @Test("Google's grace notification gives no end: still grace, access to the paid expiry")
    func googleGraceWithoutEnd() {
        var h = History()
        Self.paidMonth(&h)
        h.renewalFailed("n-g", inBillingRetry: false, after: 30 * Self.day)
        #expect(
            Self.subscription(h)?.status == .grace
                && Self.subscription(h)?.accessUntil == Self.subscription(h)?.expiresAt)
    }

    @Test("time granted to the end of grace is owed; beyond it, or through billing retry, it is drift")
    func graceMayBeGranted() throws {
        for (extra, drift) in [(Int64(0), false), (10, false), (16, false), (17, true)] {
            var h = History()
            h.order("o1", "u1", "vip.month")
            h.verify("m1", "vip.month", original: "m1", days: 30)
            h.bind("m1", "o1", "u1")
            let paidUntil = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
            h.renewalFailed(
                "n-grace",
                graceUntil: Timestamp(microsecondsSince1970: paidUntil.microseconds + 16 * Self.day * 1_000_000))
            h.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 30 + extra), order: "o1")
            #expect(h.kinds().contains("subscription-drift") == drift, "30 + \(extra) days")
        }
        // Without grace (billing retry, on hold), nothing past the paid period is owed.
        var h = History()
        h.order("o1", "u1", "vip.month")
        h.verify("m1", "vip.month", original: "m1", days: 30)
        h.bind("m1", "o1", "u1")
        h.renewalFailed("n-retry")
        Self.state(&h, .onHold, id: "n-hold")
        h.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 40), order: "o1")
        #expect(h.kinds() == ["subscription-drift"])
    }

    @Test(
        "a period's grace is the one after it: a later period's grace allows it nothing, a later failure takes none away"
    )
    func graceBelongsToItsPeriod() throws {
        func history(graceAfterFirst: Bool) throws -> History {
            var h = History()
            Self.paidMonth(&h, granting: 40)
            let firstEnd = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
            func fail(_ id: String, graceFrom end: Timestamp?) {
                h.renewalFailed(
                    id,
                    graceUntil: end.map {
                        Timestamp(microsecondsSince1970: $0.microseconds + 16 * Self.day * 1_000_000)
                    },
                    after: 30 * Self.day)
            }
            fail("n-1", graceFrom: graceAfterFirst ? firstEnd : nil)
            h.renew("m2", original: "m1")
            h.grant("g2", "u1", "m2", vipMonth)
            let secondEnd = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
            fail("n-2", graceFrom: graceAfterFirst ? nil : secondEnd)
            return h
        }
        // 40 days for the first month: allowed by the 16 days of grace after it, though a failure
        // without grace came later; not by the grace after the second month.
        let early = try history(graceAfterFirst: true).audit()
        #expect(early.isEmpty, "\(early)")
        let late = try history(graceAfterFirst: false).audit()
        #expect(late.map(\.kind) == [.subscriptionDrift] && late.first?.transactionId == "m1")
    }

    @Test("a recovery that keeps the renewal date, before a failure logged late, leaves the period its grace")
    func graceWithARecoveryAtTheRenewalDate() throws {
        var h = History()
        Self.paidMonth(&h, granting: 46)
        let end = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
        h.renewalFailed(
            "n-grace", graceUntil: Timestamp(microsecondsSince1970: end.microseconds + 16 * Self.day * 1_000_000),
            after: 30 * Self.day + 3_600)
        Self.renewal(
            &h, "m2", from: end, to: Timestamp(microsecondsSince1970: end.microseconds + 30 * Self.day * 1_000_000))
        h.grant("g2", "u1", "m2", vipMonth)
        #expect(h.kinds() == [])
    }

    @Test("a grace longer than the recovered period after it is still the grace of the period it followed")
    func graceLongerThanTheNextPeriod() throws {
        // Thirty days of grace after a month, recovered at the renewal date into a 28-day February:
        // the month may hold the thirty days; February, which ends inside them, none of them.
        for (first, second, drifting) in [
            (Int64(60), Int64(28), [String]()), (30, 28, []), (61, 28, ["m1"]), (30, 30, ["m2"]),
        ] {
            var h = History()
            Self.paidMonth(&h, granting: first)
            let end = try #require(h.fold().subscriptions["appstore:m1"]?.expiresAt)
            h.renewalFailed("n-grace", graceUntil: Self.days(30, after: end), after: 30 * Self.day + 3_600)
            Self.renewal(&h, "m2", from: end, to: Self.days(28, after: end))
            h.grant("g2", "u1", "m2", .period(entitlement: "vip", days: second))
            let findings = h.audit()
            #expect(findings.allSatisfy { $0.kind == .subscriptionDrift }, "\(findings)")
            #expect(findings.compactMap(\.transactionId) == drifting, "\(first) then \(second) days: \(findings)")
        }
    }

    @Test("two recoveries in grace, each granted from its renewal date, and a failure logged late owe what they hold")
    func recoveriesAndALateFailure() throws {
        // m2 holds the three grace days before it, not after it: m3's three days before it are its own.
        var h = try Self.recoveredInGrace(then: 30)
        let end = try #require(h.fold().transactions["m2"]?.expiresDate)
        h.renewalFailed(
            "n-grace-2", graceUntil: Self.days(7, after: end),
            after: (end.microseconds - h.now.microseconds) / 1_000_000 + 3_600)
        h.wait(hours: 72)
        Self.renewal(&h, "m3", from: Self.days(3, after: end), to: Self.days(30, after: end))
        h.grant("g3", "u1", "m3", .period(entitlement: "vip", days: 30))
        #expect(h.audit().isEmpty, "\(h.audit())")
        // Six days of grace after m1, recovered at the renewal date; the failure logged four weeks
        // late, near the recovered month's end: the grace is still m1's.
        var late = History()
        Self.paidMonth(&late, granting: 36)
        let first = try #require(late.fold().subscriptions["appstore:m1"]?.expiresAt)
        Self.renewal(&late, "m2", from: first, to: Self.days(30, after: first))
        late.grant("g2", "u1", "m2", vipMonth)
        late.renewalFailed("n-grace", graceUntil: Self.days(6, after: first), after: 59 * Self.day)
        #expect(late.audit().isEmpty, "\(late.audit())")
    }

    @Test("a period recovered in grace at the recovery's time owes the grace days before it too")
    func recoveryInGraceAtItsOwnTime() throws {
        // Google dates a recovered period from the recovery, three days into grace; it keeps the
        // renewal date, so the month it ends paid for those three days too.
        for (days, drift) in [(Int64(27), false), (30, false), (31, true)] {
            let h = try Self.recoveredInGrace(then: days)
            #expect(h.kinds().contains("subscription-drift") == drift, "\(days) days")
        }
        // A period missing from the log between the last known one and the failure is no grace:
        // only the three days from the failure count.
        var gap = History()
        Self.paidMonth(&gap)
        let end = try #require(gap.fold().subscriptions["appstore:m1"]?.expiresAt)
        gap.renewalFailed("n-grace", graceUntil: Self.days(46, after: end), after: 60 * Self.day)
        gap.wait(hours: 72)
        Self.renewal(&gap, "m3", from: Self.days(33, after: end), to: Self.days(60, after: end))
        gap.grant("g3", "u1", "m3", .period(entitlement: "vip", days: 57))
        #expect(gap.kinds().contains("subscription-drift"))
    }

    @Test(
        "grace days before a recovery are paid once: granted to the period before, the recovered one may not take them")
    func graceDaysGrantedOnce() throws {
        // The month before got `first` days (30 paid, the rest of its 16 days of grace); the month
        // recovered three days into grace, dated from the recovery, got `second` (27 paid, and the
        // three days before it unless the month before took them).
        for (first, second, drift) in [
            (Int64(30), Int64(30), false), (33, 27, false), (46, 27, false), (33, 30, true), (31, 30, true),
            (31, 29, false), (46, 30, true),
        ] {
            let findings = try Self.recoveredInGrace(granting: first, then: second).audit()
            #expect(
                findings.map(\.kind) == (drift ? [.subscriptionDrift] : []), "\(first) then \(second) days: \(findings)"
            )
            if drift { #expect(findings.first?.transactionId == "m2") }
        }
    }

    @Test("a renewal known only as SubscriptionRenewed is of its subscription's environment and ownership")
    func renewalsKeepTheSubscriptionsTerms() {
        for (environment, ownership) in [(StoreEnvironment.sandbox, Ownership.purchased), (.production, .familyShared)]
        {
            var h = History()
            h.order("o1", "u1", "vip.month")
            Self.verifiedMonth(&h, environment, ownership)
            h.bind("m1", "o1", "u1")
            h.grant("g1", "u1", "m1", vipMonth, order: "o1")
            h.renew("m2", original: "m1")
            let renewal = h.fold().transactions["m2"]
            #expect(renewal?.environment == environment && renewal?.ownership == ownership)
            #expect(renewal?.revenue == nil, "\(environment.raw) \(ownership.raw)")
            // Ungranted for a day: a sandbox renewal is judged by no rule; a family-shared one is still owed.
            h.wait(hours: 25)
            #expect(h.kinds() == (environment == .sandbox ? [] : ["missing-grant"]))
        }
        // The renewal logged before the subscription's purchase takes its terms when the purchase comes.
        var late = History()
        late.renew("m2", original: "m1")
        Self.verifiedMonth(&late, .sandbox)
        #expect(late.fold().transactions["m2"]?.environment == .sandbox)
        #expect(Revenue.compute(late.fold(), by: .day).isEmpty)
        // On Google, where every verification names the purchase token as the original, the same.
        var google = History()
        let week: Int64 = 7 * Self.day * 1_000_000
        let start = google.now
        google.add(
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .googleplay, originalTransactionId: "tok", transactionId: "GPA.1..0",
                    productId: "vip_weekly",
                    purchaseDate: Timestamp(microsecondsSince1970: start.microseconds + week),
                    expiresDate: Timestamp(microsecondsSince1970: start.microseconds + 2 * week),
                    price: Money(minorUnits: 1200, currency: History.cny))))
        google.add(
            .paymentVerified(
                PaymentVerified(
                    channel: .googleplay, transactionId: "GPA.1", originalTransactionId: "tok", productId: "vip_weekly",
                    purchaseDate: start, expiresDate: Timestamp(microsecondsSince1970: start.microseconds + week),
                    environment: .sandbox, price: Money(minorUnits: 1200, currency: History.cny))))
        #expect(google.fold().transactions["GPA.1..0"]?.environment == .sandbox)
        #expect(Revenue.compute(google.fold(), by: .day).isEmpty)
    }

    @Test("a store revocation expects a revocation; taken back, it is clean")
    func storeRevocation() {
        var h = History()
        Self.paidMonth(&h)
        h.add(
            .storeRevoked(
                StoreRevoked(
                    channel: .appstore, originalTransactionId: "m1", transactionId: "m1", notificationId: "n-rev",
                    revokedAt: h.now, revocationType: "FAMILY_REVOKE")))
        h.wait(hours: 1)
        #expect(h.kinds() == ["refund-not-revoked"])
        h.revoke("u1", "m1", .revoke)
        #expect(h.kinds() == [])
    }

    @Test("a renewal extension moves the period's end; a price consent is kept")
    func extensionAndConsent() throws {
        var h = History()
        Self.paidMonth(&h)
        let until = Timestamp(microsecondsSince1970: h.now.microseconds + 40 * Self.day * 1_000_000)
        Self.state(&h, .extended, expires: until, id: "n-ext")
        #expect(Self.subscription(h)?.expiresAt == until)
        h.add(
            .subscriptionStateChanged(
                SubscriptionStateChanged(
                    channel: .appstore, originalTransactionId: "m1", notificationId: "n-price",
                    change: .priceConsent, effectiveAt: h.now, priceConsent: .accepted,
                    newPrice: Money(minorUnits: 3000, currency: History.cny))))
        #expect(Self.subscription(h)?.priceConsent == .accepted && Self.subscription(h)?.newPrice?.minorUnits == 3000)
        #expect(Self.subscription(h)?.status == .active)
    }

    @Test("an untranslated notification is a notice until a later fact completes it")
    func untranslatedUntilCompleted() {
        var h = History()
        h.partialVoidNotice("GPA.1", token: "tok")
        h.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .appstore, notificationId: "n-x", type: NotificationType(raw: "EXTERNAL_PURCHASE_TOKEN"),
                    untranslated: "not translated")))
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.untranslatedNotification, .untranslatedNotification])
        #expect(fs.allSatisfy { $0.severity == .info && $0.amountAtRisk == nil })
        #expect(Set(fs.compactMap(\.transactionId)) == ["GPA.1", "notification:n-x"])
        // A void without a quantity is not a whole void: nothing is owed back yet.
        #expect(h.fold().transactions["GPA.1"]?.storeRevokedPosition == nil)
        h.add(
            .purchaseVoided(
                PurchaseVoided(transactionId: "GPA.1", purchaseToken: "tok", voidedAt: h.now, voidedQuantity: 1)))
        #expect(h.audit().compactMap(\.transactionId) == ["notification:n-x"])
    }

    @Test("a partial void's quantity imported from the Voided Purchases API completes it and is judged")
    func voidedQuantityFromAStatement() {
        var h = History()
        h.add(
            .paymentVerified(
                PaymentVerified(
                    channel: .googleplay, transactionId: "GPA.7", originalTransactionId: "tok7", productId: "coins_60",
                    quantity: 3, purchaseDate: h.now, price: Money(minorUnits: 1800, currency: History.cny))))
        h.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "m-v", type: NotificationType(raw: "VOIDED_PURCHASE"),
                    transactionId: "GPA.7",
                    untranslated: "a partial void without its quantity", awaiting: .voidedQuantity)))
        var line = StatementLine(
            digest: "sha256:00", line: 1, source: .googleplayVoided, kind: .refund, transactionId: "GPA.7", amount: nil,
            at: h.now)
        line.quantity = 1
        h.add(.statementLine(line))
        let p = h.fold()
        #expect(p.untranslated.isEmpty && p.transactions["GPA.7"]?.voidedQuantity == 1)
        // A voided-purchases line for a transaction awaiting nothing changes no transaction.
        var other = line
        other.transactionId = "GPA.8"
        h.add(.statementLine(other))
        #expect(h.fold().transactions["GPA.8"] == nil)
    }

    @Test("a purchase notification awaiting its verification is completed by it")
    func awaitingVerification() {
        var h = History()
        h.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .appstore, notificationId: "n-1", type: NotificationType(raw: "ONE_TIME_CHARGE"),
                    transactionId: "t1",
                    untranslated: "lacks the price", awaiting: .verification)))
        #expect(h.kinds() == ["untranslated-notification"])
        h.order("o1", "u1", "coins_60")
        h.verify("t1", "coins_60")
        h.bind("t1", "o1", "u1")
        h.grant("g1", "u1", "t1", coins60, order: "o1")
        #expect(h.kinds() == [])
        // The backend verified first: the notification arrives complete already, and waits for nothing.
        var first = History()
        first.order("o1", "u1", "coins_60")
        first.verify("t1", "coins_60")
        first.bind("t1", "o1", "u1")
        first.grant("g1", "u1", "t1", coins60, order: "o1")
        first.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .appstore, notificationId: "n-1", type: NotificationType(raw: "ONE_TIME_CHARGE"),
                    transactionId: "t1", untranslated: "lacks the price", awaiting: .verification)))
        #expect(first.kinds() == [] && first.fold().untranslated.isEmpty)
        // A void's quantity logged before its partial-void notification completes it too.
        var void = History()
        void.add(
            .purchaseVoided(
                PurchaseVoided(transactionId: "GPA.1", purchaseToken: "tok", voidedAt: void.now, voidedQuantity: 1)))
        void.partialVoidNotice("GPA.1", token: "tok")
        #expect(void.fold().untranslated.isEmpty)
    }

    @Test("a Google purchase canceled while its payment was pending completes the notices awaiting it")
    func pendingPurchaseCanceled() {
        for (pending, canceled) in [("4", "20"), ("ONE_TIME_PRODUCT_1", "ONE_TIME_PRODUCT_2")] {
            var h = History()
            func notice(_ id: String, _ type: String, tx: String? = nil, waiting: Bool) {
                h.add(
                    .storeNotificationReceived(
                        StoreNotificationReceived(
                            channel: .googleplay, notificationId: id, type: NotificationType(raw: type),
                            transactionId: tx, originalTransactionId: "tok-1",
                            untranslated: waiting ? "the payment is pending" : nil,
                            awaiting: waiting ? .verification : nil)))
            }
            notice("n-1", pending, tx: pending == "4" ? "GPA.1" : nil, waiting: true)
            // Another token's cancellation completes nothing.
            h.add(
                .storeNotificationReceived(
                    StoreNotificationReceived(
                        channel: .googleplay, notificationId: "n-0", type: NotificationType(raw: canceled),
                        originalTransactionId: "tok-2")))
            #expect(h.fold().untranslated.map(\.notificationId) == ["n-1"], "\(pending)")
            notice("n-2", canceled, waiting: false)
            #expect(h.fold().untranslated.isEmpty, "\(pending)")
            // Logged the other way round (Pub/Sub keeps no order): the same.
            var late = History()
            late.add(
                .storeNotificationReceived(
                    StoreNotificationReceived(
                        channel: .googleplay, notificationId: "n-2", type: NotificationType(raw: canceled),
                        originalTransactionId: "tok-1")))
            late.add(
                .storeNotificationReceived(
                    StoreNotificationReceived(
                        channel: .googleplay, notificationId: "n-1", type: NotificationType(raw: pending),
                        transactionId: pending == "4" ? "GPA.1" : nil, originalTransactionId: "tok-1",
                        untranslated: "the payment is pending", awaiting: .verification)))
            #expect(late.fold().untranslated.isEmpty, "\(pending)")
        }
        // A renewal of the token awaiting its verification is no pending purchase: it stays listed.
        var renewal = History()
        renewal.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "n-r", type: NotificationType(raw: "2"),
                    originalTransactionId: "tok-1", untranslated: "the read failed", awaiting: .verification)))
        renewal.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "n-c", type: NotificationType(raw: "20"),
                    originalTransactionId: "tok-1")))
        #expect(renewal.fold().untranslated.map(\.notificationId) == ["n-r"])
    }

    @Test("a one-time purchase notice that names only its purchase token is completed by the verification naming it")
    func awaitingVerificationByToken() {
        var h = History()
        h.add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "n-1", type: NotificationType(raw: "ONE_TIME_PRODUCT_1"),
                    originalTransactionId: "tok-1", untranslated: "the Play Developer API read failed",
                    awaiting: .verification)))
        let verified = PaymentVerified(
            channel: .googleplay, transactionId: "GPA.1", productId: "coins_60", purchaseDate: h.now,
            price: h.price("coins_60"), purchaseToken: "tok-1")
        // Another purchase's token completes nothing.
        var other = verified
        other.transactionId = "GPA.2"
        other.purchaseToken = "tok-2"
        h.add(.paymentVerified(other))
        #expect(h.fold().untranslated.map(\.notificationId) == ["n-1"])
        h.add(.paymentVerified(verified))
        #expect(h.fold().untranslated.isEmpty)
    }

    @Test(
        "a subscription's purchase notice that names only its token is complete when that purchase was verified before it"
    )
    func purchaseNoticeAfterItsVerification() {
        func history(verifyFirst: Bool) -> History {
            var h = History()
            let start = h.now
            let month = Timestamp(microsecondsSince1970: start.microseconds + 30 * Self.day * 1_000_000)
            if verifyFirst {
                h.add(
                    .paymentVerified(
                        PaymentVerified(
                            channel: .googleplay, transactionId: "GPA.1", originalTransactionId: "tok-1",
                            productId: "vip_weekly", purchaseDate: start, expiresDate: month,
                            price: h.price("coins_60"))))
            }
            for (id, type) in [("n-1", "4"), ("n-2", "2")] {
                h.add(
                    .storeNotificationReceived(
                        StoreNotificationReceived(
                            channel: .googleplay, notificationId: id, type: NotificationType(raw: type),
                            originalTransactionId: "tok-1", untranslated: "the Play Developer API read failed",
                            awaiting: .verification)))
            }
            return h
        }
        // The purchase's notice is complete; a renewal's (2) still awaits its own verification.
        #expect(history(verifyFirst: true).fold().untranslated.map(\.notificationId) == ["n-2"])
        #expect(history(verifyFirst: false).fold().untranslated.map(\.notificationId) == ["n-1", "n-2"])
    }
}
