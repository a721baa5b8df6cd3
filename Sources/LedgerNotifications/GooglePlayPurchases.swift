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

    /// Reads the API's JSON; the error says which field is missing or wrong.
    public init(json r: JSONValue) throws(NotificationRefusal) {
        func millis(_ key: String) throws(NotificationRefusal) -> Timestamp {
            guard let text = r[key]?.stringValue ?? r[key]?.intValue.map(String.init), let ms = Int64(text) else {
                throw NotificationRefusal(.malformed, "the subscription purchase lacks \(key)")
            }
            return Timestamp(millisecondsSince1970: ms)
        }
        guard let order = r["orderId"]?.stringValue, !order.isEmpty else { throw NotificationRefusal(.malformed, "the subscription purchase lacks orderId") }
        guard let microsText = r["priceAmountMicros"]?.stringValue ?? r["priceAmountMicros"]?.intValue.map(String.init), let micros = Int64(microsText),
              micros >= 0, let code = r["priceCurrencyCode"]?.stringValue, let currency = Currency(code),
              let price = Money(storeAmount: micros, unit: .micros, currency: currency) else {
            throw NotificationRefusal(.malformed, "the subscription purchase lacks priceAmountMicros or a known priceCurrencyCode")
        }
        orderId = order
        startTime = try millis("startTimeMillis")
        expiryTime = try millis("expiryTimeMillis")
        self.price = price
        linkedPurchaseToken = r["linkedPurchaseToken"]?.stringValue
        obfuscatedAccountId = r["obfuscatedExternalAccountId"]?.stringValue
        isTest = r["purchaseType"]?.intValue == 0
    }
}
