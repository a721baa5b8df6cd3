import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

@Suite("Audit: entitlements")
struct EntitlementRulesTests {
    // MARK: double-grant

    @Test("double-grant: two active grants for one payment; not after a refund reversal")
    func doubleGrant() {
        var h = History()
        h.purchase(1)
        h.grant("g1-again", "u1", "t1", coins60, order: "o1")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.doubleGrant])
        #expect(fs.first?.userId == "u1" && fs.first?.orderId == "o1" && fs.first?.amountAtRisk == cny(600))
        #expect(fs.first?.positions == [7, 9, 10])  // verified, first grant, second grant

        var near = History()
        near.purchase(1)
        near.refund("t1", "rf1", cny(600))
        near.revoke("u1", "t1", .refund)
        near.reverse("t1", "n-rev")
        near.grant("g1-restored", "u1", "t1", coins60, order: "o1")
        #expect(near.kinds() == [])
        // A grant taken back by support and granted again: still one active grant.
        var support = History()
        support.purchase(1)
        support.revoke("u1", "t1", .support)
        support.grant("g1-again", "u1", "t1", coins60, order: "o1")
        #expect(support.kinds() == [])
    }

    @Test("double-grant: one transaction granted to two users is double-grant and wrong-user")
    func doubleGrantTwoUsers() {
        var h = History()
        h.purchase(1)
        h.grant("g1-b", "u2", "t1", coins60)
        #expect(h.kinds() == ["double-grant", "wrong-user"])
        #expect(h.audit().last?.userId == "u2")
    }

    // MARK: missing-grant

    @Test("missing-grant: after the window in log time; not inside it, not at its edge")
    func missingGrant() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.launch("o1")
        h.report("u1", "t1", "coins_60", order: "o1")
        h.verify("t1", "coins_60")
        let verifiedAt = h.now
        h.bind("t1", "o1", "u1", .applicationUsername)
        h.wait(minutes: 9)
        #expect(h.kinds() == [])
        h.add(
            .paymentLaunched(PaymentLaunched(orderId: "elsewhere", channel: .appstore)),
            after: 600 - (h.now.microseconds - verifiedAt.microseconds) / 1_000_000)
        #expect(h.now.microseconds - verifiedAt.microseconds == 600_000_000)
        #expect(h.kinds() == [], "exactly at the window's end is still inside it")
        h.wait(minutes: 1)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.missingGrant])
        #expect(fs.first?.userId == "u1" && fs.first?.orderId == "o1" && fs.first?.transactionId == "t1")
        #expect(fs.first?.amountAtRisk == cny(600) && fs.first?.positions == [7, 8])
        // A custom window.
        #expect(h.audit(upTo: nil, AuditOptions(missingGrantWindow: .seconds(3600))).isEmpty)
    }

    @Test("missing-grant: a renewal without its grant belongs to the subscription's user")
    func missingRenewalGrant() {
        var h = History()
        h.order("o1", "u1", "vip.month")
        h.launch("o1")
        h.verify("m1", "vip.month", original: "m1", days: 30)
        h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", vipMonth, order: "o1")
        h.renew("m2", original: "m1")
        h.wait(minutes: 11)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.missingGrant])
        #expect(
            fs.first?.transactionId == "m2" && fs.first?.userId == "u1" && fs.first?.orderId == nil
                && fs.first?.amountAtRisk == cny(2500))
        // Granted: nothing, and a renewal needs no binding of its own (not an orphan).
        h.grant("g2", "u1", "m2", vipMonth)
        #expect(h.kinds() == [])
    }

    @Test("missing-grant: nothing is owed after a full refund")
    func missingGrantRefunded() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.verify("t1", "coins_60")
        h.bind("t1", "o1", "u1")
        h.refund("t1", "rf1", cny(600))
        h.wait(hours: 1)
        #expect(h.kinds() == [])
    }

    // MARK: grant-without-payment

    @Test("grant-without-payment: never verified, or only failed; not once verified")
    func grantWithoutPayment() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.report("u1", "t1", "coins_60", order: "o1")
        h.grant("g1", "u1", "t1", coins60, order: "o1")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.grantWithoutPayment])
        #expect(
            fs.first?.userId == "u1" && fs.first?.orderId == "o1" && fs.first?.amountAtRisk == cny(600)
                && fs.first?.positions == [6])
        // A second grant of the unverified transaction: one root cause, still only grant-without-payment.
        h.failVerification("t1", code: 21003, retryable: false)
        h.grant("g2", "u1", "t1", coins60, order: "o1")
        fs = h.audit()
        #expect(fs.map(\.kind) == [.grantWithoutPayment])
        #expect(fs.first?.amountAtRisk == cny(1200) && fs.first?.positions == [6, 7, 8])
        #expect(fs.first?.detail.contains("21003") == true)

        var near = History()
        near.order("o1", "u1", "coins_60")
        near.failVerification("t1", code: 21005, retryable: true)
        near.verify("t1", "coins_60")
        near.bind("t1", "o1", "u1")
        near.grant("g1", "u1", "t1", coins60, order: "o1")
        #expect(near.kinds() == [])
        // Taken back: netted, nothing at risk.
        h.revoke("u1", "t1", .support)
        #expect(h.kinds() == [])
    }

    // MARK: wrong-user

    @Test("wrong-user: granted to someone other than the bound user, or the token's owner when unbound")
    func wrongUser() {
        var h = History()
        h.order("o1", "u1", "coins_60")
        h.verify("t1", "coins_60")
        h.bind("t1", "o1", "u1")
        h.grant("g1", "u2", "t1", coins60, order: "o1")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.wrongUser])
        #expect(fs.first?.userId == "u2" && fs.first?.orderId == "o1" && fs.first?.positions == [6, 7])

        let token = UUID(uuidString: "a0000000-0000-4000-8000-000000000001")!
        var unbound = History()
        unbound.order("o1", "u1", "coins_60", token: token)
        unbound.verify("t1", "coins_60", token: token)
        unbound.grant("g1", "u2", "t1", coins60)
        fs = unbound.audit()
        #expect(fs.map(\.kind) == [.orphanPayment, .wrongUser])
        #expect(fs.last?.userId == "u2" && fs.last?.positions == [4, 6])  // the token's order, the grant

        var right = History()
        right.order("o1", "u1", "coins_60", token: token)
        right.verify("t1", "coins_60", token: token)
        right.grant("g1", "u1", "t1", coins60)
        #expect(right.kinds() == ["orphan-payment"])
    }

    @Test("wrong-user: a renewal granted to its subscription's user is right; to another, wrong")
    func wrongUserRenewal() {
        var h = History()
        let binding = h.subscribe()
        h.renew("m2", original: "m1")
        h.grant("g2", "u1", "m2", vipMonth)
        #expect(h.kinds() == [])
        h.renew("m3", original: "m1")
        h.grant("g3", "u9", "m3", vipMonth)
        #expect(h.kinds() == ["wrong-user"])
        #expect(h.audit().first?.transactionId == "m3" && h.audit().first?.userId == "u9")
        // The proof of ownership: the original's binding, then the wrong grant.
        #expect(h.audit().first?.positions == [binding, h.last])
    }

    @Test(
        "wrong-user: a subscription moved to another user owes each renewal to its owner when granted, whichever period the move names"
    )
    func wrongUserAfterASubscriptionMoved() {
        /// u1's month of vip, then its renewal m2 granted to `renewedFor`.
        func subscription(renewedFor user: String) -> History {
            var h = History()
            h.subscribe()
            h.renew("m2", original: "m1")
            h.grant("g2", user, "m2", vipMonth)
            return h
        }
        var h = subscription(renewedFor: "u1")
        // Support moves the subscription (its original) to u2: later renewals are u2's, earlier ones stay u1's.
        h.transfer("m1", "mv1", from: "u1", to: "u2")
        let move = h.last
        h.renew("m3", original: "m1")
        h.grant("g3", "u2", "m3", vipMonth)
        #expect(h.kinds() == [])
        #expect(h.fold().subscriptions["appstore:m1"]?.userId == "u2")
        // A renewal granted to the old owner after the move is wrong, with the move as the proof.
        var late = h
        late.renew("m4", original: "m1")
        late.grant("g4", "u1", "m4", vipMonth)
        #expect(late.kinds() == ["wrong-user"])
        #expect(late.audit().first?.transactionId == "m4" && late.audit().first?.positions == [move, late.last])
        // A move that names the running period (a renewal) moves the subscription from then on.
        var running = h
        running.transfer("m3", "mv2", from: "u2", to: "u3")
        running.renew("m5", original: "m1")
        running.grant("g5", "u3", "m5", vipMonth)
        #expect(running.kinds() == [])
        #expect(running.fold().subscriptions["appstore:m1"]?.userId == "u3")
        // A grant to the new owner before the move was wrong then.
        var early = subscription(renewedFor: "u2")
        early.transfer("m1", "mv1", from: "u1", to: "u2")
        #expect(early.kinds() == ["wrong-user"])
        // Owned through its token's order alone (no binding): before the move, the user the move names as the holder.
        let token = UUID()
        var unbound = History()
        unbound.order("o1", "u1", "vip.month", token: token)
        unbound.verify("m1", "vip.month", original: "m1", days: 30, token: token)
        unbound.grant("g1", "u1", "m1", vipMonth, order: "o1")
        unbound.renew("m2", original: "m1")
        unbound.grant("g2", "u1", "m2", vipMonth)
        unbound.transfer("m1", "mv1", from: "u1", to: "u2")
        #expect(unbound.kinds() == [], "\(unbound.audit())")
        // A renewal bound to the new owner after the move does not make them the owner before it.
        unbound.renew("m3", original: "m1")
        unbound.bind("m3", nil, "u2")
        unbound.grant("g3", "u2", "m3", vipMonth)
        #expect(unbound.kinds() == [], "\(unbound.audit())")
    }

    @Test(
        "a renewal restored on a second account (bound there created-after-payment, no move) stays the subscriber's: the second account is receipt-reused, and wrong-user if granted"
    )
    func aRenewalRestoredOnASecondAccountStaysTheSubscribers() {
        /// u1's month of vip, renewed as m2 and granted to `grantedTo` before u2 restores it on a
        /// second account, where the backend makes an order after payment and binds m2 to it.
        func restored(grantedTo user: String) -> (History, subscribed: Int64, restore: Int64) {
            var h = History()
            let subscribed = h.subscribe()
            h.renew("m2", original: "m1")
            h.grant("g2", user, "m2", vipMonth)
            h.order("after-payment:m2", "u2", "vip.month")
            h.bind("m2", "after-payment:m2", "u2", .createdAfterPayment)
            return (h, subscribed, h.last)
        }
        // Granted to the subscriber before the restore: right; the restore is a reuse by u2.
        var (h, subscribed, restore) = restored(grantedTo: "u1")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused], "\(fs)")
        #expect(fs.first?.userId == "u2" && fs.first?.orderId == "after-payment:m2" && fs.first?.transactionId == "m2")
        #expect(fs.first?.positions == [subscribed, restore])
        // Granted to the second account: wrong-user too, the subscriber's binding as the proof.
        (h, subscribed, restore) = restored(grantedTo: "u9")
        h.grant("g3", "u2", "m2", vipMonth)
        fs = h.audit()
        #expect(fs.map(\.kind) == [.doubleGrant, .receiptReused, .wrongUser, .wrongUser], "\(fs)")
        #expect(fs.filter { $0.kind == .wrongUser }.map(\.userId) == ["u2", "u9"])
        #expect(fs.first { $0.kind == .wrongUser && $0.userId == "u2" }?.positions == [subscribed, h.last])
        // A later renewal granted to the subscriber is right, as it was.
        h.renew("m3", original: "m1")
        h.grant("g4", "u1", "m3", vipMonth)
        #expect(h.audit().filter { $0.transactionId == "m3" }.isEmpty)
        // Moved to the second account by support first: the restore is the new owner's, nothing to find.
        var moved = History()
        moved.subscribe()
        moved.transfer("m1", "mv1", from: "u1", to: "u2")
        moved.renew("m2", original: "m1")
        moved.order("after-payment:m2", "u2", "vip.month")
        moved.bind("m2", "after-payment:m2", "u2", .createdAfterPayment)
        moved.grant("g2", "u2", "m2", vipMonth)
        #expect(moved.kinds() == [], "\(moved.audit())")
    }

    @Test(
        "a renewal judged by its own binding: bound by its token (another account's purchase in the subscription group), or bound before the subscription's owner was"
    )
    func aRenewalKeepsItsOwnBindingWhereTheStoreSignedItOrItCameFirst() {
        // Apple keeps the original transaction id for every purchase in a subscription group on one
        // Apple ID: bob resubscribes through his own order, minted with his token, after alice's lapsed.
        let tokenA = UUID(uuidString: "d0000000-0000-4000-8000-00000000000a")!
        let tokenB = UUID(uuidString: "d0000000-0000-4000-8000-00000000000b")!
        var h = History()
        h.order("oa", "alice", "vip.month", token: tokenA)
        h.verify("m1", "vip.month", original: "m1", days: 30, token: tokenA)
        h.bind("m1", "oa", "alice")
        h.grant("g1", "alice", "m1", vipMonth, order: "oa")
        h.wait(hours: 24 * 70)
        h.order("ob", "bob", "vip.month", token: tokenB)
        h.verify("m2", "vip.month", original: "m1", days: 30, token: tokenB)
        h.bind("m2", "ob", "bob")
        h.grant("g2", "bob", "m2", vipMonth, order: "ob")
        #expect(h.kinds() == [], "\(h.audit())")
        // StoreKit 1: the original's callback was lost, zoe's renewal bound to her first; the kid's
        // restore later binds the original to the kid and reports the renewal.
        var late = History()
        late.order("o1", "zoe", "vip.month")
        late.verify("m1", "vip.month", original: "m1", days: 30)
        late.renew("m2", original: "m1")
        late.report("zoe", "m2", "vip.month")
        late.order("after-payment:m2", "zoe", "vip.month")
        late.bind("m2", "after-payment:m2", "zoe", .createdAfterPayment)
        late.grant("g2", "zoe", "m2", vipMonth, order: "after-payment:m2")
        late.order("after-payment:m1", "kid", "vip.month")
        late.bind("m1", "after-payment:m1", "kid", .createdAfterPayment)
        late.report("kid", "m2", "vip.month")
        let fs = late.audit().filter { $0.transactionId == "m2" }
        #expect(fs.map(\.kind) == [.receiptReused] && fs.first?.userId == "kid", "\(fs)")
    }

    @Test(
        "a renewal that carries its token and no binding (StoreKit 2): another account's report of it is receipt-reused; one whose token names another account's order is that account's"
    )
    func anUnboundRenewalWithItsToken() {
        let tokenA = UUID(uuidString: "f0000000-0000-4000-8000-00000000000a")!
        let tokenB = UUID(uuidString: "f0000000-0000-4000-8000-00000000000b")!
        var h = History()
        h.order("oa", "alice", "vip.month", token: tokenA)
        h.verify("m1", "vip.month", original: "m1", days: 30, token: tokenA)
        h.bind("m1", "oa", "alice")
        let aliceBound = h.last
        h.grant("g1", "alice", "m1", vipMonth, order: "oa")
        h.wait(hours: 24 * 30)
        // Her renewal, signed with the token of the purchase that began it; no binding of its own.
        h.verify("m2", "vip.month", original: "m1", days: 30, token: tokenA)
        h.grant("g2", "alice", "m2", vipMonth)
        #expect(h.kinds() == [], "\(h.audit())")
        // Another account's app on the same device reports it (hers never did).
        h.report("bob", "m2", "vip.month")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused] && fs.first?.userId == "bob", "\(fs)")
        #expect(fs.first?.positions.first == aliceBound, "\(fs)")
        // Bob buys in the subscription group on the same Apple ID, through his own order and token,
        // after hers lapsed; his purchase's callback is lost (no binding); granted to him and
        // reported by his app: his, no finding.
        var group = History()
        group.order("oa", "alice", "vip.month", token: tokenA)
        group.verify("m1", "vip.month", original: "m1", days: 30, token: tokenA)
        group.bind("m1", "oa", "alice")
        group.grant("g1", "alice", "m1", vipMonth, order: "oa")
        group.wait(hours: 24 * 70)
        group.order("ob", "bob", "vip.month", token: tokenB)
        group.verify("m3", "vip.month", original: "m1", days: 30, token: tokenB)
        group.grant("g3", "bob", "m3", vipMonth)
        group.report("bob", "m3", "vip.month")
        fs = group.audit()
        #expect(fs.isEmpty, "\(fs)")
        // Granted to alice instead: wrong-user, his order the proof.
        group.grant("g4", "alice", "m3", vipMonth)
        fs = group.audit().filter { $0.kind == .wrongUser }
        #expect(fs.map(\.userId) == ["alice"], "\(fs)")
    }

    @Test("receipt-reused: a renewal restored by whom its subscription was moved away from, after the move")
    func aRenewalRestoredByItsFormerOwner() {
        var h = History()
        h.subscribe("zoe")
        h.transfer("m1", "mv1", from: "zoe", to: "kid")
        h.renew("m2", original: "m1")
        h.grant("g2", "kid", "m2", vipMonth)
        #expect(h.kinds() == [])
        h.report("zoe", "m2", "vip.month")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused] && fs.first?.userId == "zoe", "\(fs)")
    }

    @Test(
        "wrong-user: an unbound Google purchase belongs to the order its obfuscatedExternalAccountId names, by id or by token"
    )
    func wrongUserByObfuscatedAccountId() {
        func unbound(account: String, grantedTo user: String, order: String) -> History {
            var h = History()
            h.order("o1", "u1", "coins_60", token: UUID(uuidString: "b0000000-0000-4000-8000-000000000002"))
            h.order("o2", "u2", "coins_60")
            h.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: .googleplay, transactionId: "GPA.1", originalTransactionId: "tok-1",
                        productId: "coins_60", purchaseDate: h.now, price: h.price("coins_60"),
                        obfuscatedAccountId: account)))
            h.add(
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g1", userId: user, channel: .googleplay, transactionId: "GPA.1", orderId: order,
                        entitlement: coins60)))
            return h
        }
        for account in ["o1", "B0000000-0000-4000-8000-000000000002"] {
            let wrong = unbound(account: account, grantedTo: "u2", order: "o2").audit()
            #expect(wrong.map(\.kind) == [.orphanPayment, .wrongUser], "\(account): \(wrong)")
            #expect(wrong.last?.userId == "u2" && wrong.last?.positions == [4, 7])
            #expect(unbound(account: account, grantedTo: "u1", order: "o1").kinds() == ["orphan-payment"])
        }
        // An account id that names no order decides nothing: the grant's order does.
        #expect(unbound(account: "acct-9", grantedTo: "u2", order: "o2").kinds() == ["orphan-payment"])
    }

    // MARK: negative-balance

    @Test("negative-balance: a spend below zero names the spend; back above zero, nothing")
    func negativeBalance() {
        var h = History()
        h.purchase(1)
        h.spend("s1", "u1", 50)
        #expect(h.kinds() == [])
        h.spend("s2", "u1", 20)
        let spendPosition = h.last
        h.spend("s3", "u1", 5)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.negativeBalance])
        #expect(
            fs.first?.userId == "u1" && fs.first?.positions == [spendPosition] && fs.first?.transactionId == nil
                && fs.first?.amountAtRisk == nil)
        h.purchase(2)
        #expect(h.kinds() == [])
    }

    @Test("negative-balance: partial clawbacks count once, and their refund is the money at risk")
    func partialClawbacks() throws {
        // Refunded in two parts, revoked in two: 30 coins, then the rest. Nothing spent: balance 0.
        var h = History()
        h.purchase(1)
        h.refund("t1", "r1", Money(minorUnits: 180, currency: History.cny))
        h.add(
            .entitlementRevoked(
                EntitlementRevoked(userId: "u1", channel: .appstore, transactionId: "t1", reason: .refund, units: 30)))
        h.refund("t1", "r2", Money(minorUnits: 420, currency: History.cny))
        h.revoke("u1", "t1", .refund)
        #expect(h.fold().users["u1"]?.coinBalance == 0)
        #expect(h.kinds() == [])
        // 60 coins, 50 spent, half refunded and 30 taken back: 20 below zero, 3.00 CNY for 30 coins.
        var spent = History()
        spent.purchase(1)
        spent.spend("s1", "u1", 50)
        spent.refund("t1", "r1", Money(minorUnits: 300, currency: History.cny))
        spent.add(
            .entitlementRevoked(
                EntitlementRevoked(userId: "u1", channel: .appstore, transactionId: "t1", reason: .refund, units: 30)))
        let f = try #require(spent.audit().first)
        #expect(f.kind == .negativeBalance && f.transactionId == "t1")
        #expect(f.amountAtRisk == Money(minorUnits: 200, currency: History.cny))
    }
}
