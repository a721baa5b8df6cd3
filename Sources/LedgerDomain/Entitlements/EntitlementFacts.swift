import LedgerCore

// What fulfilment gave, and the coins users spent.

/// Why something was granted: a purchase, or a policy (no store transaction behind it).
public struct GrantReason: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let purchase = GrantReason(raw: "purchase")
    public static let goodwill = GrantReason(raw: "goodwill")
    public static let compensation = GrantReason(raw: "compensation")
    public static let promotion = GrantReason(raw: "promotion")
    public static let migration = GrantReason(raw: "migration")
    public static let known: [GrantReason] = [.purchase, .goodwill, .compensation, .promotion, .migration]
}

/// What fulfilment actually gave. For periods, `entitlement` is the period granted. A grant
/// without a store transaction says why (goodwill, compensation, promotion, migration) and who
/// authorized it: it is not a grant without payment, and finance sees it in its own section.
@PublicInit
public struct EntitlementGranted: FactBody {
    public var grantId: String
    public var userId: String
    public var channel: Channel?
    public var transactionId: String?
    public var orderId: String?
    public var entitlement: Entitlement
    public var quantity: Int64 = 1
    /// Why: a purchase when absent.
    public var reason: GrantReason?
    /// Who authorized a grant without a transaction.
    public var authorizedBy: String?
    /// The app of the transaction (Apple bundleId, Google packageName, WeChat appid): a transaction
    /// id is unique per channel and app only.
    public var app: String?

    /// A grant by policy (goodwill, compensation...): it says why and who authorized it. A grant
    /// without a transaction that does neither is judged as a grant without payment.
    public var isPolicyGrant: Bool { (reason.map { $0 != .purchase } ?? false) && authorizedBy != nil }

    public static let fields = FieldTable(
        EntitlementGranted(grantId: "", userId: "", transactionId: nil, entitlement: .coins(1)),
        [
            .text("grantId", \.grantId),
            .text("userId", \.userId),
            .optionalChannel("channel", \.channel),
            .optionalText(
                "transactionId", \.transactionId, "The store transaction paid for it; absent for a grant by policy."),
            .optionalText("orderId", \.orderId),
            .object("entitlement", \.entitlement),
            .int("quantity", \.quantity, min: 1, max: 10_000),
            .optionalOpen(
                "reason", \.reason,
                "Why: purchase when absent. A grant by policy (goodwill, compensation, promotion, migration) with authorizedBy is counted against no transaction; a grant without a transaction and without both is a grant without payment."
            ),
            .optionalText("authorizedBy", \.authorizedBy, "Who authorized a grant by policy."),
            .optionalText(
                "app", \.app,
                "The transaction's app (Apple bundleId, Google packageName, WeChat appid): the grant counts only against the transaction of that channel and app. Absent (older grants): the transaction of that id whose channel does not contradict it."
            ),
        ])

    /// Version 1: every grant named its transaction.
    static let version1 = FieldTable(
        fields.blank,
        fields.removing(["reason", "authorizedBy", "app"]).fields.map {
            $0.name == "transactionId" ? .requiredText("transactionId", \.transactionId) : $0
        })
}

@PublicInit
public struct CoinsSpent: FactBody {
    public var spendId: String
    public var userId: String
    public var amount: Int64
    public var item: String?

    public static let fields = FieldTable(
        CoinsSpent(spendId: "", userId: "", amount: 0),
        [
            .text("spendId", \.spendId),
            .text("userId", \.userId),
            .int("amount", \.amount, min: 1, max: 1_000_000_000, "Coins spent."),
            .optionalText("item", \.item),
        ])
}

extension FactTypes {
    public static let entitlementGranted = FactType<EntitlementGranted>(
        "EntitlementGranted",
        "What fulfilment actually gave the user; for periods, entitlement is the period granted. "
            + "A grant without a store transaction says why (goodwill, compensation, promotion, migration) and who authorized it.",
        stream: "user:<userId>", key: "grant:<grantId>",
        older: [
            OlderVersion(
                fields: EntitlementGranted.version1,
                about: "What fulfilment actually gave the user; for periods, entitlement is the period granted."),
            .without(
                ["app"],
                "What fulfilment actually gave the user; for periods, entitlement is the period granted. "
                    + "A grant without a store transaction says why (goodwill, compensation, promotion, migration) and who authorized it."
            ),
        ],
        wrap: Fact.entitlementGranted,
        summary: { f in
            "granted \(f.entitlement) x\(f.quantity) to \(f.userId) "
                + (f.transactionId.map { "for tx \($0)" } ?? "as \(f.reason?.raw ?? "?") by \(f.authorizedBy ?? "?")")
                + " (grant \(f.grantId))"
        })

    public static let coinsSpent = FactType<CoinsSpent>(
        "CoinsSpent", "The user consumed coins.", stream: "user:<userId>", key: "spend:<spendId>",
        wrap: Fact.coinsSpent,
        summary: { "\($0.userId) spent \($0.amount) coins" + ($0.item.map { " on \($0)" } ?? "") })
}
