import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

@Suite("Audit: subscriptions")
struct SubscriptionRulesTests {
    // MARK: subscription-drift

    @Test("subscription-drift: time granted differs from time paid; a missing or double grant is not drift")
    func subscriptionDrift() {
        var h = History()
        h.order("o1", "u1", "vip.month")
        h.verify("m1", "vip.month", original: "m1", days: 30)
        h.bind("m1", "o1", "u1")
        h.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 7), order: "o1")
        let fs = h.audit()
        #expect(fs.map(\.kind) == [.subscriptionDrift])
        #expect(fs.first?.userId == "u1" && fs.first?.positions == [5, 7])
        #expect(fs.first?.amountAtRisk == cny(1917))  // 25.00 CNY x 23/30 days, rounded up

        var missing = History()
        missing.order("o1", "u1", "vip.month")
        missing.verify("m1", "vip.month", original: "m1", days: 30)
        missing.bind("m1", "o1", "u1")
        missing.wait(minutes: 11)
        #expect(missing.kinds() == ["missing-grant"])

        var twice = History()
        twice.order("o1", "u1", "vip.month")
        twice.verify("m1", "vip.month", original: "m1", days: 30)
        twice.bind("m1", "o1", "u1")
        twice.grant("g1", "u1", "m1", vipMonth, order: "o1")
        twice.grant("g2", "u1", "m1", vipMonth, order: "o1")
        #expect(twice.kinds() == ["double-grant"])

        // A subscription period granted as a non-renewing period of the same days: the same time.
        var same = History()
        same.order("o1", "u1", "vip.month")
        same.verify("m1", "vip.month", original: "m1", days: 30)
        same.bind("m1", "o1", "u1")
        same.grant("g1", "u1", "m1", .period(entitlement: "vip", days: 30), order: "o1")
        #expect(same.kinds() == [])
    }
}
