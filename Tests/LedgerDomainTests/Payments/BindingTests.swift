import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain

/// Binding a verified store transaction to an order (docs/domain.md, binding), in order of trust:
/// appAccountToken > applicationUsername > sku fallback > created after payment > manual.
@Suite("Binding")
struct BindingTests {
    static let cny = Currency("CNY")!
    static let token = UUID(uuidString: "A0000000-0000-4000-8000-000000000001")!

    func verified(
        _ tx: String = "tx1", product: String = "coins_60", channel: Channel = .appstore, token: UUID? = nil
    ) -> PaymentVerified {
        PaymentVerified(
            channel: channel, transactionId: tx, productId: product, purchaseDate: Timestamp("2026-03-01T08:00:00Z")!,
            price: Money(minorUnits: 600, currency: Self.cny), appAccountToken: token)
    }

    func order(
        _ id: String, user: String = "u1", product: String = "coins_60", channel: Channel = .appstore,
        token: String? = nil,
        open: Bool = true
    ) -> OrderCandidate {
        OrderCandidate(
            orderId: id, userId: user, channel: channel, productId: product, accountToken: token, isOpen: open)
    }

    func report(
        _ user: String = "u1", tx: String = "tx1", product: String = "coins_60", channel: Channel = .appstore,
        order: String? = nil,
        username: String? = nil, state: CallbackState = .purchased
    ) -> ClientCallbackReceived {
        ClientCallbackReceived(
            channel: channel, userId: user, orderId: order, transactionId: tx, productId: product, state: state,
            applicationUsername: username)
    }

    func bound(_ d: BindingDecision) -> TransactionBound? {
        if case .bound(let b) = d { return b }
        return nil
    }

    // MARK: tenancy

