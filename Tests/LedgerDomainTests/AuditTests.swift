import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

/// A small history builder: facts in log order, each `step` seconds after the previous one.
/// The clock starts in 2020, years before the wall clock: a window measured by the wall clock
/// would have passed for every fact.
private struct History {
    var facts: [(fact: Fact, at: Timestamp)] = []
    var now: Timestamp
    static let cny = Currency("CNY")!

    init(start: Timestamp = Timestamp("2020-06-01T08:00:00Z")!, products: [String] = ["coins_60", "coins_300", "vip.month"]) {
        now = start
        for id in products { facts.append((.productDefined(Catalogue.definition(id)!), start)) }
    }

    mutating func add(_ f: Fact, after seconds: Int64 = 1) {
        now = Timestamp(microsecondsSince1970: now.microseconds + seconds * 1_000_000)
        facts.append((f, now))
    }
    /// Moves log time on with an unrelated fact (another user's order).
    mutating func wait(minutes: Int64 = 0, hours: Int64 = 0) {
        add(.orderCreated(OrderCreated(orderId: "other-\(facts.count)", userId: "u-other", channel: .appstore, productId: "coins_60",
                                       price: price("coins_60"))), after: (hours * 60 + minutes) * 60)
    }
    var count: Int { facts.count }

    func price(_ product: String) -> Money { Catalogue.definition(product)!.price! }
    func fold(upTo n: Int? = nil) -> Projections {
        var p = Projections()
        for (i, f) in facts.prefix(n ?? facts.count).enumerated() { p.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at)) }
        return p
    }
    func audit(upTo n: Int? = nil, _ options: AuditOptions = AuditOptions()) -> [Finding] { Audit.run(fold(upTo: n), options: options) }
    func kinds(upTo n: Int? = nil) -> [String] { audit(upTo: n).map(\.kind.rawValue) }
    /// Position (1-based) of the last fact added.
    var last: Int64 { Int64(facts.count) }

    // facts
    mutating func order(_ id: String, _ user: String, _ product: String, token: UUID? = nil) {
        add(.orderCreated(OrderCreated(orderId: id, userId: user, channel: .appstore, productId: product, price: price(product),
                                       accountToken: token?.lowercased)))
    }
    mutating func launch(_ id: String) { add(.paymentLaunched(PaymentLaunched(orderId: id, channel: .appstore))) }
    mutating func close(_ id: String) { add(.orderClosed(OrderClosed(orderId: id, reason: .timeout))) }
    mutating func report(_ user: String, _ tx: String, _ product: String, order: String? = nil) {
        add(.clientCallbackReceived(ClientCallbackReceived(channel: .appstore, userId: user, orderId: order, transactionId: tx,
                                                           productId: product, state: .purchased)))
    }
    mutating func verify(_ tx: String, _ product: String, original: String? = nil, days: Int64? = nil, token: UUID? = nil) {
        let expires = days.map { Timestamp(microsecondsSince1970: now.microseconds + $0 * 86_400_000_000) }
        add(.paymentVerified(PaymentVerified(channel: .appstore, transactionId: tx, originalTransactionId: original, productId: product,
                                             purchaseDate: now, expiresDate: expires, price: price(product), appAccountToken: token)))
    }
    mutating func failVerification(_ tx: String, code: Int64, retryable: Bool) {
        add(.verificationFailed(VerificationFailed(channel: .appstore, transactionId: tx, code: code, retryable: retryable)))
    }
    mutating func bind(_ tx: String, _ order: String?, _ user: String, _ method: BindingMethod = .appAccountToken) {
        add(.transactionBound(TransactionBound(channel: .appstore, transactionId: tx, orderId: order, userId: user, method: method)))
    }
    mutating func grant(_ id: String, _ user: String, _ tx: String, _ entitlement: Entitlement, order: String? = nil) {
        add(.entitlementGranted(EntitlementGranted(grantId: id, userId: user, channel: .appstore, transactionId: tx, orderId: order,
                                                   entitlement: entitlement)))
    }
    mutating func revoke(_ user: String, _ tx: String, _ reason: RevocationReason) {
        add(.entitlementRevoked(EntitlementRevoked(userId: user, channel: .appstore, transactionId: tx, reason: reason)))
    }
    mutating func refund(_ tx: String, _ id: String, _ amount: Money) {
        add(.refunded(Refunded(channel: .appstore, transactionId: tx, refundId: id, amount: amount, refundedAt: now)))
    }
    mutating func reverse(_ tx: String, _ nid: String) { add(.refundReversed(RefundNotice(channel: .appstore, transactionId: tx, notificationId: nid))) }
    mutating func storeRevoke(_ tx: String, _ nid: String) {
        add(.storeNotificationReceived(StoreNotificationReceived(channel: .appstore, notificationId: nid, type: NotificationType(raw: "REVOKE"),
                                                                 transactionId: tx, originalTransactionId: tx)))
    }
    mutating func renew(_ tx: String, original: String) {
        add(.subscriptionRenewed(SubscriptionRenewed(channel: .appstore, originalTransactionId: original, transactionId: tx, productId: "vip.month",
                                                     purchaseDate: now, expiresDate: Timestamp(microsecondsSince1970: now.microseconds + 30 * 86_400_000_000),
                                                     price: price("vip.month"))))
    }
    mutating func spend(_ id: String, _ user: String, _ amount: Int64) { add(.coinsSpent(CoinsSpent(spendId: id, userId: user, amount: amount))) }

    /// A clean coins_60 purchase by `user`: order, launch, report, verify, bind, grant.
    mutating func purchase(_ n: Int, _ user: String = "u1", product: String = "coins_60") {
        let o = "o\(n)", t = "t\(n)"
        order(o, user, product); launch(o); report(user, t, product, order: o); verify(t, product); bind(t, o, user, .applicationUsername)
        grant("g\(n)", user, t, Catalogue.definition(product)!.entitlement, order: o)
    }
}

