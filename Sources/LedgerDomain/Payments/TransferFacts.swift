import LedgerCore

// A transaction moved to another user, and Google's acknowledgement of a purchase.

/// How a transaction came to move to another user.
public struct TransferMethod: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    /// The buyer restored the purchase while signed in to another account.
    public static let restore = TransferMethod(raw: "restore")
    /// Support corrected a wrong binding.
    public static let supportCorrection = TransferMethod(raw: "support-correction")
    public static let known: [TransferMethod] = [.restore, .supportCorrection]
}

/// A store transaction moves to another user (a restore to a new account, a support correction).
/// From its position on, the new owner holds the transaction: grants to them are not wrong-user,
/// and the move is not a reused receipt.
@PublicInit
public struct TransactionTransferred: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    public var transferId: String
    public var fromUserId: String?
    public var toUserId: String
    /// The order the transaction now belongs to, when there is one.
    public var orderId: String?
    public var method: TransferMethod
    public var reason: String
    /// Who decided it (a support agent, an automated restore).
    public var authorizedBy: String?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        TransactionTransferred(
            channel: .appstore, transactionId: "", transferId: "", toUserId: "", method: .restore, reason: ""),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId),
            .text("transferId", \.transferId, "Our id for this move."),
            .optionalText("fromUserId", \.fromUserId, "The user who held it before, as the mover saw it."),
            .text("toUserId", \.toUserId, "The user who holds it from now on."),
            .optionalText("orderId", \.orderId, "The order it belongs to from now on."),
            .open("method", \.method, "How it came to move."),
            .text("reason", \.reason, "Why, in words an auditor can check."),
            .optionalText("authorizedBy", \.authorizedBy, "Who decided it."),
        ] + appFields(\.app, \.merchant))
}

/// Google Play: the purchase was acknowledged. Google refunds a purchase left unacknowledged for
/// three days, so an acknowledgement missing after that is a finding.
@PublicInit
public struct PurchaseAcknowledged: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    /// When the acknowledge (or consume) call succeeded: the deadline is judged by this time, not
    /// by when the fact reached the log.
    public var acknowledgedAt: Timestamp
    public var app: String?
    public var merchant: String?
    /// Which call: `acknowledge` (purchases.products/subscriptions.acknowledge) or `consume`
    /// (purchases.products.consume, which acknowledges a consumable too).
    public var kind: AcknowledgementKind?

    public static let fields = FieldTable(
        PurchaseAcknowledged(channel: .googleplay, transactionId: "", acknowledgedAt: .blank),
        [
            .channel("channel", \.channel),
            .text("transactionId", \.transactionId, "The Google order id of the purchase."),
            .timestamp(
                "acknowledgedAt", \.acknowledgedAt,
                "When the acknowledge or consume call succeeded: the 3-day deadline is judged by it."),
            .optionalOpen("kind", \.kind, "Which call acknowledged it: acknowledge, or consume (a consumable)."),
        ] + appFields(\.app, \.merchant))
}

/// How a Google purchase was acknowledged: `acknowledge`, or `consume` (which acknowledges too).
public struct AcknowledgementKind: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let acknowledge = AcknowledgementKind(raw: "acknowledge")
    public static let consume = AcknowledgementKind(raw: "consume")
    public static let known: [AcknowledgementKind] = [.acknowledge, .consume]
}

extension FactTypes {
    public static let transactionTransferred = FactType<TransactionTransferred>(
        "TransactionTransferred",
        "A store transaction moved to another user (a restore to a new account, a support correction).",
        stream: "<channel>:tx:<transactionId>[@<app>]",
        key: "<channel>:tx:<transactionId>[@<app>]:transfer:<transferId>",
        wrap: Fact.transactionTransferred,
        summary: { "tx \($0.transactionId) moved to \($0.toUserId) by \($0.method.raw): \($0.reason)" })

    public static let purchaseAcknowledged = FactType<PurchaseAcknowledged>(
        "PurchaseAcknowledged",
        "Google Play: the purchase was acknowledged (unacknowledged after three days, Google refunds it).",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:tx:<transactionId>[@<app>]:acknowledged",
        older: [
            .without(
                ["kind"],
                "Google Play: the purchase was acknowledged (unacknowledged after three days, Google refunds it).")
        ],
        wrap: Fact.purchaseAcknowledged,
        summary: { "tx \($0.transactionId) acknowledged at \($0.acknowledgedAt.iso8601)" })
}
