import LedgerCore

// What fulfilment gave, and the coins users spent.

/// What fulfilment actually gave. For periods, `entitlement` is the period granted.
public struct EntitlementGranted: FactBody {
    public var grantId: String
    public var userId: String
    public var channel: Channel?
    public var transactionId: String
    public var orderId: String?
    public var entitlement: Entitlement
    public var quantity: Int64

    public init(grantId: String, userId: String, channel: Channel? = nil, transactionId: String, orderId: String? = nil,
                entitlement: Entitlement, quantity: Int64 = 1) {
        self.grantId = grantId; self.userId = userId; self.channel = channel; self.transactionId = transactionId
        self.orderId = orderId; self.entitlement = entitlement; self.quantity = quantity
    }

    public static let fields = FieldTable(EntitlementGranted(grantId: "", userId: "", transactionId: "", entitlement: .coins(1)), [
        .text("grantId", \.grantId),
        .text("userId", \.userId),
        .optionalChannel("channel", \.channel),
        .text("transactionId", \.transactionId),
        .optionalText("orderId", \.orderId),
        .object("entitlement", \.entitlement),
        .int("quantity", \.quantity, min: 1, max: 10_000),
    ])
}

public struct CoinsSpent: FactBody {
    public var spendId: String
    public var userId: String
    public var amount: Int64
    public var item: String?

    public init(spendId: String, userId: String, amount: Int64, item: String? = nil) {
        self.spendId = spendId; self.userId = userId; self.amount = amount; self.item = item
    }

    public static let fields = FieldTable(CoinsSpent(spendId: "", userId: "", amount: 0), [
        .text("spendId", \.spendId),
        .text("userId", \.userId),
        .int("amount", \.amount, min: 1, max: 1_000_000_000, "Coins spent."),
        .optionalText("item", \.item),
    ])
}

extension FactTypes {
    public static let entitlementGranted = FactType<EntitlementGranted>(
        "EntitlementGranted", "What fulfilment actually gave the user; for periods, entitlement is the period granted.",
        stream: "user:<userId>", key: "grant:<grantId>", wrap: Fact.entitlementGranted,
        summary: { "granted \($0.entitlement) x\($0.quantity) to \($0.userId) for tx \($0.transactionId) (grant \($0.grantId))" })

    public static let coinsSpent = FactType<CoinsSpent>(
        "CoinsSpent", "The user consumed coins.", stream: "user:<userId>", key: "spend:<spendId>", wrap: Fact.coinsSpent,
        summary: { "\($0.userId) spent \($0.amount) coins" + ($0.item.map { " on \($0)" } ?? "") })
}
