import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios

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
                #expect(
                    !f.positions.isEmpty && f.positions.allSatisfy { $0 >= 1 && $0 <= Int64(s.facts.count) },
                    "\(s): \(f)")
                #expect(f.positions == f.positions.sorted())
                #expect(!f.detail.isEmpty)
            }
        }
    }

    @Test("4: receipt-reused names the second account, the transaction and its price")
    func scenario4() throws {
        let s = Scenarios.scenario(4)
        let f = try #require(Audit.run(s.projections()).first)
        #expect(
            f.kind == .receiptReused && f.userId == "u04-erin" && f.transactionId == "20000400001" && f.orderId == nil)
        #expect(f.channel == .appstore && f.amountAtRisk == cny(3000))
        #expect(f.positions.last == Int64(s.facts.count))  // Erin's report, the last fact
    }

    @Test("39: unrecorded-sale names the order the bill gives (WeChat out_trade_no)")
    func scenario39() throws {
        let s = Scenarios.scenario(39)
        let f = try #require(Audit.run(s.projections()).first)
        #expect(f.kind == .unrecordedSale && f.orderId == "o39-1" && f.transactionId == "42003920260301001")
        #expect(f.amountAtRisk == cny(3000) && f.channel == .wechat)
    }

    @Test("40: the same bytes are one statement; another digest for the period is a re-issue, kept and marked")
    func scenario40() {
        let book = Scenarios.scenario(40).projections().statements
        #expect(book.statements.count == 2)
        #expect(
            book.reissues.map(\.reissueOf) == [
                "sha256:4040404040404040404040404040404040404040404040404040404040404040"
            ])
        #expect(book.lines.count == 1, "the sale both issues list is matched once")
    }

    @Test("41: unconfirmed-payment names the log's order and waits for no neighbouring day")
    func scenario41() throws {
        let f = try #require(Audit.run(Scenarios.scenario(41).projections()).first)
        #expect(f.kind == .unconfirmedPayment && f.orderId == "o41-1" && f.transactionId == "42004120260301001")
    }

    @Test("36: a move with the remaining days is no double grant; more days than owed left after it is drift")
    func scenario36() {
        let s = Scenarios.scenario(36)
        #expect(Audit.run(s.projections()).isEmpty)
        // The same history with only 10 of the 20 moved days taken back: 40 days for a 30-day month.
        var facts = s.facts
        if let i = facts.firstIndex(where: {
            if case .entitlementRevoked = $0.fact { return true } else { return false }
        }),
            case .entitlementRevoked(var r) = facts[i].fact
        {
            r.units = 10
            facts[i].fact = .entitlementRevoked(r)
        }
        var p = Projections()
        for (k, f) in facts.enumerated() { p.apply(f.fact, FactContext(position: Int64(k + 1), occurredAt: f.at)) }
        #expect(Audit.run(p).map(\.kind) == [.subscriptionDrift])
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
        let report = s.facts.firstIndex {
            if case .clientCallbackReceived = $0.fact { return true } else { return false }
        }!
        #expect(Audit.run(s.projections(upTo: report + 1)).map(\.kind) == [.orphanPayment])
        #expect(Audit.run(s.projections()).isEmpty)
    }

    @Test("7: negative-balance names the user, the clawback that took it below zero, and the money for coins spent")
    func scenario7() throws {
        let s = Scenarios.scenario(7)
        let f = try #require(Audit.run(s.projections()).first)
        #expect(
            f.kind == .negativeBalance && f.userId == "u07-henry" && f.transactionId == "20000700001"
                && f.orderId == "o07-1")
        #expect(f.positions == [Int64(s.facts.count)])  // the EntitlementRevoked
        #expect(f.amountAtRisk == cny(2800))  // 280 of the 300 coins refunded were already spent: 28.00 of 30.00 CNY
    }

    @Test("11: verification failing is nothing yet; once it lands and is granted, nothing")
    func scenario11() {
        let s = Scenarios.scenario(11)
        let verified =
            s.facts.firstIndex { if case .paymentVerified = $0.fact { return true } else { return false } }! + 1
        for n in 1...s.facts.count {
            // Between the verification and its binding (one second) it is an orphan: no window.
            let expected: [FindingKind] = n == verified ? [.orphanPayment] : []
            #expect(Audit.run(s.projections(upTo: n)).map(\.kind) == expected, "after \(n) facts")
        }
    }

    // MARK: windows, as-of, determinism

    @Test("windows are log time: long past by the wall clock is still inside; a future log is judged by its own clock")
    func logTime() {
        var past = History(start: Timestamp("2015-01-01T00:00:00Z")!)
        past.order("o1", "u1", "coins_60")
        past.launch("o1")  // stale by the wall clock
        past.verify("t1", "coins_60")
        past.bind("t1", nil, "u1", .manual)  // not granted
        past.purchase(2)
        past.refund("t2", "rf2", cny(600))  // not revoked
        #expect(past.kinds() == [])

        var future = History(start: Timestamp("2099-01-01T00:00:00Z")!)
        future.order("o1", "u1", "coins_60")
        future.launch("o1")
        future.order("o2", "u2", "coins_60")
        future.verify("t2", "coins_60")
        future.bind("t2", "o2", "u2")
        future.wait(hours: 25)
        #expect(future.kinds() == ["missing-grant", "stale-order"])
    }

    @Test(
        "as of a position: the audit of a prefix is the audit of the truncated log; later findings are absent earlier")
    func asOf() {
        // The oracle is a log that never had the later facts (built by the same steps, stopped
        // early), not the same prefix folded twice.
        func built(through stage: Int) -> History {
            var h = History()
            h.purchase(1)
            h.order("o2", "u1", "coins_60")
            h.launch("o2")
            h.verify("t2", "coins_60")
            h.bind("t2", "o2", "u1")
            if stage == 0 { return h }
            h.wait(minutes: 30)
            if stage == 1 { return h }
            h.refund("t1", "rf1", cny(600))
            h.wait(minutes: 30)
            return h
        }
        let full = built(through: 2)
        for stage in 0...2 {
            let cut = built(through: stage)
            #expect(Array(full.facts.prefix(cut.count)).map(\.at) == cut.facts.map(\.at))
            #expect(full.audit(upTo: cut.count) == cut.audit(), "stage \(stage)")
            #expect(full.audit(upTo: cut.count).allSatisfy { $0.positions.allSatisfy { $0 <= Int64(cut.count) } })
        }
        let bound = built(through: 0).count, late = built(through: 1).count
        #expect(full.kinds(upTo: bound) == [])
        #expect(full.kinds(upTo: late) == ["missing-grant"])
        #expect(full.kinds() == ["missing-grant", "refund-not-revoked"])
        // A wrong "as of" that audits the whole log is caught: the findings differ.
        #expect(full.audit(upTo: late) != full.audit())
    }

    @Test("deterministic: the same log gives the same findings, in the same order")
    func deterministic() {
        var h = History()
        h.purchase(1)
        h.grant("g1-again", "u1", "t1", coins60)
        h.order("o2", "u2", "coins_60")
        h.launch("o2")
        h.verify("t3", "coins_300")
        h.report("u3", "t3", "coins_300")
        h.report("u4", "t3", "coins_300")
        h.spend("s1", "u5", 10)
        h.wait(hours: 30)
        let a = h.audit(), b = h.audit(), c = Audit.run(h.fold())
        #expect(a == b && b == c)
        #expect(a == a.sorted())
        #expect(Set(a.map(\.key)).count == a.count)
        #expect(
            a.map(\.kind.rawValue) == [
                "double-grant", "negative-balance", "orphan-payment", "receipt-reused", "stale-order",
            ])
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
    @Test(
        "bench: fold and audit a long generated history",
        .enabled(if: ProcessInfo.processInfo.environment["LEDGER_AUDIT_BENCH"] != nil))
    func auditBench() {
        let n = Int(ProcessInfo.processInfo.environment["LEDGER_AUDIT_BENCH"] ?? "") ?? 1_000_000
        let clock = ContinuousClock()
        var facts: [(Fact, Timestamp)] = []
        facts.reserveCapacity(n)
        let generate = clock.measure {
            facts.append(contentsOf: HistoryGenerator(users: max(1, n / 50), seed: 1).prefix(n))
        }
        var p = Projections()
        let fold = clock.measure {
            for (i, (fact, at)) in facts.enumerated() {
                p.apply(fact, FactContext(position: Int64(i + 1), occurredAt: at))
            }
        }
        var count = 0
        let audit = clock.measure { count = Audit.run(p).count }
        print(
            "audit bench: \(n) facts, generate \(generate), fold \(fold), audit \(audit), \(count) findings, \(p.transactions.count) transactions"
        )
    }
}

