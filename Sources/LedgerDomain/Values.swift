import LedgerCore

/// What a store product gives, or what fulfilment granted.
public enum Entitlement: Hashable, Sendable {
    /// A consumable: this many coins per unit bought.
    case coins(Int64)
    /// A non-consumable feature owned forever (`no_ads`).
    case feature(String)
    /// An auto-renewable subscription: each paid period adds `periodDays` of `entitlement`.
    /// `rank` orders products within a group (higher is an upgrade).
    case subscription(entitlement: String, group: String, periodDays: Int64, rank: Int64)
    /// A non-renewing period of `entitlement` (a VIP quarter).
    case period(entitlement: String, days: Int64)

    public static func read(_ r: inout PayloadReader) throws(FactError) -> Entitlement {
        let kind = try r.string("kind")
        let e: Entitlement
        switch kind {
        case "coins": e = .coins(try r.int("amount", min: 1, max: 1_000_000_000))
        case "feature": e = .feature(try r.string("feature"))
        case "subscription":
            e = .subscription(entitlement: try r.string("entitlement"), group: try r.string("group"),
                              periodDays: try r.int("periodDays", min: 1, max: 3660), rank: try r.optionalInt("rank", min: 0, max: 1000) ?? 0)
        case "period": e = .period(entitlement: try r.string("entitlement"), days: try r.int("days", min: 1, max: 36600))
        default: throw r.fail("kind", "must be one of coins, feature, subscription, period (got \"\(kind)\")")
        }
        try r.finish()
        return e
    }

    public var json: JSONValue {
        var w = PayloadWriter()
        switch self {
        case .coins(let n): w.set("kind", "coins"); w.set("amount", n)
        case .feature(let f): w.set("kind", "feature"); w.set("feature", f)
        case .subscription(let e, let g, let d, let rank):
            w.set("kind", "subscription"); w.set("entitlement", e); w.set("group", g); w.set("periodDays", d)
            if rank != 0 { w.set("rank", rank) }
        case .period(let e, let d): w.set("kind", "period"); w.set("entitlement", e); w.set("days", d)
        }
        return w.value
    }

    /// The entitlement name a period feeds (`vip`), nil for coins and features.
    public var periodEntitlement: String? {
        switch self {
        case .subscription(let e, _, _, _), .period(let e, _): return e
        default: return nil
        }
    }

    public var periodDays: Int64? {
        switch self {
        case .subscription(_, _, let d, _): return d
        case .period(_, let d): return d
        default: return nil
        }
    }
}

extension Money {
    /// `{"amount": 600, "currency": "CNY", "storeMilliunits": 6000}`; milliunits, when given, must
    /// equal the amount exactly.
    static func read(_ r: inout PayloadReader, allowNegative: Bool = false) throws(FactError) -> Money {
        let amount = try r.int("amount", min: allowNegative ? -1_000_000_000_000 : 0, max: 1_000_000_000_000)
        let currency = try r.currency("currency")
        let money = Money(minorUnits: amount, currency: currency)
        if let milli = try r.optionalInt("storeMilliunits", min: 0) {
            guard let m = Money(milliunits: milli, currency: currency) else {
                throw r.fail("storeMilliunits", "\(milli) milliunits is not a whole number of \(currency.code) minor units")
            }
            guard m == money else {
                throw r.fail("storeMilliunits", "\(milli) milliunits is \(m), but amount says \(money)")
            }
        }
        try r.finish()
        return money
    }

    public var json: JSONValue {
        var w = PayloadWriter()
        w.set("amount", minorUnits)
        w.set("currency", currency.code)
        return w.value
    }
}

public struct CallbackState: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let purchased = CallbackState(raw: "purchased")
    public static let failed = CallbackState(raw: "failed")
    public static let cancelled = CallbackState(raw: "cancelled")
    public static let deferred = CallbackState(raw: "deferred")
    public static let restored = CallbackState(raw: "restored")
}

/// Apple `inAppOwnershipType`: PURCHASED, FAMILY_SHARED.
public struct Ownership: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let purchased = Ownership(raw: "PURCHASED")
    public static let familyShared = Ownership(raw: "FAMILY_SHARED")
}

/// Production, Sandbox, Xcode, LocalTesting...
public struct StoreEnvironment: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let production = StoreEnvironment(raw: "Production")
    public static let sandbox = StoreEnvironment(raw: "Sandbox")
}

/// A store notification's type or subtype (Apple `DID_RENEW`, Google `2`/`SUBSCRIPTION_RENEWED`,
/// WeChat `TRANSACTION.SUCCESS`), kept as the store sent it.
public struct NotificationType: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
}

public struct RevocationReason: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let refund = RevocationReason(raw: "refund")
    public static let revoke = RevocationReason(raw: "revoke")
    public static let familyRevoke = RevocationReason(raw: "family-revoke")
    public static let chargeback = RevocationReason(raw: "chargeback")
    public static let support = RevocationReason(raw: "support")
    public static let known: [RevocationReason] = [.refund, .revoke, .familyRevoke, .chargeback, .support]
}

public struct ExpirationReason: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let voluntary = ExpirationReason(raw: "voluntary")
    public static let billingRetry = ExpirationReason(raw: "billing-retry")
    public static let priceIncrease = ExpirationReason(raw: "price-increase")
    public static let productNotForSale = ExpirationReason(raw: "product-not-for-sale")
}

public struct CloseReason: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let timeout = CloseReason(raw: "timeout")
    public static let userCancel = CloseReason(raw: "user-cancel")
    public static let storeClosed = CloseReason(raw: "store-closed")
}

/// How a store transaction was tied to an order (domain.md section 4), in order of trust.
public enum BindingMethod: String, CaseIterable, Sendable, Hashable {
    case appAccountToken
    case applicationUsername
    case skuFallback = "sku-fallback"
    case createdAfterPayment = "created-after-payment"
    case manual
}

public enum PlanChangeEffect: String, CaseIterable, Sendable, Hashable {
    /// An upgrade: takes effect at once.
    case immediate
    /// A downgrade or crossgrade: takes effect at the next renewal.
    case nextRenewal = "next-renewal"
}
