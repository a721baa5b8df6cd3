import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

/// A small history builder: facts in log order, each `step` seconds after the previous one.
/// The clock starts in 2020, years before the wall clock: a window measured by the wall clock
/// would have passed for every fact.
struct History {
    var facts: [(fact: Fact, at: Timestamp)] = []
    var now: Timestamp
    static let cny = Currency("CNY")!

    init(
        start: Timestamp = Timestamp("2020-06-01T08:00:00Z")!,
        products: [String] = ["coins_60", "coins_300", "vip.month"]
    ) {
        now = start
        for id in products { facts.append((.productDefined(Catalogue.definition(id)!), start)) }
    }

    mutating func add(_ f: Fact, after seconds: Int64 = 1) {
        now = Timestamp(microsecondsSince1970: now.microseconds + seconds * 1_000_000)
        facts.append((f, now))
    }
    /// Moves log time on with an unrelated fact (another user's order).
    mutating func wait(minutes: Int64 = 0, hours: Int64 = 0) {
        add(
            .orderCreated(
                OrderCreated(
                    orderId: "other-\(facts.count)", userId: "u-other", channel: .appstore, productId: "coins_60",
                    price: price("coins_60"))), after: (hours * 60 + minutes) * 60)
    }
    var count: Int { facts.count }