/// The scenarios of the stores' signed word: the amounts and subjects of their findings.
@Suite("Audit: the stores' signed word")
struct SignedWordAuditTests {
    @Test("28: days granted past the grace period are drift; 30: a family revoke kept has no money at risk")
    func lifecycleFindings() throws {
        let drift = try #require(Audit.run(Scenarios.scenario(28).projections()).first)
        #expect(drift.kind == .subscriptionDrift && drift.userId == "u28-vic")
        let family = try #require(Audit.run(Scenarios.scenario(30).projections()).first)
        #expect(family.kind == .refundNotRevoked && family.amountAtRisk == nil && family.userId == "u30-xia")
    }

    @Test("31: a reversal not granted again is missing the price; 33: the unknown type is the one notice left")
    func reversalAndNotices() throws {
        let missing = try #require(Audit.run(Scenarios.scenario(31).projections()).first)
        #expect(missing.kind == .missingGrant && missing.amountAtRisk == cny(3000))
        let s = Scenarios.scenario(33)
        let notices = Audit.run(s.projections())
        #expect(notices.map(\.transactionId) == ["notification:n33-1"] && notices.allSatisfy { $0.severity == .info })
    }

    @Test("32: inexact prices count exactly in revenue")
    func exactRevenue() {
        let rows = Revenue.totals(Revenue.compute(Scenarios.scenario(32).projections(), by: .month))
        let usd = rows.first { $0.currency.code == "USD" }, bhd = rows.first { $0.currency.code == "BHD" }
        #expect(usd?.ledger.exactGross(Currency("USD")!).description == "1.995 USD")
        #expect(
            bhd?.ledger.exactGross(Currency("BHD")!).description == "1.990 BHD"
                && bhd?.ledger.exactNet(Currency("BHD")!).description == "0.995 BHD")
    }
}

