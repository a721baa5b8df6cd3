import LedgerCore
import LedgerDomain

/// What the Google Play Developer API says of a subscription purchase (`purchases.subscriptions.get`):
/// the read that gives an RTDN, which carries only a purchase token, its order id, price and expiry.
public struct GooglePlaySubscriptionRead: Sendable, Hashable {
    /// The order of the latest period (`GPA.…`, `..N` for the N+1th renewal).
    public var orderId: String
    public var startTime: Timestamp
    /// The current period's end (in grace, the grace period's end).
    public var expiryTime: Timestamp
    /// `priceAmountMicros` in `priceCurrencyCode`, exactly.
    public var price: Money
    public var linkedPurchaseToken: String?
    public var obfuscatedAccountId: String?
    /// `purchaseType` 0: a license-tester purchase.
    public var isTest: Bool
    /// `paymentState`: 0 payment pending, 1 received, 2 free trial, 3 pending deferred upgrade or
    /// downgrade (the period in force is paid); absent for a canceled or expired subscription.
    public var paymentState: Int64?
    /// `introductoryPriceInfo.introductoryPriceCycles`: how many periods are charged the
    /// introductory price; present for the subscription's whole life when it was bought with one
    /// (its price, net of tax, is not what was paid: ``orderTotal`` is). Nil without one.
    public var introductoryCycles: Int64?
    /// The total of the order `orderId` names (`orders.get`), what the buyer paid; read only when
    /// the subscription's own read cannot say (``needsOrder``).
    public var orderTotal: Money?
    /// `priceChange.newPrice`: the price the subscription renews at once a price change is
    /// accepted (`priceMicros` in `currency`), exactly.
    public var newPrice: Money?

    /// What the period `orderId` names was charged, exactly: nothing in a free trial, the order's
    /// total when it was read (``orderTotal``), else `priceAmountMicros` (the list price, tax included
    /// where prices include it) outside the introductory periods; or why the read cannot tell: a
    /// payment still pending, or an introductory period without its order (Google gives the
    /// introductory price net of tax), the first period after them included, which is introductory
    /// only after a free trial the read no longer shows.
    public func charged() -> Charge {
        switch paymentState {
        case 0?: return .unknown("the payment is pending (paymentState 0)")
        case 2?: return .paid(Money(minorUnits: 0, currency: price.currency))
        default: break
        }
        if let orderTotal { return .paid(orderTotal) }
        guard needsOrder else { return .paid(price) }
        return .unknown(
            "period \(Self.periodIndex(orderId)) may be introductory, and only its order's total says what was paid")
    }

    /// Whether only the order's total (`orders.get`) says what the period was charged: a period
    /// bought with an introductory price whose index is at most its cycles (the first order is
    /// period 0, `..N` period N + 1; introductory periods are 0..<cycles, or 1...cycles after a trial).
    public var needsOrder: Bool {
        guard let cycles = introductoryCycles else { return false }
        return paymentState != 0 && paymentState != 2 && orderTotal == nil && Self.periodIndex(orderId) <= cycles
    }

    public enum Charge: Sendable, Hashable {
        case paid(Money)
        case unknown(String)
    }

    /// `GPA.…` is period 0, `GPA.…..N` period N + 1.
    static func periodIndex(_ orderId: String) -> Int64 {
        guard let range = orderId.range(of: "..", options: .backwards), let n = Int64(orderId[range.upperBound...])
        else { return 0 }
        return n + 1
    }

    /// `o[amount]`, micros as a string or a number, in the currency `o[currency]` names, exactly; nil
    /// when either is missing, negative or not known.
    static func micros(_ o: JSONValue, _ amount: String, in currency: String) -> Money? {
        guard let text = o[amount]?.stringValue ?? o[amount]?.intValue.map(String.init), let micros = Int64(text),
            micros >= 0, let code = (o[currency]?.stringValue).flatMap(Currency.init)
        else { return nil }
        return Money(storeAmount: micros, unit: .micros, currency: code)
    }