    func price(_ product: String) -> Money { Catalogue.definition(product)!.price! }
    func fold(upTo n: Int? = nil) -> Projections {
        var p = Projections()
        for (i, f) in facts.prefix(n ?? facts.count).enumerated() {
            p.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at))
        }
        return p
    }
    func audit(upTo n: Int? = nil, _ options: AuditOptions = AuditOptions()) -> [Finding] {
        Audit.run(fold(upTo: n), options: options)
    }
    func kinds(upTo n: Int? = nil) -> [String] { audit(upTo: n).map(\.kind.rawValue) }
    /// Position (1-based) of the last fact added.
    var last: Int64 { Int64(facts.count) }

    // facts
    mutating func order(_ id: String, _ user: String, _ product: String, token: UUID? = nil) {
        add(
            .orderCreated(
                OrderCreated(
                    orderId: id, userId: user, channel: .appstore, productId: product, price: price(product),
                    accountToken: token?.lowercased)))
    }
    mutating func launch(_ id: String) { add(.paymentLaunched(PaymentLaunched(orderId: id, channel: .appstore))) }
    mutating func close(_ id: String) { add(.orderClosed(OrderClosed(orderId: id, reason: .timeout))) }
    mutating func report(_ user: String, _ tx: String, _ product: String, order: String? = nil) {
        add(
            .clientCallbackReceived(
                ClientCallbackReceived(
                    channel: .appstore, userId: user, orderId: order, transactionId: tx,
                    productId: product, state: .purchased)))
    }
    mutating func verify(
        _ tx: String, _ product: String, original: String? = nil, days: Int64? = nil, token: UUID? = nil
    ) {
        let expires = days.map { Timestamp(microsecondsSince1970: now.microseconds + $0 * 86_400_000_000) }
        add(
            .paymentVerified(
                PaymentVerified(
                    channel: .appstore, transactionId: tx, originalTransactionId: original, productId: product,
                    purchaseDate: now, expiresDate: expires, price: price(product), appAccountToken: token)))
    }
    mutating func failVerification(_ tx: String, code: Int64, retryable: Bool) {
        add(
            .verificationFailed(
                VerificationFailed(channel: .appstore, transactionId: tx, code: code, retryable: retryable)))
    }
    mutating func bind(_ tx: String, _ order: String?, _ user: String, _ method: BindingMethod = .appAccountToken) {
        add(
            .transactionBound(
                TransactionBound(channel: .appstore, transactionId: tx, orderId: order, userId: user, method: method)))
    }
    mutating func grant(_ id: String, _ user: String, _ tx: String, _ entitlement: Entitlement, order: String? = nil) {
        add(
            .entitlementGranted(
                EntitlementGranted(
                    grantId: id, userId: user, channel: .appstore, transactionId: tx, orderId: order,
                    entitlement: entitlement)))
    }
    mutating func revoke(_ user: String, _ tx: String, _ reason: RevocationReason) {
        add(
            .entitlementRevoked(EntitlementRevoked(userId: user, channel: .appstore, transactionId: tx, reason: reason))
        )
    }
    mutating func refund(_ tx: String, _ id: String, _ amount: Money) {
        add(.refunded(Refunded(channel: .appstore, transactionId: tx, refundId: id, amount: amount, refundedAt: now)))
    }
    mutating func reverse(_ tx: String, _ nid: String) {
        add(.refundReversed(RefundNotice(channel: .appstore, transactionId: tx, notificationId: nid)))
    }
    mutating func storeRevoke(_ tx: String, _ nid: String) {
        add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .appstore, notificationId: nid, type: NotificationType(raw: "REVOKE"),
                    transactionId: tx, originalTransactionId: tx)))
    }
    mutating func renew(_ tx: String, original: String) {
        add(
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: original, transactionId: tx, productId: "vip.month",
                    purchaseDate: now,
                    expiresDate: Timestamp(microsecondsSince1970: now.microseconds + 30 * 86_400_000_000),
                    price: price("vip.month"))))
    }
    mutating func transfer(_ tx: String, _ id: String, from: String?, to: String) {
        add(
            .transactionTransferred(
                TransactionTransferred(
                    channel: .appstore, transactionId: tx, transferId: id, fromUserId: from, toUserId: to,
                    method: .supportCorrection, reason: "the buyer's new account", authorizedBy: "support")))
    }
    /// A renewal failure of subscription `m1`, with grace to `graceUntil` when given.
    mutating func renewalFailed(
        _ id: String, graceUntil: Timestamp? = nil, inBillingRetry: Bool = true, after seconds: Int64 = 1
    ) {
        add(
            .renewalFailed(
                RenewalFailed(
                    channel: .appstore, originalTransactionId: "m1", notificationId: id,
                    gracePeriodExpiresAt: graceUntil, inBillingRetry: inBillingRetry)), after: seconds)
    }
    /// Google's partial void of `tx` without its quantity: kept untranslated, awaiting the quantity.
    mutating func partialVoidNotice(_ tx: String, token: String?) {
        add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: .googleplay, notificationId: "m-void", type: NotificationType(raw: "VOIDED_PURCHASE"),
                    subtype: NotificationType(raw: "PARTIAL"), transactionId: tx, originalTransactionId: token,
                    untranslated: "a partial void without its quantity", awaiting: .voidedQuantity)))
    }
    mutating func spend(_ id: String, _ user: String, _ amount: Int64) {
        add(.coinsSpent(CoinsSpent(spendId: id, userId: user, amount: amount)))
    }

    /// `user`'s month of vip: order o1, verified as m1 (its subscription's original), bound and
    /// granted. Returns the binding's position, the proof of who owns the subscription.
    @discardableResult
    mutating func subscribe(_ user: String = "u1") -> Int64 {
        order("o1", user, "vip.month")
        verify("m1", "vip.month", original: "m1", days: 30)
        bind("m1", "o1", user)
        let binding = last
        grant("g1", user, "m1", Catalogue.definition("vip.month")!.entitlement, order: "o1")
        return binding
    }

    /// A clean coins_60 purchase by `user`: order, launch, report, verify, bind, grant.
    mutating func purchase(_ n: Int, _ user: String = "u1", product: String = "coins_60") {
        let o = "o\(n)", t = "t\(n)"
        order(o, user, product)
        launch(o)
        report(user, t, product, order: o)
        verify(t, product)
        bind(t, o, user, .applicationUsername)
        grant("g\(n)", user, t, Catalogue.definition(product)!.entitlement, order: o)
    }
}

let coins60 = Entitlement.coins(60)
let vipMonth = Catalogue.definition("vip.month")!.entitlement
func cny(_ minor: Int64) -> Money { Money(minorUnits: minor, currency: Currency("CNY")!) }
