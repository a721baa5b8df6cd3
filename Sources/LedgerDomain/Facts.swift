import Foundation
import LedgerCore

// The purchase facts of domain.md section 3, as versioned types. Each reads its payload field by
// field (errors name the field), refuses unknown fields, and writes the canonical payload back.
// `FactCatalogue` maps a stored (type, schemaVersion, payload) to a `Fact`, upcasting old versions.

/// A store product's entitlement, as of `validFrom`. ProductChanged has the same shape.
public struct ProductDefinition: Hashable, Sendable {
    public var channel: Channel
    public var storeProductId: String
    public var entitlement: Entitlement
    /// Increases with every change of this product.
    public var version: Int64
    public var validFrom: Timestamp
    public var price: Money?

    public init(channel: Channel, storeProductId: String, entitlement: Entitlement, version: Int64, validFrom: Timestamp, price: Money? = nil) {
        self.channel = channel; self.storeProductId = storeProductId; self.entitlement = entitlement
        self.version = version; self.validFrom = validFrom; self.price = price
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self)
        storeProductId = try r.string("storeProductId")
        var e = try r.object("entitlement")
        entitlement = try Entitlement.read(&e)
        version = try r.int("version", min: 1)
        validFrom = try r.timestamp("validFrom")
        if var p = try r.optionalObject("price") { price = try Money.read(&p) }
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("storeProductId", storeProductId); w.set("entitlement", entitlement.json)
        w.set("version", version); w.set("validFrom", validFrom); w.set("price", price?.json)
        return w.value
    }
}

public struct OrderCreated: Hashable, Sendable {
    public var orderId: String
    public var userId: String
    public var channel: Channel
    public var productId: String
    public var price: Money
    /// The StoreKit 2 appAccountToken minted for this order, or WeChat's out_trade_no.
    public var accountToken: String?

    public init(orderId: String, userId: String, channel: Channel, productId: String, price: Money, accountToken: String? = nil) {
        self.orderId = orderId; self.userId = userId; self.channel = channel; self.productId = productId
        self.price = price; self.accountToken = accountToken
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        orderId = try r.string("orderId"); userId = try r.string("userId")
        channel = try r.choice("channel", Channel.self); productId = try r.string("productId")
        let amount = try r.int("amount", min: 0, max: 1_000_000_000_000)
        price = Money(minorUnits: amount, currency: try r.currency("currency"))
        accountToken = try r.optionalString("accountToken")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("orderId", orderId); w.set("userId", userId); w.set("channel", channel); w.set("productId", productId)
        w.set("amount", price.minorUnits); w.set("currency", price.currency.code); w.set("accountToken", accountToken)
        return w.value
    }
}

public struct PaymentLaunched: Hashable, Sendable {
    public var orderId: String
    public var channel: Channel
    public var attempt: Int64
    public var prepayId: String?

    public init(orderId: String, channel: Channel, attempt: Int64 = 1, prepayId: String? = nil) {
        self.orderId = orderId; self.channel = channel; self.attempt = attempt; self.prepayId = prepayId
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        orderId = try r.string("orderId"); channel = try r.choice("channel", Channel.self)
        attempt = try r.int("attempt", min: 1, max: 1000); prepayId = try r.optionalString("prepayId")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("orderId", orderId); w.set("channel", channel); w.set("attempt", attempt); w.set("prepayId", prepayId)
        return w.value
    }
}

/// The app reported a store result. Re-delivered on every launch until finished: each report is a fact.
public struct ClientCallbackReceived: Hashable, Sendable {
    public var channel: Channel
    /// The signed-in user of the app that reported it.
    public var userId: String
    public var orderId: String?
    public var transactionId: String?
    public var productId: String
    public var state: CallbackState
    /// StoreKit 1 `applicationUsername` as the payment carried it (often nil after an interruption).
    public var applicationUsername: String?
    public var deviceId: String?
    public var reportId: String?

