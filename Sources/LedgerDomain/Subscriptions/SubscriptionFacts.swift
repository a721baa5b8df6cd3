import LedgerCore

// Renewals and the store's notices about a subscription (keyed by its original transaction id,
// Google: its purchase token).

@PublicInit
public struct SubscriptionRenewed: StoreAppFact {
    public var channel: Channel
    public var originalTransactionId: String
    public var transactionId: String
    public var productId: String
    public var purchaseDate: Timestamp
    public var expiresDate: Timestamp
    public var price: Money?

    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        SubscriptionRenewed(
            channel: .appstore, originalTransactionId: "", transactionId: "", productId: "", purchaseDate: .blank,
            expiresDate: .blank),
        [
            .channel("channel", \.channel),
            .text("originalTransactionId", \.originalTransactionId),
            .text("transactionId", \.transactionId),
            .text("productId", \.productId),
            .timestamp("purchaseDate", \.purchaseDate),
            .timestamp("expiresDate", \.expiresDate, "Must be after purchaseDate."),
            .optionalObject("price", \.price),
        ] + appFields(\.app, \.merchant),
        check: { f in
            guard f.expiresDate <= f.purchaseDate else { return nil }
            return FactError(
                field: "expiresDate",
                message: "\(f.expiresDate.iso8601) is not after purchaseDate \(f.purchaseDate.iso8601)")
        })
}

/// A store notice about one subscription: the fields every such fact starts with.
protocol SubscriptionNotice: StoreAppFact {
    var channel: Channel { get set }
    var originalTransactionId: String { get set }
    var notificationId: String { get set }
}

extension SubscriptionNotice {
    /// The key paths: the conforming type's own properties (see ``StoreAppFact/appFields(_:_:)``).
    static func noticeFields(
        _ channel: FieldPath<Self, Channel>, _ original: FieldPath<Self, String>,
        _ notification: FieldPath<Self, String>,
        _ app: FieldPath<Self, String?>, _ merchant: FieldPath<Self, String?>,
        _ rest: [FactField<Self>]
    ) -> [FactField<Self>] {
        [
            .channel("channel", channel),
            .text("originalTransactionId", original, "Names the subscription."),
            .text("notificationId", notification),
        ] + rest + appFields(app, merchant)
    }
}

/// A billing problem: grace period (access kept) or billing retry / on hold (no access).
@PublicInit
public struct RenewalFailed: SubscriptionNotice {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var gracePeriodExpiresAt: Timestamp?
    public var inBillingRetry: Bool

    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        RenewalFailed(channel: .appstore, originalTransactionId: "", notificationId: "", inBillingRetry: false),
        noticeFields(
            \.channel, \.originalTransactionId, \.notificationId, \.app, \.merchant,
            [
                .optionalTimestamp("gracePeriodExpiresAt", \.gracePeriodExpiresAt),
                .bool("inBillingRetry", \.inBillingRetry),
            ]))
}

@PublicInit
public struct AutoRenewChanged: SubscriptionNotice {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var enabled: Bool

    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        AutoRenewChanged(channel: .appstore, originalTransactionId: "", notificationId: "", enabled: false),
        noticeFields(
            \.channel, \.originalTransactionId, \.notificationId, \.app, \.merchant, [.bool("enabled", \.enabled)]))
}

/// Upgrade (immediate) or downgrade (at the next renewal) within a subscription group.
@PublicInit
public struct PlanChanged: SubscriptionNotice {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var toProductId: String
    public var effective: PlanChangeEffect

    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        PlanChanged(
            channel: .appstore, originalTransactionId: "", notificationId: "", toProductId: "", effective: .immediate),
        noticeFields(
            \.channel, \.originalTransactionId, \.notificationId, \.app, \.merchant,
            [
                .text("toProductId", \.toProductId),
                .choice(
                    "effective", \.effective, "immediate for an upgrade, next-renewal for a downgrade or crossgrade."),
            ]))
}

@PublicInit
public struct SubscriptionExpired: SubscriptionNotice {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var reason: ExpirationReason

    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        SubscriptionExpired(channel: .appstore, originalTransactionId: "", notificationId: "", reason: .voluntary),
        noticeFields(
            \.channel, \.originalTransactionId, \.notificationId, \.app, \.merchant,
            [.open("reason", \.reason, "Why it expired.")]))
}

extension FactTypes {
    public static let subscriptionRenewed = FactType<SubscriptionRenewed>(
        "SubscriptionRenewed", "A new subscription period was charged.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:tx:<transactionId>[@<app>]:renewed",
        older: [.without(appFieldNames, "A new subscription period was charged.")], wrap: Fact.subscriptionRenewed,
        summary: { "renewed \($0.originalTransactionId) with tx \($0.transactionId) until \($0.expiresDate.iso8601)" })

    public static let renewalFailed = FactType<RenewalFailed>(
        "RenewalFailed", "A billing problem: grace period (access kept) or billing retry / on hold (no access).",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:renewal-failed",
        older: [
            .without(
                appFieldNames, "A billing problem: grace period (access kept) or billing retry / on hold (no access).")
        ],
        wrap: Fact.renewalFailed,
        summary: { f in
            "renewal of \(f.originalTransactionId) failed"
                + (f.gracePeriodExpiresAt.map { ", grace until \($0.iso8601)" } ?? "")
                + (f.inBillingRetry ? ", billing retry" : "")
        })

    public static let autoRenewChanged = FactType<AutoRenewChanged>(
        "AutoRenewChanged", "Auto-renew was switched on or off.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:auto-renew",
        older: [.without(appFieldNames, "Auto-renew was switched on or off.")],
        wrap: Fact.autoRenewChanged,
        summary: { "auto-renew of \($0.originalTransactionId) \($0.enabled ? "on" : "off")" })

    public static let planChanged = FactType<PlanChanged>(
        "PlanChanged", "Upgrade (immediate) or downgrade (at the next renewal) within a subscription group.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:plan",
        older: [
            .without(
                appFieldNames, "Upgrade (immediate) or downgrade (at the next renewal) within a subscription group.")
        ],
        wrap: Fact.planChanged,
        summary: { "\($0.originalTransactionId) changes to \($0.toProductId) (\($0.effective.rawValue))" })

    public static let subscriptionExpired = FactType<SubscriptionExpired>(
        "SubscriptionExpired", "The period ended without renewal.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:expired",
        older: [.without(appFieldNames, "The period ended without renewal.")],
        wrap: Fact.subscriptionExpired, summary: { "\($0.originalTransactionId) expired (\($0.reason.raw))" })
}