@Suite("Audit: two apps, one transaction id")
struct SharedTransactionIdAuditTests {
    /// Each app's transaction `t1` (two apps on one channel may see the same id), granted twice
    /// to the same user.
    static func history(apps: [String]) -> History {
        var h = History()
        for app in apps {
            var verified = PaymentVerified(
                channel: .appstore, transactionId: "t1", productId: "coins_60", purchaseDate: h.now,
                price: h.price("coins_60"))
            verified.app = app
            h.add(.paymentVerified(verified))
            for n in 1...2 {
                var grant = EntitlementGranted(
                    grantId: "g-\(app)-\(n)", userId: "u1", channel: .appstore, transactionId: "t1",
                    entitlement: coins60)
                grant.app = app
                h.add(.entitlementGranted(grant))
            }
        }
        return h
    }

    @Test("two apps' findings about one transaction id are two; the first app's keep the key they had alone")
    func findingsCarryTheAppOfALaterTransactionWithTheId() {
        let doubled = Self.history(apps: ["com.example.coins", "com.example.coins.lite"]).audit()
            .filter { $0.kind == .doubleGrant }.sorted { ($0.app ?? "") < ($1.app ?? "") }
        #expect(doubled.map(\.app) == [nil, "com.example.coins.lite"])
        #expect(
            doubled.map(\.key) == [
                "double-grant|appstore|t1||u1", "double-grant|appstore|t1||u1|com.example.coins.lite",
            ])
        #expect(doubled.map(\.transactionId) == ["t1", "t1"])
        // The first app alone: the same finding, under the same key.
        let alone = Self.history(apps: ["com.example.coins"]).audit().filter { $0.kind == .doubleGrant }
        #expect(alone.map(\.key) == ["double-grant|appstore|t1||u1"])
    }

    @Test("the app is read back from a later transaction's key, whatever characters its id has")
    func appOfAKey() {
        for id in ["t1", "交易-é1"] {
            #expect(
                Projections.app(ofKey: Projections.laterKey(.appstore, "com.example.lite", id), id: id)
                    == "com.example.lite")
            #expect(Projections.app(ofKey: Projections.laterKey(.googleplay, nil, id), id: id) == nil)
            #expect(Projections.app(ofKey: id, id: id) == nil)
        }
    }
}