    public init(channel: Channel, userId: String, orderId: String? = nil, transactionId: String? = nil, productId: String,
                state: CallbackState, applicationUsername: String? = nil, deviceId: String? = nil, reportId: String? = nil) {
        self.channel = channel; self.userId = userId; self.orderId = orderId; self.transactionId = transactionId
        self.productId = productId; self.state = state; self.applicationUsername = applicationUsername
        self.deviceId = deviceId; self.reportId = reportId
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); userId = try r.string("userId")
        orderId = try r.optionalString("orderId"); transactionId = try r.optionalString("transactionId")
        productId = try r.string("productId"); state = try r.open("state", CallbackState.self)
        applicationUsername = try r.optionalString("applicationUsername"); deviceId = try r.optionalString("deviceId")
        reportId = try r.optionalString("reportId")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("userId", userId); w.set("orderId", orderId); w.set("transactionId", transactionId)
        w.set("productId", productId); w.set("state", state); w.set("applicationUsername", applicationUsername)
        w.set("deviceId", deviceId); w.set("reportId", reportId)
        return w.value
    }
}

/// A verified server-to-server notification. A re-delivery is the same fact (same notificationId).
public struct StoreNotificationReceived: Hashable, Sendable {
    public var channel: Channel
    public var notificationId: String
    public var type: NotificationType
    public var subtype: NotificationType?
    public var signedAt: Timestamp?
    /// `signature-ok`, or why verification failed.
    public var verification: String
    public var transactionId: String?
    public var originalTransactionId: String?
    /// WeChat `trade_state`.
    public var tradeState: String?
    /// WeChat `out_trade_no` (our order id).
    public var outTradeNo: String?
    /// `sha256:...` of the raw signed payload, so an auditor can re-verify.
    public var rawDigest: String?

    public init(channel: Channel, notificationId: String, type: NotificationType, subtype: NotificationType? = nil,
                signedAt: Timestamp? = nil, verification: String = "signature-ok", transactionId: String? = nil,
                originalTransactionId: String? = nil, tradeState: String? = nil, outTradeNo: String? = nil, rawDigest: String? = nil) {
        self.channel = channel; self.notificationId = notificationId; self.type = type; self.subtype = subtype
        self.signedAt = signedAt; self.verification = verification; self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId; self.tradeState = tradeState; self.outTradeNo = outTradeNo
        self.rawDigest = rawDigest
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); notificationId = try r.string("notificationId")
        type = try r.open("type", NotificationType.self); subtype = try r.optionalOpen("subtype", NotificationType.self)
        signedAt = try r.optionalTimestamp("signedAt"); verification = try r.string("verification")
        transactionId = try r.optionalString("transactionId"); originalTransactionId = try r.optionalString("originalTransactionId")
        tradeState = try r.optionalString("tradeState"); outTradeNo = try r.optionalString("outTradeNo")
        rawDigest = try r.optionalString("rawDigest")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("notificationId", notificationId); w.set("type", type); w.set("subtype", subtype)
        w.set("signedAt", signedAt); w.set("verification", verification); w.set("transactionId", transactionId)
        w.set("originalTransactionId", originalTransactionId); w.set("tradeState", tradeState); w.set("outTradeNo", outTradeNo)
        w.set("rawDigest", rawDigest)
        return w.value
    }
}

/// The store confirmed a transaction (receipt, JWS, Google API, WeChat query or notification).
///
/// Version 2 carries `price` as an object in minor units; version 1 (the verifyReceipt era) carried
/// Apple's `priceMilliunits` and `currency` flat and is upcast on read, converting exactly.
public struct PaymentVerified: Hashable, Sendable {
    public var channel: Channel
    public var transactionId: String
    /// Apple originalTransactionId or Google purchaseToken; names the subscription.
    public var originalTransactionId: String?
    public var productId: String
    public var quantity: Int64
    public var purchaseDate: Timestamp
    public var expiresDate: Timestamp?
    public var environment: StoreEnvironment
    public var ownership: Ownership
    public var price: Money
    public var appAccountToken: UUID?
    public var rawDigest: String?

    public init(channel: Channel, transactionId: String, originalTransactionId: String? = nil, productId: String, quantity: Int64 = 1,
                purchaseDate: Timestamp, expiresDate: Timestamp? = nil, environment: StoreEnvironment = .production,
                ownership: Ownership = .purchased, price: Money, appAccountToken: UUID? = nil, rawDigest: String? = nil) {
        self.channel = channel; self.transactionId = transactionId; self.originalTransactionId = originalTransactionId
        self.productId = productId; self.quantity = quantity; self.purchaseDate = purchaseDate; self.expiresDate = expiresDate
        self.environment = environment; self.ownership = ownership; self.price = price
        self.appAccountToken = appAccountToken; self.rawDigest = rawDigest
    }

