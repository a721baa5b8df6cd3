import LedgerCore

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
    public var created: OrderCreated?
    public var launchAttempts: Int64 = 0
    public var lastCallbackState: CallbackState?
    /// The key of its bound transaction (``TransactionView/key``: the store's id unless that collides).
    public var transactionId: String?
    public var bindingMethod: BindingMethod?
    public var verifiedProductId: String?
    public var paid = false
    /// Net grants (granted minus revoked) recorded for the order's transaction.
    public var netGrants: Int64 = 0
    public var refunded: Money?
    public var closeReason: CloseReason?
    public var closedAfterPayment = false
    /// `occurredAt` of the latest PaymentLaunched (the stale-order window runs from it).
    public var launchedAt: Timestamp?
    public var positions: [Int64] = []

    public init(orderId: String) { self.orderId = orderId }

    public var userId: String? { created?.userId }
    /// The verified product differs from the ordered one.
    public var productMismatch: Bool {
        guard let v = verifiedProductId, let o = created?.productId else { return false }
        return v != o
    }

    public var status: OrderStatus {
        if created == nil && !paid { return .unknown }
        if paid, let r = refunded, r.minorUnits > 0 { return .refunded }
        if paid && netGrants > 0 { return .fulfilled }
        if paid { return .paid }
        if closeReason != nil { return .closed }
        if lastCallbackState == .purchased || lastCallbackState == .restored { return .callbackReceived }
        if launchAttempts > 0 { return .launched }
        return .created
    }
}
