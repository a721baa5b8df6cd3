import Foundation
import LedgerCore

// What the app and the stores say about a payment, and which order it is bound to.

/// The app reported a store result. Re-delivered on every launch until finished: each report is a fact.
@PublicInit
public struct ClientCallbackReceived: StoreAppFact {
    public var channel: Channel
    /// The signed-in user of the app that reported it; nil when the app was signed out.
    public var userId: String?
    public var orderId: String?
    public var transactionId: String?
    public var productId: String
    public var state: CallbackState
    /// StoreKit 1 `applicationUsername` as the payment carried it (often nil after an interruption).
    public var applicationUsername: String?
    public var deviceId: String?
    public var reportId: String?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        ClientCallbackReceived(channel: .appstore, userId: nil, productId: "", state: .purchased),
        [
            .channel("channel", \.channel),
            .optionalText(
                "userId", \.userId,
                "The signed-in user of the app that reported it; absent when the app was signed out."),
            .optionalText("orderId", \.orderId),
            .optionalText("transactionId", \.transactionId),
            .text("productId", \.productId),
            .open("state", \.state, "The store result the app saw."),
            .optionalText(
                "applicationUsername", \.applicationUsername,
                "StoreKit 1 applicationUsername as the payment carried it."),
            .optionalText("deviceId", \.deviceId),
            .optionalText("reportId", \.reportId, "The client's id for this report."),
        ] + appFields(\.app, \.merchant))

    /// Version 1: the user was required and there was no app.
    static let version1 = FieldTable(
        ClientCallbackReceived(channel: .appstore, userId: nil, productId: "", state: .purchased),
        fields.removing(appFieldNames).fields.map {
            $0.name == "userId"
                ? .requiredText("userId", \.userId, "The signed-in user of the app that reported it.") : $0
        })
}

/// A verified server-to-server notification. A re-delivery is the same fact (same notificationId).
@PublicInit
public struct StoreNotificationReceived: StoreAppFact {
    public var channel: Channel
    public var notificationId: String
    public var type: NotificationType
    public var subtype: NotificationType?
    public var signedAt: Timestamp?
    /// `signature-ok`, or why verification failed.
    public var verification: String = "signature-ok"
    public var transactionId: String?
    public var originalTransactionId: String?
    /// WeChat `trade_state`.
    public var tradeState: String?
    /// WeChat `out_trade_no` (our order id).
    public var outTradeNo: String?
    /// `sha256:...` of the raw signed payload, so an auditor can re-verify.
    public var rawDigest: String?
    public var app: String?
    public var merchant: String?
    /// Why what the store signed could not be made into facts, in whole or in part (an unknown
    /// type, a missing field, a partial void without its quantity); nil when it was.
    public var untranslated: String?
    /// What later fact completes an untranslated notification, when one can.
    public var awaiting: Awaiting?

    /// The later fact that completes a notification recorded untranslated.
    public enum Awaiting: String, Sendable, Hashable, CaseIterable {
        /// A PurchaseVoided of the transaction with its voidedQuantity (Voided Purchases API).
        case voidedQuantity = "voided-quantity"
        /// A PaymentVerified or SubscriptionRenewed of the purchase (token or transaction), read
        /// from the store's API by the backend.
        case verification
    }

    public static let fields = FieldTable(
        StoreNotificationReceived(channel: .appstore, notificationId: "", type: NotificationType(raw: "")),
        [
            .channel("channel", \.channel),
            .text("notificationId", \.notificationId, "Apple notificationUUID, Pub/Sub messageId, WeChat id."),
            .open(
                "type", \.type,
                "The notification type, as the store sent it (Apple notificationType, Google notificationType, WeChat event_type)."
            ),
            .optionalOpen("subtype", \.subtype, "The notification subtype, as the store sent it (Apple subtype)."),
            .optionalTimestamp("signedAt", \.signedAt),
            .text("verification", \.verification, "signature-ok, or why verification failed."),
            .optionalText("transactionId", \.transactionId),
            .optionalText("originalTransactionId", \.originalTransactionId),
            .optionalText("tradeState", \.tradeState, "WeChat trade_state."),
            .optionalText("outTradeNo", \.outTradeNo, "WeChat out_trade_no (our order id)."),
            .optionalText("rawDigest", \.rawDigest, "sha256:... of the raw signed payload."),
        ] + appFields(\.app, \.merchant) + [
            .optionalText(
                "untranslated", \.untranslated,
                "Why what the store signed was not made into facts, in whole or in part; listed as untranslated-notification until completed."
            ),
            .optionalChoice(
                "awaiting", \.awaiting,
                "What completes it: voided-quantity (a PurchaseVoided with its quantity) or verification (a PaymentVerified or SubscriptionRenewed of the purchase)."
            ),
        ])