    init(_ r: inout PayloadReader, version: Int32) throws(FactError) {
        channel = try r.choice("channel", Channel.self); transactionId = try r.string("transactionId")
        originalTransactionId = try r.optionalString("originalTransactionId"); productId = try r.string("productId")
        quantity = try r.int("quantity", min: 1, max: 10_000); purchaseDate = try r.timestamp("purchaseDate")
        expiresDate = try r.optionalTimestamp("expiresDate")
        environment = try r.open("environment", StoreEnvironment.self)
        appAccountToken = try r.optionalUUID("appAccountToken")
        rawDigest = try r.optionalString("rawDigest")
        if version == 1 {
            ownership = try r.optionalOpen("ownership", Ownership.self) ?? .purchased
            let milli = try r.int("priceMilliunits", min: 0, max: 1_000_000_000_000_000)
            let currency = try r.currency("currency")
            guard let m = Money(milliunits: milli, currency: currency) else {
                throw r.fail("priceMilliunits", "\(milli) milliunits is not a whole number of \(currency.code) minor units")
            }
            // Version 2's `price.amount` bound: an upcast fact must re-encode as a valid version 2.
            guard m.minorUnits <= 1_000_000_000_000 else {
                throw r.fail("priceMilliunits", "\(milli) milliunits is \(m), over the limit of 1000000000000 minor units")
            }
            price = m
        } else {
            ownership = try r.open("ownership", Ownership.self)
            var p = try r.object("price")
            price = try Money.read(&p)
        }
        if let expiresDate, expiresDate <= purchaseDate {
            throw r.fail("expiresDate", "\(expiresDate.iso8601) is not after purchaseDate \(purchaseDate.iso8601)")
        }
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("transactionId", transactionId); w.set("originalTransactionId", originalTransactionId)
        w.set("productId", productId); w.set("quantity", quantity); w.set("purchaseDate", purchaseDate); w.set("expiresDate", expiresDate)
        w.set("environment", environment); w.set("ownership", ownership); w.set("price", price.json)
        w.set("appAccountToken", appAccountToken); w.set("rawDigest", rawDigest)
        return w.value
    }
}

public struct VerificationFailed: Hashable, Sendable {
    public var channel: Channel
    public var transactionId: String
    /// The store's status (Apple 21002, 21003...; Google HTTP status; WeChat error code as a number).
    public var code: Int64
    public var retryable: Bool
    public var attempt: Int64

    public init(channel: Channel, transactionId: String, code: Int64, retryable: Bool, attempt: Int64 = 1) {
        self.channel = channel; self.transactionId = transactionId; self.code = code; self.retryable = retryable; self.attempt = attempt
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); transactionId = try r.string("transactionId")
        code = try r.int("code"); retryable = try r.bool("retryable"); attempt = try r.int("attempt", min: 1, max: 1000)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("transactionId", transactionId); w.set("code", code)
        w.set("retryable", retryable); w.set("attempt", attempt)
        return w.value
    }
}

/// The binding decision (domain.md section 4): which order and user a store transaction belongs to.
public struct TransactionBound: Hashable, Sendable {
    public var channel: Channel
    public var transactionId: String
    public var orderId: String?
    public var userId: String
    public var method: BindingMethod

    public init(channel: Channel, transactionId: String, orderId: String?, userId: String, method: BindingMethod) {
        self.channel = channel; self.transactionId = transactionId; self.orderId = orderId; self.userId = userId; self.method = method
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); transactionId = try r.string("transactionId")
        orderId = try r.optionalString("orderId"); userId = try r.string("userId")
        method = try r.choice("method", BindingMethod.self)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("transactionId", transactionId); w.set("orderId", orderId)
        w.set("userId", userId); w.set("method", method)
        return w.value
    }
}

/// What fulfilment actually gave. For periods, `entitlement` is the period granted.
public struct EntitlementGranted: Hashable, Sendable {
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