private let coins60 = Entitlement.coins(60)
private let vipMonth = Catalogue.definition("vip.month")!.entitlement
private func cny(_ minor: Int64) -> Money { Money(minorUnits: minor, currency: Currency("CNY")!) }

@Suite("Audit")
struct AuditTests {
    // MARK: scenarios

    @Test("each scenario yields exactly its documented findings", arguments: Scenarios.all)
    func scenarioFindings(_ s: Scenario) {
        let found = Audit.run(s.projections()).map(\.kind.rawValue)
        #expect(found.sorted() == s.expected.auditFindings.sorted(), "\(s)")
    }

    @Test("every scenario finding names its evidence")
    func scenarioEvidence() {
        for s in Scenarios.all {
            for f in Audit.run(s.projections()) {
                #expect(!f.positions.isEmpty && f.positions.allSatisfy { $0 >= 1 && $0 <= Int64(s.facts.count) }, "\(s): \(f)")
                #expect(f.positions == f.positions.sorted())
                #expect(!f.detail.isEmpty)
            }
        }
    }

    @Test("4: receipt-reused names the second account, the transaction and its price")
    func scenario4() throws {
        let s = Scenarios.scenario(4)
        let f = try #require(Audit.run(s.projections()).first)
        #expect(f.kind == .receiptReused && f.userId == "u04-erin" && f.transactionId == "20000400001" && f.orderId == nil)
        #expect(f.channel == .appstore && f.amountAtRisk == cny(3000))
        #expect(f.positions.last == Int64(s.facts.count))  // Erin's report, the last fact
    }

    @Test("5: one product-mismatch per swapped order")
    func scenario5() {
        let fs = Audit.run(Scenarios.scenario(5).projections())
        #expect(fs.map(\.orderId) == ["o05-2", "o05-1"])
        #expect(fs.map(\.transactionId) == ["20000500001", "20000500002"])
        #expect(fs.map(\.amountAtRisk) == [cny(600), cny(3000)])  // the verified price
    }

    @Test("6: an orphan payment until bound after payment, never also missing-grant")
    func scenario6() {
        let s = Scenarios.scenario(6)
        let c = s.checkpoints[0]
        let atCheckpoint = Audit.run(s.projections(upTo: c.factCount))
        #expect(atCheckpoint.map(\.kind) == [.orphanPayment])
        #expect(atCheckpoint.first?.transactionId == "20000600001" && atCheckpoint.first?.userId == nil)
        // Three hours later (log time) the app reports it, not yet bound: still only orphan-payment.
        let report = s.facts.firstIndex { if case .clientCallbackReceived = $0.fact { return true } else { return false } }!
        #expect(Audit.run(s.projections(upTo: report + 1)).map(\.kind) == [.orphanPayment])
        #expect(Audit.run(s.projections()).isEmpty)
    }

