import LedgerCore

public struct BindingRecord: Hashable, Sendable {
    public var orderId: String?
    public var userId: String
    public var method: BindingMethod
    public var position: Int64
}

/// One store transaction: what the rules owe for it and what fulfilment granted.
public struct TransactionView: Hashable, Sendable {
    public var transactionId: String
    public var channel: Channel?
    public var originalTransactionId: String?
    public var productId: String?
    public var quantity: Int64 = 1
    public var purchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var price: Money?
    public var appAccountToken: String?
    public var verifiedPosition: Int64?
    /// `occurredAt` of the fact at `verifiedPosition` (PaymentVerified or SubscriptionRenewed): the
    /// missing-grant window runs from it.
    public var verifiedAt: Timestamp?
    public var failedVerifications: [(code: Int64, retryable: Bool, position: Int64)] = []
    public var isRenewal = false
    public var bindings: [BindingRecord] = []
    /// Users and orders named by client reports of this transaction.
    public var reports: [(userId: String, orderId: String?, position: Int64)] = []
    public var refunds: [String: Money] = [:]
    public var refundState: RefundState = .none
    public var refundPositions: [Int64] = []
    /// Position and `occurredAt` of the latest Refunded fact (the refund-not-revoked window runs from it).
    public var refundedPosition: Int64?
    public var refundedAt: Timestamp?
    /// Position and `occurredAt` of the latest verified Apple REVOKE notification naming this
    /// transaction (family sharing withdrawn): like a full refund, the grant must be taken back.
    public var storeRevokedPosition: Int64?
    public var storeRevokedAt: Timestamp?
    public var grants: [GrantRecord] = []
    public var revocations: [RevocationRecord] = []
    public var upgraded = false
    public var positions: [Int64] = []
    /// The user of the subscription this renewal belongs to (renewals need no binding of their own).
    public var subscriptionUserId: String?

    public init(transactionId: String) { self.transactionId = transactionId }

    public static func == (a: TransactionView, b: TransactionView) -> Bool { a.transactionId == b.transactionId && a.positions == b.positions }
    public func hash(into h: inout Hasher) { h.combine(transactionId); h.combine(positions) }

    public var verified: Bool { verifiedPosition != nil }
    /// The user it belongs to: its first binding, else its subscription's user.
    public var userId: String? { bindings.first?.userId ?? subscriptionUserId }
    public var orderId: String? { bindings.first?.orderId }
    public var activeGrants: [GrantRecord] { grants.filter { $0.revokedAt == nil } }
}