    static let newInVersion3: Set<String> = ["untranslated", "awaiting"]
}

@PublicInit
public struct VerificationFailed: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    /// The store's status (Apple 21002, 21003...; Google HTTP status; WeChat error code as a number).
    public var code: Int64
    public var retryable: Bool
    public var attempt: Int64 = 1
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        VerificationFailed(channel: .appstore, transactionId: "", code: 0, retryable: false),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId),
            .int(
                "code", \.code,
                "The store's status (Apple 21002, 21003...; Google HTTP status; WeChat error code as a number)."),
            .bool("retryable", \.retryable),
            .int("attempt", \.attempt, min: 1, max: 1000),
        ] + appFields(\.app, \.merchant))
}

/// The binding decision: which order and user a store transaction belongs to.
@PublicInit
public struct TransactionBound: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    public var orderId: String?
    public var userId: String
    public var method: BindingMethod
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        TransactionBound(channel: .appstore, transactionId: "", orderId: nil, userId: "", method: .manual),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId),
            .optionalText("orderId", \.orderId),
            .text("userId", \.userId),
            .choice("method", \.method, "How the binding was decided, in order of trust."),
        ] + appFields(\.app, \.merchant))

    /// Version 1: no app, and no obfuscatedExternalAccountId method.
    static let version1 = FieldTable(
        fields.blank,
        fields.removing(appFieldNames).fields.map {
            $0.name == "method"
                ? .choice(
                    "method", \.method, "How the binding was decided, in order of trust.",
                    allowed: BindingMethod.allCases.filter { $0 != .obfuscatedAccountId }) : $0
        })
}

extension FactTypes {
    static let callbackAboutV1 =
        "The app reported a store result; the same transaction is reported again on every launch until finished, and each report is its own fact."

    public static let clientCallbackReceived = FactType<ClientCallbackReceived>(
        "ClientCallbackReceived", callbackAboutV1 + " The app may be signed out (no userId).",
        stream: "client:<channel>:<userId|signed-out>", key: "client:<channel>:report:<reportId>",
        older: [OlderVersion(fields: ClientCallbackReceived.version1, about: callbackAboutV1)],
        wrap: Fact.clientCallbackReceived,
        summary: { f in
            "app of \(f.userId ?? "a signed-out user") reported \(f.state.raw) \(f.productId)"
                + (f.transactionId.map { " tx \($0)" } ?? "")
                + (f.orderId.map { " order \($0)" } ?? "")
                + (f.applicationUsername.map { " applicationUsername \($0)" } ?? "")
        })

    public static let storeNotificationReceived = FactType<StoreNotificationReceived>(
        "StoreNotificationReceived", "A verified server-to-server store notification; a re-delivery is the same fact.",
        stream: "<channel>:notification:<notificationId>", key: "<channel>:notification:<notificationId>",
        older: [
            .without(
                appFieldNames.union(StoreNotificationReceived.newInVersion3),
                "A verified server-to-server store notification; a re-delivery is the same fact."),
            .without(
                StoreNotificationReceived.newInVersion3,
                "A verified server-to-server store notification; a re-delivery is the same fact."),
        ],
        wrap: Fact.storeNotificationReceived,
        summary: { f in
            "\(f.channel.rawValue) notification \(f.notificationId) \(f.type.raw)"
                + (f.subtype.map { "/\($0.raw)" } ?? "")
                + (f.transactionId.map { " tx \($0)" } ?? "") + (f.untranslated.map { " (untranslated: \($0))" } ?? "")
        })

    public static let verificationFailed = FactType<VerificationFailed>(
        "VerificationFailed", "The store rejected the transaction, or could not be reached.",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:tx:<transactionId>[@<app>]:failed:<attempt>",
        older: [.without(appFieldNames, "The store rejected the transaction, or could not be reached.")],
        wrap: Fact.verificationFailed,
        summary: {
            "verification of tx \($0.transactionId) failed: code \($0.code)\($0.retryable ? " (retryable)" : "")"
        })

    public static let transactionBound = FactType<TransactionBound>(
        "TransactionBound", "Which order and user a store transaction belongs to, and how that was decided.",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:tx:<transactionId>[@<app>]:bound",
        older: [
            OlderVersion(
                fields: TransactionBound.version1,
                about: "Which order and user a store transaction belongs to, and how that was decided.")
        ],
        wrap: Fact.transactionBound,
        summary: {
            "tx \($0.transactionId) bound to \($0.orderId.map { "order \($0)" } ?? "no order") of \($0.userId) by \($0.method.rawValue)"
        })
}