    init(_ r: inout PayloadReader) throws(FactError) {
        grantId = try r.string("grantId"); userId = try r.string("userId")
        channel = try r.optionalString("channel").map { (s: String) throws(FactError) -> Channel in
            guard let c = Channel(rawValue: s) else { throw r.fail("channel", "must be one of appstore, googleplay, wechat (got \"\(s)\")") }
            return c
        }
        transactionId = try r.string("transactionId"); orderId = try r.optionalString("orderId")
        var e = try r.object("entitlement")
        entitlement = try Entitlement.read(&e)
        quantity = try r.int("quantity", min: 1, max: 10_000)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("grantId", grantId); w.set("userId", userId); w.set("channel", channel); w.set("transactionId", transactionId)
        w.set("orderId", orderId); w.set("entitlement", entitlement.json); w.set("quantity", quantity)
        return w.value
    }
}

public struct EntitlementRevoked: Hashable, Sendable {
    public var userId: String
    public var channel: Channel?
    public var transactionId: String
    public var reason: RevocationReason
    public var grantId: String?

    public init(userId: String, channel: Channel? = nil, transactionId: String, reason: RevocationReason, grantId: String? = nil) {
        self.userId = userId; self.channel = channel; self.transactionId = transactionId; self.reason = reason; self.grantId = grantId
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        userId = try r.string("userId")
        channel = try r.optionalString("channel").map { (s: String) throws(FactError) -> Channel in
            guard let c = Channel(rawValue: s) else { throw r.fail("channel", "must be one of appstore, googleplay, wechat (got \"\(s)\")") }
            return c
        }
        transactionId = try r.string("transactionId"); reason = try r.open("reason", RevocationReason.self)
        grantId = try r.optionalString("grantId")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("userId", userId); w.set("channel", channel); w.set("transactionId", transactionId)
        w.set("reason", reason); w.set("grantId", grantId)
        return w.value
    }
}

public struct CoinsSpent: Hashable, Sendable {
    public var spendId: String
    public var userId: String
    public var amount: Int64
    public var item: String?

    public init(spendId: String, userId: String, amount: Int64, item: String? = nil) {
        self.spendId = spendId; self.userId = userId; self.amount = amount; self.item = item
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        spendId = try r.string("spendId"); userId = try r.string("userId")
        amount = try r.int("amount", min: 1, max: 1_000_000_000); item = try r.optionalString("item")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("spendId", spendId); w.set("userId", userId); w.set("amount", amount); w.set("item", item)
        return w.value
    }
}

public struct SubscriptionRenewed: Hashable, Sendable {
    public var channel: Channel
    public var originalTransactionId: String
    public var transactionId: String
    public var productId: String
    public var purchaseDate: Timestamp
    public var expiresDate: Timestamp
    public var price: Money?

    public init(channel: Channel, originalTransactionId: String, transactionId: String, productId: String,
                purchaseDate: Timestamp, expiresDate: Timestamp, price: Money? = nil) {
        self.channel = channel; self.originalTransactionId = originalTransactionId; self.transactionId = transactionId
        self.productId = productId; self.purchaseDate = purchaseDate; self.expiresDate = expiresDate; self.price = price
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); originalTransactionId = try r.string("originalTransactionId")
        transactionId = try r.string("transactionId"); productId = try r.string("productId")
        purchaseDate = try r.timestamp("purchaseDate"); expiresDate = try r.timestamp("expiresDate")
        if var p = try r.optionalObject("price") { price = try Money.read(&p) }
        if expiresDate <= purchaseDate {
            throw r.fail("expiresDate", "\(expiresDate.iso8601) is not after purchaseDate \(purchaseDate.iso8601)")
        }
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("originalTransactionId", originalTransactionId); w.set("transactionId", transactionId)
        w.set("productId", productId); w.set("purchaseDate", purchaseDate); w.set("expiresDate", expiresDate); w.set("price", price?.json)
        return w.value
    }
}

/// A billing problem: grace period (access kept) or billing retry / on hold (no access).
public struct RenewalFailed: Hashable, Sendable {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var gracePeriodExpiresAt: Timestamp?
    public var inBillingRetry: Bool

