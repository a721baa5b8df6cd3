import LedgerCore

// Money returned to the buyer, the store's notices around it, and what fulfilment took back.

/// RefundRequested, RefundDeclined and RefundReversed: a transaction and the notification that said so.
@PublicInit
public struct RefundNotice: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    public var notificationId: String?
    /// The refund it is about (a reversal names the refund it undoes when the store says which).
    public var refundId: String?
    /// The store's time of the notice: refunds and reversals apply in the store's order.
    public var signedAt: Timestamp?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        RefundNotice(channel: .appstore, transactionId: ""),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId),
            .optionalText("notificationId", \.notificationId, "The store notification that said so."),
            .optionalText("refundId", \.refundId, "The refund it is about (a reversal names the refund it undoes)."),
            .optionalTimestamp(
                "signedAt", \.signedAt,
                "The store's time of the notice; refunds and reversals apply in the store's order."),
        ] + appFields(\.app, \.merchant))

    static let newInVersion2 = appFieldNames.union(["refundId", "signedAt"])
}

/// WeChat Pay's refund status. Only SUCCESS returns money; a refund without a status is a success.
public struct RefundStatus: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let success = RefundStatus(raw: "SUCCESS")
    public static let processing = RefundStatus(raw: "PROCESSING")
    public static let abnormal = RefundStatus(raw: "ABNORMAL")
    public static let closed = RefundStatus(raw: "CLOSED")
    public static let known: [RefundStatus] = [.success, .processing, .abnormal, .closed]
}

/// Money returned to the buyer, in full or in part (or, with a WeChat status other than SUCCESS, a
/// refund under way or failed: no money returned).
@PublicInit
public struct Refunded: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    public var refundId: String
    public var amount: Money
    public var refundedAt: Timestamp
    public var reason: String?
    /// WeChat Pay's refund status; absent: a refund that happened.
    public var status: RefundStatus?
    public var app: String?
    public var merchant: String?

    /// Whether money was returned (WeChat PROCESSING, ABNORMAL and CLOSED are not refunds).
    public var returnedMoney: Bool { status.map { $0 == .success } ?? true }

    public static let fields = FieldTable(
        Refunded(channel: .appstore, transactionId: "", refundId: "", amount: .blank, refundedAt: .blank),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId),
            .text("refundId", \.refundId),
            .object("amount", \.amount, "The amount returned."),
            .timestamp("refundedAt", \.refundedAt),
            .optionalText("reason", \.reason),
            .optionalOpen("status", \.status, "WeChat Pay's refund status; only SUCCESS (or no status) returns money."),
        ] + appFields(\.app, \.merchant))
}

/// What fulfilment actually took back: whole grants, or part of one (`units`).
@PublicInit
public struct EntitlementRevoked: FactBody {
    public var userId: String
    public var channel: Channel?
    /// The transaction whose grants are taken back; nil for a grant without a transaction (named by `grantId`).
    public var transactionId: String?
    public var reason: RevocationReason
    public var grantId: String?
    /// Part of a grant: this many of its units (coins, days); nil: whole grants.
    public var units: Int64?
    /// Our id for this revocation, so that several partial ones of one transaction are told apart.
    public var revocationId: String?
    /// The transaction's app: a transaction id is unique per channel and app only.
    public var app: String?

    public static let fields = FieldTable(
        EntitlementRevoked(userId: "", transactionId: nil, reason: .refund),
        [
            .text("userId", \.userId),
            .optionalChannel("channel", \.channel),
            .optionalText(
                "transactionId", \.transactionId,
                "The transaction whose grants are taken back; absent for a grant without one (then grantId names it)."),
            .open("reason", \.reason, "Why it was taken back."),
            .optionalText("grantId", \.grantId),
            .optionalInt(
                "units", \.units, min: 1, max: 1_000_000_000_000,
                "Part of a grant: this many of its units (coins, days); absent: whole grants."),
            .optionalText(
                "revocationId", \.revocationId, "Our id for this revocation (several partial ones of one transaction)."),
            .optionalText(
                "app", \.app,
                "The transaction's app: the revocation takes back only grants of the transaction of that channel and app. Absent (older revocations): the transaction of that id whose channel does not contradict it."
            ),
        ])

    /// Version 1: a transaction was required; whole grants only.
    static let version1 = FieldTable(
        fields.blank,
        fields.removing(["units", "revocationId", "app"]).fields.map {
            $0.name == "transactionId" ? .requiredText("transactionId", \.transactionId) : $0
        })
}

extension FactTypes {
    public static let refundRequested = FactType<RefundNotice>(
        "RefundRequested", "A refund was requested (Apple CONSUMPTION_REQUEST, Google pending review).",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:notification:<notificationId>:refund-requested",
        older: [
            .without(
                RefundNotice.newInVersion2, "A refund was requested (Apple CONSUMPTION_REQUEST, Google pending review)."
            )
        ],
        wrap: Fact.refundRequested, summary: { "refund requested for tx \($0.transactionId)" })

    public static let refundDeclined = FactType<RefundNotice>(
        "RefundDeclined", "The store declined a refund request.",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:notification:<notificationId>:refund-declined",
        older: [.without(RefundNotice.newInVersion2, "The store declined a refund request.")],
        wrap: Fact.refundDeclined, summary: { "refund declined for tx \($0.transactionId)" })

    public static let refunded = FactType<Refunded>(
        "Refunded",
        "Money was returned to the buyer, in full or in part (a WeChat status other than SUCCESS: no money returned yet).",
        stream: "<channel>:tx:<transactionId>[@<app>]",
        key: "<channel>:tx:<transactionId>[@<app>]:refund:<refundId>:<status>",
        orKeys: ["<channel>:tx:<transactionId>[@<app>]:refund:<refundId>"],
        older: [.without(appFieldNames.union(["status"]), "Money was returned to the buyer, in full or in part.")],
        wrap: Fact.refunded,
        summary: { "refunded \($0.amount) of tx \($0.transactionId)" + ($0.reason.map { " (\($0))" } ?? "") })

