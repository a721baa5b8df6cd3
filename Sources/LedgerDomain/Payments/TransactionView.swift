import Foundation
import LedgerCore
import LedgerFoldStore

/// A move of a transaction to another user.
public struct TransferRecord: Hashable, Sendable, Codable {
    public var fromUserId: String?
    public var toUserId: String
    public var orderId: String?
    public var method: TransferMethod
    public var position: Int64
}

public struct BindingRecord: Hashable, Sendable, Codable {
    public var orderId: String?
    public var userId: String
    public var method: BindingMethod
    public var position: Int64
}

/// One store transaction: what the rules owe for it and what fulfilment granted.
public struct TransactionView: Hashable, Sendable, Codable {
    /// A verification the store refused.
    public struct FailedVerification: Hashable, Sendable, Codable {
        public var code: Int64
        public var retryable: Bool
        public var position: Int64
    }

    /// A client or notification that reported the transaction for a user or order.
    public struct Report: Hashable, Sendable, Codable {
        public var userId: String?
        public var orderId: String?
        public var position: Int64
    }

    /// The store's id: unique per channel and app, not across them.
    public var transactionId: String
    /// The fold's key: `transactionId`, unless another channel or app uses the same id.
    public var key: String
    /// The app (bundleId, packageName, appid), once a fact names it.
    public var app: String?
    public var originalTransactionId: String?
    public var productId: String?
    public var quantity: Int64 = 1
    public var price: Money?
    public var bindings = Few<BindingRecord>()
    /// Users and orders named by client reports of this transaction (no user: a signed-out app).
    public var reports = Few<Report>()
    public var grants = Few<GrantRecord>()
    public var positions = PositionList()
    /// The user of the subscription this period belongs to now (renewals need no binding of their
    /// own); every period's but the original's.
    public var subscriptionUserId: String?
    // Optional dates and positions in eight bytes each, and the one-byte fields side by side: as
    // `Timestamp?`s between them, each took sixteen bytes and each flag eight.
    @CompactTimestamp public var purchaseDate: Timestamp?
    @CompactTimestamp public var expiresDate: Timestamp?
    @CompactInt64 public var verifiedPosition: Int64?
    /// `occurredAt` of the fact at `verifiedPosition` (PaymentVerified or SubscriptionRenewed): the
    /// missing-grant window runs from it.
    @CompactTimestamp public var verifiedAt: Timestamp?
    /// Google: when the purchase was acknowledged.
    @CompactTimestamp public var acknowledgedAt: Timestamp?
    /// The order the store signed this purchase for, as the app set it: Apple's appAccountToken,
    /// Google's obfuscatedExternalAccountId or WeChat's out_trade_no (an order's id, or the token it
    /// was minted with; an id that names no order of ours, such as a hash of the user's account,
    /// decides nothing). A UUID
    /// in 16 bytes (``CompactText``), not a string of 36 bytes out of line for each transaction;
    /// beside the one-byte fields, which fill the rest of its last eight bytes.
    private var signedToken = CompactText()
    public var accountToken: String? {
        get { signedToken.text }
        set { signedToken = CompactText(newValue) }
    }
    /// The token as kept (nil: none), compared without making its text.
    var accountTokenValue: CompactText? { signedToken == CompactText() ? nil : signedToken }
    public var channel: Channel?
    /// One byte each: `Production` and `PURCHASED`, or another known value; others apart.
    private var environmentCode = KnownCode(StoreEnvironment.production)!
    private var ownershipCode = KnownCode(Ownership.purchased)!
    public var isRenewal = false
    /// What refund requests and declines said, before any refund.
    public var noticeState: RefundState = .none
    public var upgraded = false
    /// A renewal known only from SubscriptionRenewed: its environment and ownership are its
    /// subscription's, and follow them when the subscription's purchase is verified after it.
    public var termsFromSubscription = false

    public var environment: StoreEnvironment {
        get { environmentCode.value ?? unknownValues[0].environment! }
        set {
            environmentCode = KnownCode(newValue) ?? .unknown
            setUnknown(\.environment, environmentCode.value == nil ? newValue : nil)
        }
    }
    public var ownership: Ownership {
        get { ownershipCode.value ?? unknownValues[0].ownership! }
        set {
            ownershipCode = KnownCode(newValue) ?? .unknown
            setUnknown(\.ownership, ownershipCode.value == nil ? newValue : nil)
        }
    }

