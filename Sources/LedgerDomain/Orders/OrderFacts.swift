import LedgerCore

// Our orders: created before paying, launched at the store, closed when never paid.

@PublicInit
public struct OrderCreated: FactBody, Codable {
    public var orderId: String
    public var userId: String
    public var channel: Channel
    public var productId: String
    public var price: Money
    /// The StoreKit 2 appAccountToken minted for this order, or WeChat's out_trade_no.
    public var accountToken: String?
    /// The app it is bought in (Apple bundleId, Google packageName, WeChat appid): only a transaction
    /// of that channel and app binds to it.
    public var app: String?

    public static let fields = FieldTable(
        OrderCreated(orderId: "", userId: "", channel: .appstore, productId: "", price: .blank),
        [
            .text("orderId", \.orderId),
            .text("userId", \.userId),
            .channel("channel", \.channel),
            .text("productId", \.productId),
            .int(
                "amount", \.price.minorUnits, min: 0, max: Money.maximumMinorUnits,
                "The order price in minor units of currency."),
            .currency("currency", \.price.currency),
            .optionalText(
                "accountToken", \.accountToken,
                "The StoreKit 2 appAccountToken minted for this order, or WeChat's out_trade_no."),
            .optionalText(
                "app", \.app,
                "The app it is bought in (Apple bundleId, Google packageName, WeChat appid): only a transaction of that channel and app binds to it."
            ),
        ])
}

@PublicInit
public struct PaymentLaunched: FactBody {
    public var orderId: String
    public var channel: Channel
    public var attempt: Int64 = 1
    public var prepayId: String?

    public static let fields = FieldTable(
        PaymentLaunched(orderId: "", channel: .appstore),
        [
            .text("orderId", \.orderId),
            .channel("channel", \.channel),
            .int("attempt", \.attempt, min: 1, max: 1000),
            .optionalText("prepayId", \.prepayId, "WeChat prepay_id."),
        ])
}

@PublicInit
public struct OrderClosed: FactBody {
    public var orderId: String
    public var reason: CloseReason

    public static let fields = FieldTable(
        OrderClosed(orderId: "", reason: .timeout),
        [
            .text("orderId", \.orderId),
            .open("reason", \.reason, "Why it was closed."),
        ])
}

extension FactTypes {
    public static let orderCreated = FactType<OrderCreated>(
        "OrderCreated", "Our order, created before paying.",
        stream: "order:<orderId>", key: "order:<orderId>:created",
        older: [.without(["app"], "Our order, created before paying.")], wrap: Fact.orderCreated,
        summary: { "order \($0.orderId) by \($0.userId): \($0.productId) for \($0.price) (\($0.channel.rawValue))" })

    public static let paymentLaunched = FactType<PaymentLaunched>(
        "PaymentLaunched", "The client or server started the store payment (StoreKit addPayment, WeChat prepay).",
        stream: "order:<orderId>", key: "order:<orderId>:launched:<attempt>", wrap: Fact.paymentLaunched,
        summary: { "order \($0.orderId) payment launched (attempt \($0.attempt))" })

    public static let orderClosed = FactType<OrderClosed>(
        "OrderClosed", "The order was never paid: timeout, user cancel, WeChat close.",
        stream: "order:<orderId>", key: "order:<orderId>:closed", wrap: Fact.orderClosed,
        summary: { "order \($0.orderId) closed (\($0.reason.raw))" })
}