    @Test("7: negative-balance names the user, the clawback that took it below zero, and the money for coins spent")
    func scenario7() throws {
        let s = Scenarios.scenario(7)
        let f = try #require(Audit.run(s.projections()).first)
        #expect(f.kind == .negativeBalance && f.userId == "u07-henry" && f.transactionId == "20000700001" && f.orderId == "o07-1")
        #expect(f.positions == [Int64(s.facts.count)])  // the EntitlementRevoked
        #expect(f.amountAtRisk == cny(2800))  // 280 of the 300 coins refunded were already spent: 28.00 of 30.00 CNY
    }

    @Test("11: verification failing is nothing yet; once it lands and is granted, nothing")
    func scenario11() {
        let s = Scenarios.scenario(11)
        let verified = s.facts.firstIndex { if case .paymentVerified = $0.fact { return true } else { return false } }! + 1
        for n in 1...s.facts.count {
            // Between the verification and its binding (one second) it is an orphan: no window.
            let expected: [FindingKind] = n == verified ? [.orphanPayment] : []
            #expect(Audit.run(s.projections(upTo: n)).map(\.kind) == expected, "after \(n) facts")
        }
    }

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
        near.refund("t1", "rf1", cny(600)); near.revoke("u1", "t1", .refund)
        near.reverse("t1", "n-rev"); near.grant("g1-restored", "u1", "t1", coins60, order: "o1")
        #expect(near.kinds() == [])
        // A grant taken back by support and granted again: still one active grant.
        var support = History()
        support.purchase(1)
        support.revoke("u1", "t1", .support); support.grant("g1-again", "u1", "t1", coins60, order: "o1")
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
        h.order("o1", "u1", "coins_60"); h.launch("o1"); h.report("u1", "t1", "coins_60", order: "o1")
        h.verify("t1", "coins_60")
        let verifiedAt = h.now
        h.bind("t1", "o1", "u1", .applicationUsername)
        h.wait(minutes: 9)
        #expect(h.kinds() == [])
        h.add(.paymentLaunched(PaymentLaunched(orderId: "elsewhere", channel: .appstore)),
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
        h.order("o1", "u1", "vip.month"); h.launch("o1")
        h.verify("m1", "vip.month", original: "m1", days: 30); h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", vipMonth, order: "o1")
        h.renew("m2", original: "m1")
        h.wait(minutes: 11)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.missingGrant])
        #expect(fs.first?.transactionId == "m2" && fs.first?.userId == "u1" && fs.first?.orderId == nil && fs.first?.amountAtRisk == cny(2500))
        // Granted: nothing, and a renewal needs no binding of its own (not an orphan).
        h.grant("g2", "u1", "m2", vipMonth)
        #expect(h.kinds() == [])
    }

    @Test("missing-grant: nothing is owed after a full refund")
    func missingGrantRefunded() {
        var h = History()
        h.order("o1", "u1", "coins_60"); h.verify("t1", "coins_60"); h.bind("t1", "o1", "u1")
        h.refund("t1", "rf1", cny(600))
        h.wait(hours: 1)
        #expect(h.kinds() == [])
    }

    // MARK: grant-without-payment

    @Test("grant-without-payment: never verified, or only failed; not once verified")
    func grantWithoutPayment() {
        var h = History()
        h.order("o1", "u1", "coins_60"); h.report("u1", "t1", "coins_60", order: "o1")
        h.grant("g1", "u1", "t1", coins60, order: "o1")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.grantWithoutPayment])
        #expect(fs.first?.userId == "u1" && fs.first?.orderId == "o1" && fs.first?.amountAtRisk == cny(600) && fs.first?.positions == [6])
        // A second grant of the unverified transaction: one root cause, still only grant-without-payment.
        h.failVerification("t1", code: 21003, retryable: false)
        h.grant("g2", "u1", "t1", coins60, order: "o1")
        fs = h.audit()
        #expect(fs.map(\.kind) == [.grantWithoutPayment])
        #expect(fs.first?.amountAtRisk == cny(1200) && fs.first?.positions == [6, 7, 8])
        #expect(fs.first?.detail.contains("21003") == true)

        var near = History()
        near.order("o1", "u1", "coins_60"); near.failVerification("t1", code: 21005, retryable: true)
        near.verify("t1", "coins_60"); near.bind("t1", "o1", "u1"); near.grant("g1", "u1", "t1", coins60, order: "o1")
        #expect(near.kinds() == [])
        // Taken back: netted, nothing at risk.
        h.revoke("u1", "t1", .support)
        #expect(h.kinds() == [])
    }

    // MARK: refund-not-revoked

    @Test("refund-not-revoked: after the refund window; not inside it, not once revoked")
    func refundNotRevoked() {
        var h = History()
        h.purchase(1)
        h.refund("t1", "rf1", cny(600))
        let refundPosition = h.last
        h.wait(minutes: 5)
        #expect(h.kinds() == [])
        h.wait(minutes: 6)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.refundNotRevoked])
        #expect(fs.first?.positions == [9, refundPosition] && fs.first?.amountAtRisk == cny(600) && fs.first?.userId == "u1")
        h.revoke("u1", "t1", .refund)
        #expect(h.kinds() == [])
    }

    @Test("refund-not-revoked: an Apple REVOKE counts as a refund; its revocation is backed")
    func storeRevoke() {
        var h = History()
        h.purchase(1)
        h.storeRevoke("t1", "n-revoke")
        h.wait(minutes: 11)
        #expect(h.kinds() == ["refund-not-revoked"])
        #expect(h.audit().first?.amountAtRisk == cny(600))
        h.revoke("u1", "t1", .familyRevoke)
        #expect(h.kinds() == [])
    }

    @Test("refund reversed: the entitlement stays, nothing to revoke")
    func refundReversedNotRevoked() {
        var h = History()
        h.purchase(1)
        h.refund("t1", "rf1", cny(600)); h.reverse("t1", "n-rev")
        h.wait(hours: 2)
        #expect(h.kinds() == [])
    }

    // MARK: revoked-without-refund

    @Test("revoked-without-refund: reason refund with no Refunded; not support, not with a refund")
    func revokedWithoutRefund() {
        var h = History()
        h.purchase(1)
        h.revoke("u1", "t1", .refund)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.revokedWithoutRefund])
        #expect(fs.first?.userId == "u1" && fs.first?.positions == [h.last] && fs.first?.amountAtRisk == cny(600))
        // The refund arrives after all: backed.
        h.refund("t1", "rf1", cny(600))
        #expect(h.kinds() == [])

        var support = History()
        support.purchase(1)
        support.revoke("u1", "t1", .support)
        #expect(support.kinds() == [])

        var unknown = History()
        unknown.purchase(1)
        unknown.revoke("u1", "t1", RevocationReason(raw: "fraud-suspected"))
        #expect(unknown.kinds() == ["revoked-without-refund"])
    }

    // MARK: wrong-user

    @Test("wrong-user: granted to someone other than the bound user, or the token's owner when unbound")
    func wrongUser() {
        var h = History()
        h.order("o1", "u1", "coins_60"); h.verify("t1", "coins_60"); h.bind("t1", "o1", "u1")
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
        h.order("o1", "u1", "vip.month"); h.verify("m1", "vip.month", original: "m1", days: 30); h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", vipMonth, order: "o1")
        h.renew("m2", original: "m1"); h.grant("g2", "u1", "m2", vipMonth)
        #expect(h.kinds() == [])
        h.renew("m3", original: "m1"); h.grant("g3", "u9", "m3", vipMonth)
        #expect(h.kinds() == ["wrong-user"])
        #expect(h.audit().first?.transactionId == "m3" && h.audit().first?.userId == "u9")
    }

    // MARK: product-mismatch

    @Test("product-mismatch: the verified product differs from the order's")
    func productMismatch() {
        var h = History()
        h.order("o1", "u1", "coins_60"); h.launch("o1")
        h.verify("t1", "coins_300"); h.bind("t1", "o1", "u1", .skuFallback)
        h.grant("g1", "u1", "t1", .coins(300), order: "o1")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.productMismatch])
        #expect(fs.first?.orderId == "o1" && fs.first?.userId == "u1" && fs.first?.positions == [4, 6, 7] && fs.first?.amountAtRisk == cny(3000))

        var near = History()
        near.purchase(1)
        #expect(near.kinds() == [])
    }

    // MARK: orphan-payment

    @Test("orphan-payment: verified and bound to no one; a renewal without a binding is not")
    func orphanPayment() {
        var h = History()
        h.verify("t1", "coins_60")
        h.wait(hours: 1)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.orphanPayment])  // never also missing-grant
        #expect(fs.first?.userId == nil && fs.first?.orderId == nil && fs.first?.amountAtRisk == cny(600) && fs.first?.positions == [4])
        h.bind("t1", nil, "u1", .manual)
        h.grant("g1", "u1", "t1", coins60)
        #expect(h.kinds() == [])

        var renewal = History()
        renewal.order("o1", "u1", "vip.month"); renewal.verify("m1", "vip.month", original: "m1", days: 30); renewal.bind("m1", "o1", "u1")
        renewal.grant("g1", "u1", "m1", vipMonth, order: "o1")
        renewal.verify("m2", "vip.month", original: "m1", days: 30)  // found by polling, no binding of its own
        renewal.grant("g2", "u1", "m2", vipMonth)
        #expect(renewal.kinds() == [])
    }

    // MARK: receipt-reused

    @Test("receipt-reused: one transaction presented for two users or two orders; not re-reports by its owner")
    func receiptReused() {
        var h = History()
        h.purchase(1)
        h.report("u1", "t1", "coins_60", order: "o1")
        h.report("u1", "t1", "coins_60")
        #expect(h.kinds() == [], "the owner's app re-reporting it on every launch")
        h.report("u2", "t1", "coins_60")
        var fs = h.audit()
        #expect(fs.map(\.kind) == [.receiptReused])
        #expect(fs.first?.userId == "u2" && fs.first?.orderId == nil && fs.first?.amountAtRisk == cny(600))
        #expect(fs.first?.positions == [6, 8, 10, 11, 12])

        var orders = History()
        orders.purchase(1)
        orders.order("o2", "u1", "coins_60")
        orders.report("u1", "t1", "coins_60", order: "o2")
        fs = orders.audit()
        #expect(fs.map(\.kind) == [.receiptReused])
        #expect(fs.first?.userId == "u1" && fs.first?.orderId == "o2")
    }

    // MARK: stale-order

    @Test("stale-order: launched, never paid or closed, after the stale window in log time")
    func staleOrder() {
        var h = History()
        h.order("o1", "u1", "coins_60"); h.launch("o1")
        h.order("o2", "u1", "coins_60")  // never launched: not stale
        h.order("o3", "u1", "coins_60"); h.launch("o3"); h.close("o3")
        h.purchase(4)
        h.wait(hours: 23)
        #expect(h.kinds() == [])
        h.wait(hours: 2)
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.staleOrder])
        #expect(fs.first?.orderId == "o1" && fs.first?.userId == "u1" && fs.first?.transactionId == nil)
        #expect(fs.first?.amountAtRisk == cny(600) && fs.first?.positions == [4, 5])
        #expect(h.audit(upTo: nil, AuditOptions(staleOrderWindow: .seconds(2 * 86_400))).isEmpty)
    }

    // MARK: subscription-drift

    @Test("subscription-drift: time granted differs from time paid; a missing or double grant is not drift")
    func subscriptionDrift() {
        var h = History()
        h.order("o1", "u1", "vip.month"); h.verify("m1", "vip.month", original: "m1", days: 30); h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 7), order: "o1")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.subscriptionDrift])
        #expect(fs.first?.userId == "u1" && fs.first?.positions == [5, 7])
        #expect(fs.first?.amountAtRisk == cny(1917))  // 25.00 CNY x 23/30 days, rounded up

        var missing = History()
        missing.order("o1", "u1", "vip.month"); missing.verify("m1", "vip.month", original: "m1", days: 30); missing.bind("m1", "o1", "u1")
        missing.wait(minutes: 11)
        #expect(missing.kinds() == ["missing-grant"])

        var twice = History()
        twice.order("o1", "u1", "vip.month"); twice.verify("m1", "vip.month", original: "m1", days: 30); twice.bind("m1", "o1", "u1")
        twice.grant("g1", "u1", "m1", vipMonth, order: "o1"); twice.grant("g2", "u1", "m1", vipMonth, order: "o1")
        #expect(twice.kinds() == ["double-grant"])

        // A subscription period granted as a non-renewing period of the same days: the same time.
        var same = History()
        same.order("o1", "u1", "vip.month"); same.verify("m1", "vip.month", original: "m1", days: 30); same.bind("m1", "o1", "u1")
        same.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 30), order: "o1")
        #expect(same.kinds() == [])
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
        #expect(fs.first?.userId == "u1" && fs.first?.positions == [spendPosition] && fs.first?.transactionId == nil && fs.first?.amountAtRisk == nil)
        h.purchase(2)
        #expect(h.kinds() == [])
    }

    // MARK: windows, as-of, determinism

    @Test("windows are log time: long past by the wall clock is still inside; a future log is judged by its own clock")
    func logTime() {
        var past = History(start: Timestamp("2015-01-01T00:00:00Z")!)
        past.order("o1", "u1", "coins_60"); past.launch("o1")  // stale by the wall clock
        past.verify("t1", "coins_60"); past.bind("t1", nil, "u1", .manual)  // not granted
        past.purchase(2); past.refund("t2", "rf2", cny(600))  // not revoked
        #expect(past.kinds() == [])

        var future = History(start: Timestamp("2099-01-01T00:00:00Z")!)
        future.order("o1", "u1", "coins_60"); future.launch("o1")
        future.order("o2", "u2", "coins_60"); future.verify("t2", "coins_60"); future.bind("t2", "o2", "u2")
        future.wait(hours: 25)
        #expect(future.kinds() == ["missing-grant", "stale-order"])
    }

    @Test("as of a position: the audit of a prefix is the audit of the truncated log; later findings are absent earlier")
    func asOf() {
        var h = History()
        h.purchase(1)
        h.order("o2", "u1", "coins_60"); h.launch("o2"); h.verify("t2", "coins_60"); h.bind("t2", "o2", "u1")
        let bound = h.count
        h.wait(minutes: 30)
        let late = h.count
        h.refund("t1", "rf1", cny(600))
        h.wait(minutes: 30)
        let all = h.count
        for n in [bound, late, all] {
            var truncated = h
            truncated.facts = Array(h.facts.prefix(n))
            #expect(h.audit(upTo: n) == truncated.audit())
        }
        #expect(h.kinds(upTo: bound) == [])
        #expect(h.kinds(upTo: late) == ["missing-grant"])
        #expect(h.kinds(upTo: all) == ["missing-grant", "refund-not-revoked"])
    }

    @Test("deterministic: the same log gives the same findings, in the same order")
    func deterministic() {
        var h = History()
        h.purchase(1); h.grant("g1-again", "u1", "t1", coins60)
        h.order("o2", "u2", "coins_60"); h.launch("o2")
        h.verify("t3", "coins_300"); h.report("u3", "t3", "coins_300"); h.report("u4", "t3", "coins_300")
        h.spend("s1", "u5", 10)
        h.wait(hours: 30)
        let a = h.audit(), b = h.audit(), c = Audit.run(h.fold())
        #expect(a == b && b == c)
        #expect(a == a.sorted())
        #expect(Set(a.map(\.key)).count == a.count)
        #expect(a.map(\.kind.rawValue) == ["double-grant", "negative-balance", "orphan-payment", "receipt-reused", "stale-order"])
    }

    @Test("a clean generated history yields nothing but clawback negative balances")
    func generatedHistory() {
        var p = Projections()
        var position: Int64 = 0
        for (fact, at) in HistoryGenerator(users: 500, seed: 7).prefix(50_000) {
            position += 1
            p.apply(fact, FactContext(position: position, occurredAt: at))
        }
        let fs = Audit.run(p)
        #expect(Set(fs.map(\.kind)).isSubset(of: [.negativeBalance]), "\(Set(fs.map(\.kind)))")
        #expect(fs == Audit.run(p))
    }

    /// `LEDGER_AUDIT_BENCH=10000000 swift test -c release -Xswiftc -enable-testing --filter auditBench`:
    /// generate N facts, then time the fold and the audit separately.
    @Test("bench: fold and audit a long generated history", .enabled(if: ProcessInfo.processInfo.environment["LEDGER_AUDIT_BENCH"] != nil))
    func auditBench() {
        let n = Int(ProcessInfo.processInfo.environment["LEDGER_AUDIT_BENCH"] ?? "") ?? 1_000_000
        let clock = ContinuousClock()
        var facts: [(Fact, Timestamp)] = []
        facts.reserveCapacity(n)
        let generate = clock.measure { facts.append(contentsOf: HistoryGenerator(users: max(1, n / 50), seed: 1).prefix(n)) }
        var p = Projections()
        let fold = clock.measure {
            for (i, (fact, at)) in facts.enumerated() { p.apply(fact, FactContext(position: Int64(i + 1), occurredAt: at)) }
        }
        var count = 0
        let audit = clock.measure { count = Audit.run(p).count }
        print("audit bench: \(n) facts, generate \(generate), fold \(fold), audit \(audit), \(count) findings, \(p.transactions.count) transactions")
    }
}
