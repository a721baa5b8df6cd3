import LedgerCore
import LedgerFoldStore

public enum OrderStatus: String, CaseIterable, Sendable, Hashable {
    case created, launched
    case callbackReceived = "callback-received"
    case paid, fulfilled, closed, refunded
    /// Facts name the order but its OrderCreated has not been replayed (yet).
    case unknown
}

/// One of our orders.
public struct OrderView: Hashable, Sendable, Codable {
    public var orderId: String
    /// Its OrderCreated once replayed, without the account token, which lies in `createdToken`.
    private var createdFields: OrderCreated?
    /// A UUID token in 16 bytes, not a 36-byte string out of line (see ``CompactText``).
    private var createdToken = CompactText()
    public var launchAttempts: Int64 = 0
    public var lastCallbackState: CallbackState?
    /// The key of its bound transaction (``TransactionView/key``: the store's id unless that collides).
    public var transactionId: String?
    public var verifiedProductId: String?
    /// Net grants (granted minus revoked) recorded for the order's transaction.
    public var netGrants: Int64 = 0
    public var positions = PositionList()
    /// `occurredAt` of the latest PaymentLaunched (the stale-order window runs from it); in eight
    /// bytes, and the one-byte fields after it.
    @CompactTimestamp public var launchedAt: Timestamp?
    public var bindingMethod: BindingMethod?
    public var paid = false
    /// What few orders have, out of line: none (no memory) until one of its fields is set.
    var extras: [Extras] = []

    /// Refunds and closes, which few orders have: inline they made every order 56 bytes larger.
    struct Extras: Hashable, Sendable, Codable {
        var refunded: Money?
        var closeReason: CloseReason?
        var closedAfterPayment = false
    }

    public var refunded: Money? {
        get { extras.isEmpty ? nil : extras[0].refunded }
        // Every change of the order's transaction sets it, nearly always to nil.
        set { if newValue != nil || !extras.isEmpty { changingExtras.refunded = newValue } }
    }
    public var closeReason: CloseReason? {
        get { extras.isEmpty ? nil : extras[0].closeReason }
        set { if newValue != nil || !extras.isEmpty { changingExtras.closeReason = newValue } }
    }
    public var closedAfterPayment: Bool {
        get { extras.isEmpty ? false : extras[0].closedAfterPayment }
        set { if newValue || !extras.isEmpty { changingExtras.closedAfterPayment = newValue } }
    }

    /// The extras to change, made when there are none yet.
    private var changingExtras: Extras {
        get { extras.first ?? Extras() }
        _modify {
            if extras.isEmpty { extras.append(Extras()) }
            yield &extras[0]
        }
    }

    public init(orderId: String) { self.orderId = orderId }

    /// Its OrderCreated, once replayed.
    public var created: OrderCreated? {
        get {
            guard var c = createdFields else { return nil }
            c.accountToken = createdToken.text
            return c
        }
        set {
            createdToken = CompactText(newValue?.accountToken)
            createdFields = newValue
            createdFields?.accountToken = nil
        }
    }

    // What the rules and read models read of its OrderCreated, without making the token's text.
    public var isCreated: Bool { createdFields != nil }
    public var userId: String? { createdFields?.userId }
    public var channel: Channel? { createdFields?.channel }
    public var productId: String? { createdFields?.productId }
    public var price: Money? { createdFields?.price }
    public var accountToken: String? { isCreated ? createdToken.text : nil }

    /// The verified product differs from the ordered one.
    public var productMismatch: Bool {
        guard let v = verifiedProductId, let o = productId else { return false }
        return v != o
    }

    public var status: OrderStatus {
        if !isCreated && !paid { return .unknown }
        if paid, let r = refunded, r.minorUnits > 0 { return .refunded }
        if paid && netGrants > 0 { return .fulfilled }
        if paid { return .paid }
        if closeReason != nil { return .closed }
        if lastCallbackState == .purchased || lastCallbackState == .restored { return .callbackReceived }
        if launchAttempts > 0 { return .launched }
        return .created
    }
}