    /// Reads the API's JSON; the error says which field is missing or wrong.
    public init(json r: JSONValue) throws(NotificationRefusal) {
        func millis(_ key: String) throws(NotificationRefusal) -> Timestamp {
            guard let text = r[key]?.stringValue ?? r[key]?.intValue.map(String.init), let ms = Int64(text) else {
                throw NotificationRefusal(.malformed, "the subscription purchase lacks \(key)")
            }
            return Timestamp(millisecondsSince1970: ms)
        }
        guard let order = r["orderId"]?.stringValue, !order.isEmpty else {
            throw NotificationRefusal(.malformed, "the subscription purchase lacks orderId")
        }
        guard let price = Self.micros(r, "priceAmountMicros", in: "priceCurrencyCode") else {
            throw NotificationRefusal(
                .malformed, "the subscription purchase lacks priceAmountMicros or a known priceCurrencyCode")
        }
        orderId = order
        startTime = try millis("startTimeMillis")
        expiryTime = try millis("expiryTimeMillis")
        self.price = price
        linkedPurchaseToken = r["linkedPurchaseToken"]?.stringValue
        obfuscatedAccountId = r["obfuscatedExternalAccountId"]?.stringValue
        isTest = r["purchaseType"]?.intValue == 0
        paymentState = r["paymentState"]?.intValue
        // Not what most reads are for: one that cannot be read is left out (a price-change
        // notification then says it lacks it), never a reason to refuse the read.
        newPrice = r["priceChange"]?["newPrice"].flatMap { Self.micros($0, "priceMicros", in: "currency") }
        if let info = r["introductoryPriceInfo"] {
            guard let cycles = info["introductoryPriceCycles"]?.intValue, cycles >= 1 else {
                throw NotificationRefusal(
                    .malformed, "the subscription purchase's introductoryPriceInfo lacks introductoryPriceCycles")
            }
            introductoryCycles = cycles
        }
    }
}

/// What the Google Play Developer API says of a one-time purchase: `purchases.products.get` (its
/// order, time, quantity) and `orders.get` of that order (what the buyer paid: the product purchase
/// carries no price).
public struct GooglePlayProductRead: Sendable, Hashable {
    public var orderId: String
    public var purchaseTime: Timestamp
    public var quantity: Int64
    /// The order's `total` (Google's money: units and nanos), exactly, to a micro.
    public var price: Money
    public var obfuscatedAccountId: String?
    public var isTest: Bool
    /// `purchaseState`: 0 purchased, 1 canceled, 2 pending (paid later, or never).
    public var purchaseState: Int64

    public init(product p: JSONValue, order o: JSONValue) throws(NotificationRefusal) {
        guard let order = p["orderId"]?.stringValue, !order.isEmpty else {
            throw NotificationRefusal(.malformed, "the product purchase lacks orderId")
        }
        guard let text = p["purchaseTimeMillis"]?.stringValue ?? p["purchaseTimeMillis"]?.intValue.map(String.init),
            let ms = Int64(text)
        else {
            throw NotificationRefusal(.malformed, "the product purchase lacks purchaseTimeMillis")
        }
        guard let state = p["purchaseState"]?.intValue else {
            throw NotificationRefusal(.malformed, "the product purchase lacks purchaseState")
        }
        guard let total = o["total"], let price = Self.money(total) else {
            throw NotificationRefusal(.malformed, "the order lacks a total in a known currency, to a micro")
        }
        orderId = order
        purchaseTime = Timestamp(millisecondsSince1970: ms)
        quantity = max(1, p["quantity"]?.intValue ?? 1)
        self.price = price
        obfuscatedAccountId = p["obfuscatedExternalAccountId"]?.stringValue
        isTest = p["purchaseType"]?.intValue == 0
        purchaseState = state
    }

    /// Google's `Money` (`currencyCode`, `units` as a decimal string, `nanos`) exactly, when it is a
    /// whole number of micros and not negative.
    public static func money(_ m: JSONValue) -> Money? {
        guard let code = m["currencyCode"]?.stringValue, let currency = Currency(code) else { return nil }
        let units = (m["units"]?.stringValue).flatMap { Int64($0) } ?? m["units"]?.intValue ?? 0
        let nanos = m["nanos"]?.intValue ?? 0
        guard units >= 0, nanos >= 0, nanos < 1_000_000_000, nanos % 1000 == 0 else { return nil }
        let (micros, o) = units.multipliedReportingOverflow(by: 1_000_000)
        guard !o else { return nil }
        return Money(storeAmount: micros + nanos / 1000, unit: .micros, currency: currency)
    }
}