    public static let refundReversed = FactType<RefundNotice>(
        "RefundReversed", "The refund was undone; the entitlement comes back.",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:notification:<notificationId>:refund-reversed",
        older: [.without(RefundNotice.newInVersion2, "The refund was undone; the entitlement comes back.")],
        wrap: Fact.refundReversed, summary: { "refund of tx \($0.transactionId) reversed" })

    public static let entitlementRevoked = FactType<EntitlementRevoked>(
        "EntitlementRevoked", "What fulfilment actually took back.",
        stream: "user:<userId>", key: "revoke:<channel|any>:<transactionId>[@<app>]:<reason>:<revocationId>",
        orKeys: [
            "revoke:<channel|any>:<transactionId>[@<app>]:<reason>", "revoke-grant:<grantId>:<reason>:<revocationId>",
            "revoke-grant:<grantId>:<reason>",
        ],
        older: [
            OlderVersion(fields: EntitlementRevoked.version1, about: "What fulfilment actually took back."),
            .without(
                ["app"],
                "What fulfilment actually took back: whole grants of a transaction (or the grant it names), or some of their units."
            ),
        ],
        wrap: Fact.entitlementRevoked,
        summary: { f in
            "revoked " + (f.units.map { "\($0) units of " } ?? "")
                + (f.transactionId.map { "tx \($0)" } ?? "grant \(f.grantId ?? "?")")
                + " from \(f.userId) (\(f.reason.raw))"
        })
}

/// Google Play: a voided purchase (refunded, charged back or revoked by Google, the developer or
/// the buyer). Like Apple REVOKE, the entitlement must be taken back.
@PublicInit
public struct PurchaseVoided: StoreAppFact {
    public var channel: Channel = .googleplay
    /// The Google order id of the purchase.
    public var transactionId: String
    public var purchaseToken: String?
    public var voidedAt: Timestamp
    /// Google `voidedSource`: 0 user, 1 developer, 2 Google.
    public var voidedSource: String?
    /// Google `voidedReason`: 0 other ... 7 chargeback, 8 ... .
    public var voidedReason: String?
    /// Google `refundType` 2: part of the quantity was voided.
    public var voidedQuantity: Int64?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        PurchaseVoided(transactionId: "", voidedAt: .blank),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId, "The Google order id of the purchase."),
            .optionalText("purchaseToken", \.purchaseToken),
            .timestamp("voidedAt", \.voidedAt, "Google voidedTimeMillis."),
            .optionalText("voidedSource", \.voidedSource, "Google voidedSource (0 user, 1 developer, 2 Google)."),
            .optionalText("voidedReason", \.voidedReason, "Google voidedReason (e.g. 7 chargeback)."),
            .optionalInt(
                "voidedQuantity", \.voidedQuantity, min: 1, max: 10_000,
                "For a partial void (refundType 2): the quantity voided."),
        ] + appFields(\.app, \.merchant))
}

extension FactTypes {
    public static let purchaseVoided = FactType<PurchaseVoided>(
        "PurchaseVoided",
        "Google Play voided a purchase (refund, chargeback or revocation): its entitlement must be taken back.",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:tx:<transactionId>[@<app>]:voided",
        wrap: Fact.purchaseVoided,
        summary: {
            "voided tx \($0.transactionId)" + ($0.voidedQuantity.map { " (\($0) units)" } ?? "")
                + " at \($0.voidedAt.iso8601)"
        })
}

/// The store took a purchase back without (or beside) a refund: Apple REVOKE (family sharing
/// withdrawn) or Google SUBSCRIPTION_REVOKED. Fulfilment is expected to revoke it.
@PublicInit
public struct StoreRevoked: StoreAppFact {
    public var channel: Channel
    /// Apple originalTransactionId, Google purchase token.
    public var originalTransactionId: String
    /// The transaction taken back; absent (Google), the period running at `revokedAt`.
    public var transactionId: String?
    public var notificationId: String
    public var revokedAt: Timestamp
    /// Apple revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE), Google SUBSCRIPTION_REVOKED.
    public var revocationType: String?
    /// Apple revocationReason (0: other, 1: an issue in the app).
    public var reason: String?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        StoreRevoked(channel: .appstore, originalTransactionId: "", notificationId: "", revokedAt: .blank),
        [
            .channel("channel", \.channel),
            .text(
                "originalTransactionId", \.originalTransactionId, "Apple originalTransactionId, Google purchase token."),
            .optionalText(
                "transactionId", \.transactionId, "The transaction taken back; absent, the period running at revokedAt."
            ),
            .text("notificationId", \.notificationId),
            .timestamp("revokedAt", \.revokedAt),
            .optionalText(
                "revocationType", \.revocationType,
                "Apple revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE), Google SUBSCRIPTION_REVOKED."),
            .optionalText("reason", \.reason, "Apple revocationReason."),
        ] + appFields(\.app, \.merchant))
}

extension FactTypes {
    public static let storeRevoked = FactType<StoreRevoked>(
        "StoreRevoked",
        "The store took a purchase back (Apple REVOKE, Google SUBSCRIPTION_REVOKED): fulfilment is expected to revoke it.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:revoked",
        wrap: Fact.storeRevoked,
        summary: { f in
            "store revoked \(f.transactionId.map { "tx \($0)" } ?? "the current period of \(f.originalTransactionId)")"
                + (f.revocationType.map { " (\($0))" } ?? "")
        })
}
