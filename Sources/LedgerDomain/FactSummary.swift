extension Entitlement: CustomStringConvertible {
    public var description: String {
        switch self {
        case .coins(let n): return "\(n) coins"
        case .feature(let f): return "feature \(f)"
        case .subscription(let e, let g, let d, _): return "\(e) subscription (\(g)) \(d) days"
        case .period(let e, let d): return "\(e) \(d) days"
        }
    }
}

extension Fact {
    /// One readable line: what happened, with the ids that matter.
    public var summary: String {
        switch self {
        case .productDefined(let f), .productChanged(let f):
            return "\(f.channel.rawValue) \(f.storeProductId) v\(f.version) -> \(f.entitlement) from \(f.validFrom.iso8601)"
        case .orderCreated(let f): return "order \(f.orderId) by \(f.userId): \(f.productId) for \(f.price) (\(f.channel.rawValue))"
        case .paymentLaunched(let f): return "order \(f.orderId) payment launched (attempt \(f.attempt))"
        case .clientCallbackReceived(let f):
            return "app of \(f.userId) reported \(f.state.raw) \(f.productId)" + (f.transactionId.map { " tx \($0)" } ?? "")
                + (f.orderId.map { " order \($0)" } ?? "") + (f.applicationUsername.map { " applicationUsername \($0)" } ?? "")
        case .storeNotificationReceived(let f):
            return "\(f.channel.rawValue) notification \(f.notificationId) \(f.type.raw)" + (f.subtype.map { "/\($0.raw)" } ?? "")
                + (f.transactionId.map { " tx \($0)" } ?? "")
        case .paymentVerified(let f):
            return "verified \(f.channel.rawValue) tx \(f.transactionId) \(f.productId) x\(f.quantity) \(f.price)"
                + (f.expiresDate.map { " expires \($0.iso8601)" } ?? "")
        case .verificationFailed(let f): return "verification of tx \(f.transactionId) failed: code \(f.code)\(f.retryable ? " (retryable)" : "")"
        case .transactionBound(let f): return "tx \(f.transactionId) bound to \(f.orderId.map { "order \($0)" } ?? "no order") of \(f.userId) by \(f.method.rawValue)"
        case .entitlementGranted(let f): return "granted \(f.entitlement) x\(f.quantity) to \(f.userId) for tx \(f.transactionId) (grant \(f.grantId))"
        case .entitlementRevoked(let f): return "revoked tx \(f.transactionId) from \(f.userId) (\(f.reason.raw))"
        case .coinsSpent(let f): return "\(f.userId) spent \(f.amount) coins" + (f.item.map { " on \($0)" } ?? "")
        case .subscriptionRenewed(let f): return "renewed \(f.originalTransactionId) with tx \(f.transactionId) until \(f.expiresDate.iso8601)"
        case .renewalFailed(let f):
            return "renewal of \(f.originalTransactionId) failed" + (f.gracePeriodExpiresAt.map { ", grace until \($0.iso8601)" } ?? "")
                + (f.inBillingRetry ? ", billing retry" : "")
        case .autoRenewChanged(let f): return "auto-renew of \(f.originalTransactionId) \(f.enabled ? "on" : "off")"
        case .planChanged(let f): return "\(f.originalTransactionId) changes to \(f.toProductId) (\(f.effective.rawValue))"
        case .subscriptionExpired(let f): return "\(f.originalTransactionId) expired (\(f.reason.raw))"
        case .refundRequested(let f): return "refund requested for tx \(f.transactionId)"
        case .refundDeclined(let f): return "refund declined for tx \(f.transactionId)"
        case .refunded(let f): return "refunded \(f.amount) of tx \(f.transactionId)" + (f.reason.map { " (\($0))" } ?? "")
        case .refundReversed(let f): return "refund of tx \(f.transactionId) reversed"
        case .orderClosed(let f): return "order \(f.orderId) closed (\(f.reason.raw))"
        }
    }
}
