import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

@Suite("Audit: refunds and revocations")
struct RefundRulesTests {
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
        #expect(
            fs.first?.positions == [9, refundPosition] && fs.first?.amountAtRisk == cny(600) && fs.first?.userId == "u1"
        )
        h.revoke("u1", "t1", .refund)
        #expect(h.kinds() == [])
    }

    @Test("refund-not-revoked after a move names who still holds the grant: the old owner, not the new one")
    func refundNotRevokedAfterAMove() {
        var h = History()
        h.purchase(1)
        h.transfer("t1", "tr1", from: "u1", to: "u2")
        h.refund("t1", "rf1", cny(600))
        h.wait(minutes: 11)
        let fs = h.audit().filter { $0.kind == .refundNotRevoked }
        #expect(fs.map(\.userId) == ["u1"], "\(fs)")
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
        h.refund("t1", "rf1", cny(600))
        h.reverse("t1", "n-rev")
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
}