    /// Values the codes do not cover: none (no memory) nearly always.
    private var unknownValues: [UnknownValues] = []
    struct UnknownValues: Hashable, Sendable, Codable {
        var environment: StoreEnvironment?
        var ownership: Ownership?
    }

    private mutating func setUnknown<V>(_ field: WritableKeyPath<UnknownValues, V?>, _ value: V?) {
        if unknownValues.isEmpty {
            guard value != nil else { return }
            unknownValues.append(UnknownValues())
        }
        unknownValues[0][keyPath: field] = value
        if unknownValues[0] == UnknownValues() { unknownValues = [] }
    }
    /// What few transactions have, out of line: none (no memory) until one of its fields is set.
    var extras: [Extras] = []

    /// What happens to few transactions: failed verifications, refunds, revocations, voids,
    /// transfers, upgrades. Inline, these fields made every view 136 bytes larger (a tenth of a
    /// 10-million-fact fold's memory); out of line, a transaction without them pays 8 bytes.
    struct Extras: Hashable, Sendable, Codable {
        var failedVerifications: [FailedVerification] = []
        var refunds: [RefundRecord] = []
        var reversals: [ReversalRecord] = []
        var refundPositions: [Int64] = []
        var storeRevokedPosition: Int64?
        var storeRevokedAt: Timestamp?
        var voidedQuantity: Int64?
        var voidedPosition: Int64?
        var voidedAt: Timestamp?
        var transfers: [TransferRecord] = []
        var revocations: [RevocationRecord] = []
        var upgradedAt: Timestamp?
        var revokedAtByStore: Timestamp?
        var voidedAtByStore: Timestamp?
    }

    /// The extras to change, made when there are none yet.
    private var changingExtras: Extras {
        get { extras.first ?? Extras() }
        _modify {
            if extras.isEmpty { extras.append(Extras()) }
            yield &extras[0]
        }
    }

    public var failedVerifications: [FailedVerification] {
        get { extras.isEmpty ? [] : extras[0].failedVerifications }
        _modify { yield &changingExtras.failedVerifications }
    }
    /// Refunds that returned money, by the store's dates (see ``standingRefunds``).
    public var refunds: [RefundRecord] {
        get { extras.isEmpty ? [] : extras[0].refunds }
        _modify { yield &changingExtras.refunds }
    }
    public var reversals: [ReversalRecord] {
        get { extras.isEmpty ? [] : extras[0].reversals }
        _modify { yield &changingExtras.reversals }
    }
    public var refundPositions: [Int64] {
        get { extras.isEmpty ? [] : extras[0].refundPositions }
        _modify { yield &changingExtras.refundPositions }
    }
    /// Position and `occurredAt` of the latest store revocation naming this transaction (Apple
    /// REVOKE, Google SUBSCRIPTION_REVOKED, a voided purchase): like a full refund, the grant must
    /// be taken back.
    public var storeRevokedPosition: Int64? {
        get { extras.isEmpty ? nil : extras[0].storeRevokedPosition }
        _modify { yield &changingExtras.storeRevokedPosition }
    }
    public var storeRevokedAt: Timestamp? {
        get { extras.isEmpty ? nil : extras[0].storeRevokedAt }
        _modify { yield &changingExtras.storeRevokedAt }
    }
    /// A partial void (Google refundType 2): the quantity voided, and the position of the void.
    public var voidedQuantity: Int64? {
        get { extras.isEmpty ? nil : extras[0].voidedQuantity }
        _modify { yield &changingExtras.voidedQuantity }
    }
    public var voidedPosition: Int64? {
        get { extras.isEmpty ? nil : extras[0].voidedPosition }
        _modify { yield &changingExtras.voidedPosition }
    }
    public var voidedAt: Timestamp? {
        get { extras.isEmpty ? nil : extras[0].voidedAt }
        _modify { yield &changingExtras.voidedAt }
    }
    /// When the store took the purchase back whole, by its own clock (a whole void's `voidedAt`, a
    /// StoreRevoked's `revokedAt`, a REVOKE notification's `signedDate`; the earliest):
    /// ``storeRevokedAt`` is the log's time. Nil when the store gave none.
    public var revokedAtByStore: Timestamp? {
        get { extras.isEmpty ? nil : extras[0].revokedAtByStore }
        _modify { yield &changingExtras.revokedAtByStore }
    }
    /// When the store voided part of the purchase (``voidedQuantity``), by its own clock
    /// (``voidedAt`` is the log's time).
    public var voidedAtByStore: Timestamp? {
        get { extras.isEmpty ? nil : extras[0].voidedAtByStore }
        _modify { yield &changingExtras.voidedAtByStore }
    }
    /// A partial void recorded before the verification said how many were bought: when it covers
    /// every unit, it becomes the store's revocation, from the void's position. True when it did.
    mutating func voidIsWhole() -> Bool {
        guard let q = voidedQuantity, q >= quantity, storeRevokedPosition == nil else { return false }
        storeRevokedPosition = voidedPosition
        storeRevokedAt = voidedAt
        revokedAtByStore = voidedAtByStore
        voidedQuantity = nil
        voidedPosition = nil
        voidedAt = nil
        voidedAtByStore = nil
        return true
    }
    /// Moves to other users, in log order: the last one names the owner.
    public var transfers: [TransferRecord] {
        get { extras.isEmpty ? [] : extras[0].transfers }
        _modify { yield &changingExtras.transfers }
    }
    public var revocations: [RevocationRecord] {
        get { extras.isEmpty ? [] : extras[0].revocations }
        _modify { yield &changingExtras.revocations }
    }
    /// When an immediate upgrade ended its period.
    public var upgradedAt: Timestamp? {
        get { extras.isEmpty ? nil : extras[0].upgradedAt }
        _modify { yield &changingExtras.upgradedAt }
    }

