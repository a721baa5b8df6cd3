import Foundation
import LedgerCore

/// The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification).
///
/// Version 5 adds Google's purchase token of a one-time purchase; version 4 WeChat's
/// `out_trade_no`; version 3 adds the app, Google's linked purchase token and obfuscated account id, and the
/// offer; version 2 carries `price` as an object in minor units; version 1 (the verifyReceipt era)
/// carried Apple's `priceMilliunits` and `currency` flat and is upcast on read, converting exactly.
@PublicInit
public struct PaymentVerified: StoreAppFact {
    public var channel: Channel
    public var transactionId: String
    /// Apple originalTransactionId or Google purchaseToken; names the subscription.
    public var originalTransactionId: String?
    public var productId: String
    public var quantity: Int64 = 1
    public var purchaseDate: Timestamp
    public var expiresDate: Timestamp?
    public var environment: StoreEnvironment = .production
    public var ownership: Ownership = .purchased
    public var price: Money
    public var appAccountToken: UUID?
    public var rawDigest: String?
    public var app: String?
    public var merchant: String?
    /// Google: the purchase token this one replaces (upgrade, downgrade, resubscribe).
    public var linkedPurchaseToken: String?
    /// Google `obfuscatedExternalAccountId`, set by the app at purchase (a binding as strong as a token).
    public var obfuscatedAccountId: String?
    /// The offer that priced this period (Apple offerType/offerIdentifier, Google offerId).
    public var offer: String?
    /// WeChat `out_trade_no`: our order id as the store's payment names it.
    public var outTradeNo: String?
    /// Google: the purchase token of a one-time purchase (a subscription's is its
    /// `originalTransactionId`). A notification that names only the token is completed by it.
    public var purchaseToken: String?

    /// Whether it counts as revenue and money at risk: sandbox and Xcode purchases are recorded
    /// and shown apart; a family-shared copy is owed its entitlement but paid nothing itself.
    public var isRevenue: Bool { environment == .production && ownership != .familyShared }

    static let blank = PaymentVerified(
        channel: .appstore, transactionId: "", productId: "", purchaseDate: .blank, price: .blank)

    /// The fields every version has.
    static let common: [FactField<PaymentVerified>] = [
        .channel("channel", \.channel),
        .text("transactionId", \.transactionId),
        .optionalText(
            "originalTransactionId", \.originalTransactionId,
            "Apple originalTransactionId or Google purchaseToken; names the subscription."),
        .text("productId", \.productId),
        .int("quantity", \.quantity, min: 1, max: 10_000),
        .timestamp("purchaseDate", \.purchaseDate),
        .optionalTimestamp("expiresDate", \.expiresDate, "For subscriptions; must be after purchaseDate."),
        .open("environment", \.environment, "The store environment."),
        .optionalUUID("appAccountToken", \.appAccountToken, "The StoreKit 2 appAccountToken minted for the order."),
        .optionalText(
            "rawDigest", \.rawDigest, "sha256:... of the raw signed store payload, so an auditor can re-verify."),
    ]

    /// A subscription's expiry must come after its purchase; only Google has purchase tokens.
    static let check: @Sendable (inout PaymentVerified) -> FactError? = { f in
        if f.purchaseToken != nil, f.channel != .googleplay {
            return FactError(
                field: "purchaseToken",
                message: "a purchase token is Google's: leave it out of a \(f.channel.rawValue) purchase")
        }
        guard let e = f.expiresDate, e <= f.purchaseDate else { return nil }
        return FactError(
            field: "expiresDate", message: "\(e.iso8601) is not after purchaseDate \(f.purchaseDate.iso8601)")
    }

    public static let fields = FieldTable(
        blank,
        common + [
            .open("ownership", \.ownership, "Apple inAppOwnershipType."),
            .object("price", \.price),
            .optionalText(
                "linkedPurchaseToken", \.linkedPurchaseToken,
                "Google: the purchase token this one replaces (upgrade, downgrade, resubscribe)."),
            .optionalText(
                "obfuscatedAccountId", \.obfuscatedAccountId,
                "Google obfuscatedExternalAccountId, set by the app at purchase."),
            .optionalText(
                "offer", \.offer,
                "The offer that priced this period (Apple offerType and offerIdentifier, Google offerId)."),
            .optionalText(
                "outTradeNo", \.outTradeNo, "WeChat out_trade_no: our order id as the store's payment names it."),
            .optionalText(
                "purchaseToken", \.purchaseToken,
                "Google: the purchase token of a one-time purchase (a subscription's is its originalTransactionId)."),
        ] + appFields(\.app, \.merchant), check: check)

    static let newInVersion3: Set<String> = appFieldNames.union(["linkedPurchaseToken", "obfuscatedAccountId", "offer"])

    /// Version 1: `priceMilliunits` and `currency`, converted exactly to minor units.
    static let version1 = FieldTable(
        blank,
        common + [
            .open("ownership", \.ownership, absent: .purchased, "Apple inAppOwnershipType; PURCHASED when absent."),
            FactField(
                "priceMilliunits", required: true,
                schema: .integer(
                    min: 0, max: 1_000_000_000_000_000_000,
                    "Apple's price in thousandths of the major unit; must be a whole number of minor units of currency, at most 10^12 of them."
                ),
                read: { (r: inout PayloadReader, f: inout PaymentVerified) throws(FactError) in
                    f.price.minorUnits = try r.int("priceMilliunits", min: 0, max: 1_000_000_000_000_000_000)
                },
                write: { _, _ in }),
            .currency("currency", \.price.currency),
        ],
        check: { f in
            // The milliunits read above become minor units once the currency is known.
            let milli = f.price.minorUnits, currency = f.price.currency
            guard let m = Money(milliunits: milli, currency: currency) else {
                return FactError(
                    field: "priceMilliunits",
                    message: "\(milli) milliunits is not a whole number of \(currency.code) minor units")
            }
            // Version 2's `price.amount` bound: an upcast fact must re-encode as a valid version 2.
            guard m.minorUnits <= Money.maximumMinorUnits else {
                return FactError(
                    field: "priceMilliunits",
                    message: "\(milli) milliunits is \(m), over the limit of \(Money.maximumMinorUnits) minor units")
            }
            f.price = m
            return check(&f)
        })
}

extension FactTypes {
    public static let paymentVerified = FactType<PaymentVerified>(
        "PaymentVerified",
        "The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification).",
        stream: "<channel>:tx:<transactionId>[@<app>]", key: "<channel>:tx:<transactionId>[@<app>]:verified",
        older: [
            OlderVersion(
                fields: PaymentVerified.version1,
                about:
                    "The store confirmed a transaction (verifyReceipt era): price as Apple's flat priceMilliunits and currency. "
                    + "Upcast on read to version 2, converting exactly; a price that is not a whole number of minor units is refused."
            ),
            .without(
                PaymentVerified.newInVersion3.union(["outTradeNo", "purchaseToken"]),
                "The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification)."),
            .without(
                ["outTradeNo", "purchaseToken"],
                "The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification)."),
            .without(
                ["purchaseToken"],
                "The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification)."),
        ],
        wrap: Fact.paymentVerified,
        summary: { f in
            "verified \(f.channel.rawValue) tx \(f.transactionId) \(f.productId) x\(f.quantity) \(f.price)"
                + (f.expiresDate.map { " expires \($0.iso8601)" } ?? "")
        })
}
