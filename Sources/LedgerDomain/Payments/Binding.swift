import Foundation
import LedgerCore

/// An order as binding sees it.
public struct OrderCandidate: Hashable, Sendable {
    public var orderId: String
    public var userId: String
    public var channel: Channel
    public var productId: String
    public var accountToken: String?
    /// Not yet paid and not closed.
    public var isOpen: Bool
    /// The app it is bought in, when the order says.
    public var app: String?

    public init(
        orderId: String, userId: String, channel: Channel, productId: String, accountToken: String?, app: String? = nil,
        isOpen: Bool
    ) {
        self.orderId = orderId
        self.userId = userId
        self.channel = channel
        self.productId = productId
        self.accountToken = accountToken
        self.isOpen = isOpen
        self.app = app
    }

    /// Whether a transaction of `channel` and `app` can be this order's: same channel, and no two
    /// different apps named.
    public func admits(_ channel: Channel, _ app: String?) -> Bool {
        self.channel == channel && (self.app == nil || app == nil || self.app == app)
    }
}

/// What binding decided for a verified store transaction.
public enum BindingDecision: Hashable, Sendable {
    /// Bound to an existing order: append this `TransactionBound`.
    case bound(TransactionBound)
    /// The user is known but has no order for it (a purchase from the phone's settings page):
    /// create an order after payment, then append this `TransactionBound`.
    case createOrderAfterPayment(TransactionBound)
    /// Nothing ties it to a user: an orphan payment until someone binds it by hand.
    case unbound(reason: String)
}

/// Binding a store transaction to an order (docs/domain.md, binding), in order of trust:
/// appAccountToken (or WeChat out_trade_no) > Google obfuscatedExternalAccountId > applicationUsername > the one open order of that user
/// for that product (sku fallback) > an order created after payment > manual.
public enum Binding {
    /// - Parameters:
    ///   - transaction: the verified transaction.
    ///   - callbacks: the app's reports of this transaction (each carries the signed-in user).
    ///   - outTradeNo: WeChat's out_trade_no from a notification, if any.
    ///   - orders: the orders that might match (any state); looked up by id, token and user.
    ///   - newOrderId: the id to give an order created after payment.
    public static func decide(
        transaction t: PaymentVerified, callbacks: [ClientCallbackReceived], outTradeNo: String? = nil,
        orders: [OrderCandidate], newOrderId: (String) -> String = { "after-payment:\($0)" }
    ) -> BindingDecision {
        func bound(_ o: OrderCandidate, _ m: BindingMethod) -> BindingDecision {
            .bound(
                TransactionBound(
                    channel: t.channel, transactionId: t.transactionId, orderId: o.orderId, userId: o.userId, method: m,
                    app: t.app, merchant: t.merchant))
        }
        // Only an order of the transaction's channel and app: two apps may share a transaction id.
        let orders = orders.filter { $0.admits(t.channel, t.app) }
        func minted(_ token: String?) -> OrderCandidate? {
            guard let token else { return nil }
            return orders.first { $0.accountToken?.lowercased() == token.lowercased() || $0.orderId == token }
        }
        if let o = minted(t.appAccountToken?.lowercased ?? outTradeNo ?? t.outTradeNo) {
            return bound(o, .appAccountToken)
        }
        // Google's obfuscatedExternalAccountId, set by the app at purchase: as strong as a token.
        if let o = minted(t.obfuscatedAccountId) { return bound(o, .obfuscatedAccountId) }
        for c in callbacks where c.state == .purchased || c.state == .restored {
            for hint in [c.applicationUsername, c.orderId].compactMap({ $0 }) {
                if let o = orders.first(where: { $0.orderId == hint }) {
                    return bound(o, .applicationUsername)
                }
            }
        }
        let users = Set(callbacks.compactMap(\.userId)).sorted()
        // The sku fallback and an order after payment trust the one user who reported it: a
        // transaction reported by two users is bound by token or hint, or by hand.
        if let user = users.first, users.count == 1 {
            let open = orders.filter { $0.userId == user && $0.productId == t.productId && $0.isOpen }
            if open.count == 1 { return bound(open[0], .skuFallback) }
            return .createOrderAfterPayment(
                TransactionBound(
                    channel: t.channel, transactionId: t.transactionId,
                    orderId: newOrderId(t.transactionId), userId: user, method: .createdAfterPayment,
                    app: t.app, merchant: t.merchant))
        }
        if users.count > 1 {
            return .unbound(
                reason:
                    "reported by \(users.count) users (\(users.joined(separator: ", "))) and no token or order hint decides between them: bind manually"
            )
        }
        return .unbound(
            reason: "no appAccountToken, no order hint and no client report: an orphan payment until bound manually")
    }
}