    @Test("only an order of the transaction's app binds it: the sku fallback and the token skip another app's orders")
    func appsKeepTheirOrders() {
        var main = order("o-main", user: "u1"), lite = order("o-lite", user: "u1")
        main.app = "com.example.coins"
        lite.app = "com.example.coins.lite"
        var tx = verified()
        tx.app = "com.example.coins.lite"
        let d = Binding.decide(transaction: tx, callbacks: [report()], orders: [main, lite])
        #expect(
            bound(d)?.orderId == "o-lite" && bound(d)?.method == .skuFallback
                && bound(d)?.app == "com.example.coins.lite")
        // A token minted for the other app's order does not bind across apps.
        main.accountToken = Self.token.uuidString
        tx.appAccountToken = Self.token
        #expect(bound(Binding.decide(transaction: tx, callbacks: [], orders: [main])) == nil)
        // An order that names no app (written before orders carried one) still binds.
        #expect(
            bound(
                Binding.decide(transaction: tx, callbacks: [], orders: [order("o-old", token: Self.token.uuidString)]))?
                .orderId == "o-old")
    }

    // MARK: order of trust

    @Test("appAccountToken beats applicationUsername")
    func tokenFirst() {
        let orders = [order("o-token", user: "u1", token: Self.token.uuidString), order("o-name", user: "u1")]
        let d = Binding.decide(
            transaction: verified(token: Self.token), callbacks: [report(username: "o-name")], orders: orders)
        #expect(
            bound(d)
                == TransactionBound(
                    channel: .appstore, transactionId: "tx1", orderId: "o-token", userId: "u1", method: .appAccountToken
                ))
    }

    @Test("the token binds to its order's user even when another user reports it, and case does not matter")
    func tokenOwner() {
        let orders = [order("o-token", user: "owner", token: Self.token.lowercased)]
        let d = Binding.decide(
            transaction: verified(token: Self.token), callbacks: [report("someone-else")], orders: orders)
        #expect(bound(d)?.userId == "owner")
        #expect(bound(d)?.method == .appAccountToken)
    }

    @Test("a token of another channel does not match")
    func tokenChannel() {
        let orders = [order("o-wx", channel: .wechat, token: Self.token.lowercased)]
        let d = Binding.decide(transaction: verified(token: Self.token), callbacks: [], orders: orders)
        guard case .unbound = d else {
            Issue.record("expected unbound, got \(d)")
            return
        }
    }

    @Test("applicationUsername beats sku fallback, even for another product (the mismatch is the audit's)")
    func usernameSecond() {
        let orders = [order("o-open", product: "coins_60"), order("o-named", product: "coins_300")]
        let d = Binding.decide(transaction: verified(), callbacks: [report(username: "o-named")], orders: orders)
        #expect(bound(d)?.orderId == "o-named")
        #expect(bound(d)?.method == .applicationUsername)
    }

    @Test("an order id in the client report is a hint like applicationUsername")
    func orderIdHint() {
        let orders = [order("o-open"), order("o-reported", open: false)]
        let d = Binding.decide(transaction: verified(), callbacks: [report(order: "o-reported")], orders: orders)
        #expect(bound(d)?.orderId == "o-reported")
        #expect(bound(d)?.method == .applicationUsername)
    }

    @Test("hints from failed or cancelled reports are ignored")
    func failedHints() {
        let orders = [order("o-open"), order("o-other", product: "coins_300")]
        let callbacks = [
            report(username: "o-other", state: .failed), report(username: "o-other", state: .cancelled), report(),
        ]
        let d = Binding.decide(transaction: verified(), callbacks: callbacks, orders: orders)
        #expect(bound(d)?.orderId == "o-open")
        #expect(bound(d)?.method == .skuFallback)
    }

    @Test("sku fallback beats created-after-payment: the one open order of that user and product")
    func skuThird() {
        let orders = [
            order("o-open"), order("o-paid", open: false), order("o-other-product", product: "coins_300"),
            order("o-other-user", user: "u2"), order("o-other-channel", channel: .wechat),
        ]
        let d = Binding.decide(transaction: verified(), callbacks: [report()], orders: orders)
        #expect(
            bound(d)
                == TransactionBound(
                    channel: .appstore, transactionId: "tx1", orderId: "o-open", userId: "u1", method: .skuFallback))
    }

    @Test("two open orders for the same product: no sku fallback")
    func twoOpenOrders() {
        let orders = [order("o-a"), order("o-b")]
        let d = Binding.decide(
            transaction: verified(), callbacks: [report()], orders: orders, newOrderId: { "after-\($0)" })
        #expect(bound(d) == nil)
        guard case .createOrderAfterPayment(let b) = d else {
            Issue.record("expected created-after-payment, got \(d)")
            return
        }
        #expect(b.orderId == "after-tx1" && b.userId == "u1" && b.method == .createdAfterPayment)
    }

    @Test("created after payment: the reporting user has no open order for it")
    func createdAfterPayment() {
        let orders = [order("o-closed", open: false), order("o-other", product: "coins_300")]
        let d = Binding.decide(transaction: verified(), callbacks: [report(), report()], orders: orders)
        guard case .createOrderAfterPayment(let b) = d else {
            Issue.record("expected created-after-payment, got \(d)")
            return
        }
        #expect(
            b
                == TransactionBound(
                    channel: .appstore, transactionId: "tx1", orderId: "after-payment:tx1", userId: "u1",
                    method: .createdAfterPayment))
    }

    @Test("the method order is the order of trust")
    func trustOrder() {
        #expect(
            BindingMethod.allCases == [
                .appAccountToken, .obfuscatedAccountId, .outTradeNo, .applicationUsername, .skuFallback,
                .createdAfterPayment, .manual,
            ])
    }

    // MARK: WeChat, orphans, two users

    @Test("WeChat out_trade_no binds to our order, by order id or by its recorded token")
    func wechatOutTradeNo() {
        let t = verified("4200001", product: "coins_300", channel: .wechat)
        let byId = Binding.decide(
            transaction: t, callbacks: [], outTradeNo: "o-wx-1",
            orders: [
                order("o-wx-0", channel: .wechat, open: true),
                order("o-wx-1", user: "u9", product: "coins_300", channel: .wechat),
            ])
        #expect(
            bound(byId)
                == TransactionBound(
                    channel: .wechat, transactionId: "4200001", orderId: "o-wx-1", userId: "u9",
                    method: .appAccountToken))
        let byToken = Binding.decide(
            transaction: t, callbacks: [], outTradeNo: "OTN-77",
            orders: [order("o-wx-2", user: "u9", product: "coins_300", channel: .wechat, token: "OTN-77")])
        #expect(bound(byToken)?.orderId == "o-wx-2")
        // An out_trade_no naming no order of ours binds nothing by itself.
        let unknown = Binding.decide(
            transaction: t, callbacks: [], outTradeNo: "nope", orders: [order("o-wx-3", channel: .wechat)])
        guard case .unbound = unknown else {
            Issue.record("expected unbound, got \(unknown)")
            return
        }
    }

    @Test("no token, no hint, no report: an unbound orphan")
    func orphan() {
        let d = Binding.decide(transaction: verified(), callbacks: [], orders: [order("o-open")])
        guard case .unbound(let reason) = d else {
            Issue.record("expected unbound, got \(d)")
            return
        }
        #expect(reason.contains("orphan"))
    }

    @Test("a callback from two users and no order: unbound, naming both")
    func twoUsers() {
        let d = Binding.decide(transaction: verified(), callbacks: [report("u1"), report("u2")], orders: [])
        guard case .unbound(let reason) = d else {
            Issue.record("expected unbound, got \(d)")
            return
        }
        #expect(reason.contains("u1") && reason.contains("u2"))
    }

    @Test("a callback from two users, each with one open order: no sku fallback to whichever sorts first")
    func twoUsersTwoOrders() {
        let orders = [order("o-1", user: "u1"), order("o-2", user: "u2")]
        for callbacks in [[report("u1"), report("u2")], [report("u2"), report("u1")]] {
            let d = Binding.decide(transaction: verified(), callbacks: callbacks, orders: orders)
            guard case .unbound = d else {
                Issue.record("expected unbound (manual), got \(d)")
                continue
            }
        }
    }

    @Test("a callback from two users still binds by token or hint")
    func twoUsersWithToken() {
        let orders = [order("o-1", user: "u1", token: Self.token.lowercased), order("o-2", user: "u2")]
        let d = Binding.decide(
            transaction: verified(token: Self.token), callbacks: [report("u2"), report("u1")], orders: orders)
        #expect(bound(d)?.orderId == "o-1")
        let hinted = Binding.decide(
            transaction: verified(), callbacks: [report("u2", username: "o-1"), report("u1")], orders: orders)
        #expect(bound(hinted)?.orderId == "o-1")
        #expect(bound(hinted)?.method == .applicationUsername)
    }
}
