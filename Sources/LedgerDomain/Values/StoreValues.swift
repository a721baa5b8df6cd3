import LedgerCore

public enum Channel: String, CaseIterable, Sendable, Hashable, Comparable, Codable {
    case appstore, googleplay, wechat
    public static func < (a: Channel, b: Channel) -> Bool { a.rawValue < b.rawValue }
}

/// A store enum whose unknown values are kept raw, never dropped or refused: Apple and Google add
/// values without notice (Apple's own library keeps a `raw` twin of every enum).
public protocol OpenEnum: Hashable, Sendable, CustomStringConvertible {
    init(raw: String)
    var raw: String { get }
    /// The values known today (published in the schema; others are accepted all the same).
    static var known: [Self] { get }
}

extension OpenEnum {
    public var description: String { raw }
}

public struct CallbackState: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let purchased = CallbackState(raw: "purchased")
    public static let failed = CallbackState(raw: "failed")
    public static let cancelled = CallbackState(raw: "cancelled")
    public static let deferred = CallbackState(raw: "deferred")
    public static let restored = CallbackState(raw: "restored")
    public static let known: [CallbackState] = [.purchased, .failed, .cancelled, .deferred, .restored]
}

/// Apple `inAppOwnershipType`: PURCHASED, FAMILY_SHARED.
public struct Ownership: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let purchased = Ownership(raw: "PURCHASED")
    public static let familyShared = Ownership(raw: "FAMILY_SHARED")
    public static let known: [Ownership] = [.purchased, .familyShared]
}

/// Production, Sandbox, Xcode, LocalTesting...
public struct StoreEnvironment: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let production = StoreEnvironment(raw: "Production")
    public static let sandbox = StoreEnvironment(raw: "Sandbox")
    public static let xcode = StoreEnvironment(raw: "Xcode")
    public static let localTesting = StoreEnvironment(raw: "LocalTesting")
    public static let known: [StoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
}

/// A store notification's type or subtype (Apple `DID_RENEW`, Google `2`/`SUBSCRIPTION_RENEWED`,
/// WeChat `TRANSACTION.SUCCESS`), kept as the store sent it.
public struct NotificationType: OpenEnum {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    /// Examples of each store's spelling (the stores have many more).
    public static let known: [NotificationType] = [
        "DID_RENEW", "REFUND", "CONSUMPTION_REQUEST", "SUBSCRIPTION_RENEWED", "2",
        "TRANSACTION.SUCCESS", "REFUND.SUCCESS",
    ].map(NotificationType.init(raw:))
}

public struct RevocationReason: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let refund = RevocationReason(raw: "refund")
    public static let revoke = RevocationReason(raw: "revoke")
    public static let familyRevoke = RevocationReason(raw: "family-revoke")
    public static let chargeback = RevocationReason(raw: "chargeback")
    public static let support = RevocationReason(raw: "support")
    /// The unused part of a period ended early by an immediate upgrade (the store refunds it pro rata).
    public static let upgrade = RevocationReason(raw: "upgrade")
    public static let known: [RevocationReason] = [.refund, .revoke, .familyRevoke, .chargeback, .support, .upgrade]
}

public struct ExpirationReason: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let voluntary = ExpirationReason(raw: "voluntary")
    public static let billingRetry = ExpirationReason(raw: "billing-retry")
    public static let priceIncrease = ExpirationReason(raw: "price-increase")
    public static let productNotForSale = ExpirationReason(raw: "product-not-for-sale")
    /// The store gave no reason (Apple EXPIRED without a subtype, Google SUBSCRIPTION_EXPIRED).
    public static let unspecified = ExpirationReason(raw: "unspecified")
    /// Google: replaced by another purchase token (never sent by a store: the ledger's own reading).
    public static let superseded = ExpirationReason(raw: "superseded")
    public static let known: [ExpirationReason] = [.voluntary, .billingRetry, .priceIncrease, .productNotForSale]
}

public struct CloseReason: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    public static let timeout = CloseReason(raw: "timeout")
    public static let userCancel = CloseReason(raw: "user-cancel")
    public static let storeClosed = CloseReason(raw: "store-closed")
    public static let known: [CloseReason] = [.timeout, .userCancel, .storeClosed]
}

/// How a store transaction was tied to an order (docs/domain.md, binding), in order of trust.
public enum BindingMethod: String, CaseIterable, Sendable, Hashable, Codable {
    case appAccountToken
    /// Google Play `obfuscatedExternalAccountId`: set by the app at purchase, as strong as a token.
    case obfuscatedAccountId = "obfuscatedExternalAccountId"
    /// WeChat Pay: the signed `out_trade_no` of a payment notification is the order's own id.
    case outTradeNo = "out-trade-no"
    case applicationUsername
    case skuFallback = "sku-fallback"
    case createdAfterPayment = "created-after-payment"
    case manual

    /// Made by a value the store signed for the order (a token, or WeChat's out_trade_no).
    public var isSignedToken: Bool { self == .appAccountToken || self == .obfuscatedAccountId || self == .outTradeNo }
}

public enum PlanChangeEffect: String, CaseIterable, Sendable, Hashable {
    /// An upgrade: takes effect at once.
    case immediate
    /// A downgrade or crossgrade: takes effect at the next renewal.
    case nextRenewal = "next-renewal"
}