    public init(transactionId: String, key: String? = nil) {
        self.transactionId = transactionId
        self.key = key ?? transactionId
    }

    public static func == (a: TransactionView, b: TransactionView) -> Bool {
        a.key == b.key && a.positions == b.positions
    }
    public func hash(into h: inout Hasher) {
        h.combine(key)
        h.combine(positions)
    }

    public var verified: Bool { verifiedPosition != nil }
    /// A renewal the store signed nothing of its own for: no token on it, no binding by one
    /// (StoreKit 1, Google without an account id). It is its subscription's, whoever a weaker
    /// binding of its own names. A renewal with a token, or bound by one, is a purchase the store
    /// signed for that order: Apple keeps the original transaction id for every purchase in a
    /// subscription group on one Apple ID, whichever account of the app buys it.
    public var isUnsignedRenewal: Bool {
        isRenewal && accountToken == nil && !(bindings.first?.method.isSignedToken ?? false)
    }

    /// The user it belongs to: the last move's; else, for an unsigned renewal
    /// (``isUnsignedRenewal``), its subscription's user (a weaker binding of the renewal's own to
    /// another account presents it there, it does not move it); else its first binding's, else its
    /// subscription's user.
    public var userId: String? {
        transfers.last?.toUserId ?? (isUnsignedRenewal ? subscriptionUserId : nil) ?? bindings.first?.userId
            ?? subscriptionUserId
    }
    public var orderId: String? { transfers.last(where: { $0.orderId != nil })?.orderId ?? bindings.first?.orderId }
    /// Sandbox, Xcode and local testing purchases are shown apart: no revenue, no money at risk, no finding.
    public var isSandbox: Bool { environment != .production }
    /// Money the purchase itself brought: none for a sandbox purchase or a family-shared copy.
    public var revenue: Money? { isSandbox || ownership == .familyShared ? nil : price }
    public var activeGrants: Few<GrantRecord> { Few(grants.lazy.filter { $0.revokedAt == nil }) }
    /// How many grants are active, without listing them.
    public var activeGrantCount: Int { grants.reduce(0) { $1.revokedAt == nil ? $0 + 1 : $0 } }
}
