import LedgerCore

// Money returned to the buyer, the store's notices around it, and what fulfilment took back.

/// RefundRequested, RefundDeclined and RefundReversed: a transaction and the notification that said so.
public struct RefundNotice: FactBody {
    public var channel: Channel
    public var transactionId: String
    public var notificationId: String?

    public init(channel: Channel, transactionId: String, notificationId: String? = nil) {
        self.channel = channel; self.transactionId = transactionId; self.notificationId = notificationId
    }

    public static let fields = FieldTable(RefundNotice(channel: .appstore, transactionId: ""), [
        .channel("channel", \.channel),
        .text("transactionId", \.transactionId),
        .optionalText("notificationId", \.notificationId, "The store notification that said so."),
    ])
}

/// Money returned to the buyer, in full or in part.
public struct Refunded: FactBody {
    public var channel: Channel
    public var transactionId: String
    public var refundId: String
    public var amount: Money
    public var refundedAt: Timestamp
    public var reason: String?

    public init(channel: Channel, transactionId: String, refundId: String, amount: Money, refundedAt: Timestamp, reason: String? = nil) {
        self.channel = channel; self.transactionId = transactionId; self.refundId = refundId; self.amount = amount
        self.refundedAt = refundedAt; self.reason = reason
    }

    public static let fields = FieldTable(Refunded(channel: .appstore, transactionId: "", refundId: "", amount: .blank, refundedAt: .blank), [
        .channel("channel", \.channel),
        .text("transactionId", \.transactionId),
        .text("refundId", \.refundId),
        .object("amount", \.amount, "The amount returned."),
        .timestamp("refundedAt", \.refundedAt),
        .optionalText("reason", \.reason),
    ])
}

/// What fulfilment actually took back.
public struct EntitlementRevoked: FactBody {
    public var userId: String
    public var channel: Channel?
    public var transactionId: String
    public var reason: RevocationReason
    public var grantId: String?

    public init(userId: String, channel: Channel? = nil, transactionId: String, reason: RevocationReason, grantId: String? = nil) {
        self.userId = userId; self.channel = channel; self.transactionId = transactionId; self.reason = reason; self.grantId = grantId
    }

    public static let fields = FieldTable(EntitlementRevoked(userId: "", transactionId: "", reason: .refund), [
        .text("userId", \.userId),
        .optionalChannel("channel", \.channel),
        .text("transactionId", \.transactionId),
        .open("reason", \.reason, "Why it was taken back."),
        .optionalText("grantId", \.grantId),
    ])
}

extension FactTypes {
    public static let refundRequested = FactType<RefundNotice>(
        "RefundRequested", "A refund was requested (Apple CONSUMPTION_REQUEST, Google pending review).",
        stream: "<channel>:tx:<transactionId>", key: "<channel>:notification:<notificationId>:refund-requested",
        wrap: Fact.refundRequested, summary: { "refund requested for tx \($0.transactionId)" })

    public static let refundDeclined = FactType<RefundNotice>(
        "RefundDeclined", "The store declined a refund request.",
        stream: "<channel>:tx:<transactionId>", key: "<channel>:notification:<notificationId>:refund-declined",
        wrap: Fact.refundDeclined, summary: { "refund declined for tx \($0.transactionId)" })

    public static let refunded = FactType<Refunded>(
        "Refunded", "Money was returned to the buyer, in full or in part.",
        stream: "<channel>:tx:<transactionId>", key: "<channel>:tx:<transactionId>:refund:<refundId>",
        wrap: Fact.refunded, summary: { "refunded \($0.amount) of tx \($0.transactionId)" + ($0.reason.map { " (\($0))" } ?? "") })

    public static let refundReversed = FactType<RefundNotice>(
        "RefundReversed", "The refund was undone; the entitlement comes back.",
        stream: "<channel>:tx:<transactionId>", key: "<channel>:notification:<notificationId>:refund-reversed",
        wrap: Fact.refundReversed, summary: { "refund of tx \($0.transactionId) reversed" })

    public static let entitlementRevoked = FactType<EntitlementRevoked>(
        "EntitlementRevoked", "What fulfilment actually took back.",
        stream: "user:<userId>", key: "revoke:<channel|any>:<transactionId>:<reason>",
        wrap: Fact.entitlementRevoked, summary: { "revoked tx \($0.transactionId) from \($0.userId) (\($0.reason.raw))" })
}