    public init(channel: Channel, originalTransactionId: String, notificationId: String, gracePeriodExpiresAt: Timestamp? = nil, inBillingRetry: Bool) {
        self.channel = channel; self.originalTransactionId = originalTransactionId; self.notificationId = notificationId
        self.gracePeriodExpiresAt = gracePeriodExpiresAt; self.inBillingRetry = inBillingRetry
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); originalTransactionId = try r.string("originalTransactionId")
        notificationId = try r.string("notificationId"); gracePeriodExpiresAt = try r.optionalTimestamp("gracePeriodExpiresAt")
        inBillingRetry = try r.bool("inBillingRetry")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("originalTransactionId", originalTransactionId); w.set("notificationId", notificationId)
        w.set("gracePeriodExpiresAt", gracePeriodExpiresAt); w.set("inBillingRetry", inBillingRetry)
        return w.value
    }
}

public struct AutoRenewChanged: Hashable, Sendable {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var enabled: Bool

    public init(channel: Channel, originalTransactionId: String, notificationId: String, enabled: Bool) {
        self.channel = channel; self.originalTransactionId = originalTransactionId; self.notificationId = notificationId; self.enabled = enabled
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); originalTransactionId = try r.string("originalTransactionId")
        notificationId = try r.string("notificationId"); enabled = try r.bool("enabled")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("originalTransactionId", originalTransactionId)
        w.set("notificationId", notificationId); w.set("enabled", enabled)
        return w.value
    }
}

/// Upgrade (immediate) or downgrade (at the next renewal) within a subscription group.
public struct PlanChanged: Hashable, Sendable {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var toProductId: String
    public var effective: PlanChangeEffect

    public init(channel: Channel, originalTransactionId: String, notificationId: String, toProductId: String, effective: PlanChangeEffect) {
        self.channel = channel; self.originalTransactionId = originalTransactionId; self.notificationId = notificationId
        self.toProductId = toProductId; self.effective = effective
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); originalTransactionId = try r.string("originalTransactionId")
        notificationId = try r.string("notificationId"); toProductId = try r.string("toProductId")
        effective = try r.choice("effective", PlanChangeEffect.self)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("originalTransactionId", originalTransactionId); w.set("notificationId", notificationId)
        w.set("toProductId", toProductId); w.set("effective", effective)
        return w.value
    }
}

public struct SubscriptionExpired: Hashable, Sendable {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var reason: ExpirationReason

    public init(channel: Channel, originalTransactionId: String, notificationId: String, reason: ExpirationReason) {
        self.channel = channel; self.originalTransactionId = originalTransactionId; self.notificationId = notificationId; self.reason = reason
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); originalTransactionId = try r.string("originalTransactionId")
        notificationId = try r.string("notificationId"); reason = try r.open("reason", ExpirationReason.self)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("originalTransactionId", originalTransactionId)
        w.set("notificationId", notificationId); w.set("reason", reason)
        return w.value
    }
}

/// RefundRequested, RefundDeclined and RefundReversed: a transaction and the notification that said so.
public struct RefundNotice: Hashable, Sendable {
    public var channel: Channel
    public var transactionId: String
    public var notificationId: String?

    public init(channel: Channel, transactionId: String, notificationId: String? = nil) {
        self.channel = channel; self.transactionId = transactionId; self.notificationId = notificationId
    }

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); transactionId = try r.string("transactionId")
        notificationId = try r.optionalString("notificationId")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("transactionId", transactionId); w.set("notificationId", notificationId)
        return w.value
    }
}

/// Money returned to the buyer, in full or in part.
public struct Refunded: Hashable, Sendable {
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

    init(_ r: inout PayloadReader) throws(FactError) {
        channel = try r.choice("channel", Channel.self); transactionId = try r.string("transactionId")
        refundId = try r.string("refundId")
        var a = try r.object("amount")
        amount = try Money.read(&a)
        refundedAt = try r.timestamp("refundedAt"); reason = try r.optionalString("reason")
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("channel", channel); w.set("transactionId", transactionId); w.set("refundId", refundId)
        w.set("amount", amount.json); w.set("refundedAt", refundedAt); w.set("reason", reason)
        return w.value
    }
}

public struct OrderClosed: Hashable, Sendable {
    public var orderId: String
    public var reason: CloseReason

    public init(orderId: String, reason: CloseReason) { self.orderId = orderId; self.reason = reason }

    init(_ r: inout PayloadReader) throws(FactError) {
        orderId = try r.string("orderId"); reason = try r.open("reason", CloseReason.self)
    }

    var payload: JSONValue {
        var w = PayloadWriter()
        w.set("orderId", orderId); w.set("reason", reason)
        return w.value
    }
}
