import Foundation
import Testing
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios
import LedgerStatements

/// Reconciliation and revenue over simulated histories with the stores' files written, parsed
/// back and folded beside the log (no database): exactly the injected findings, nothing on clean
/// histories, and revenue that ties to the statements.
@Suite("Reconciliation")
struct ReconciliationTests {
    /// The simulated history, then every statement file's facts, as one fold.
    static func fold(_ sim: Simulator, _ statements: SimulatedStatements) throws -> (Projections, [StatementFile]) {
        var p = Projections()
        var position: Int64 = 0
        for f in sim.facts {
            position += 1
            p.apply(f.fact, FactContext(position: position, occurredAt: f.at))
        }
        let files = try StatementWriter.files(
            wechatDays: statements.wechatDays, appstore: statements.lines[.appstore] ?? [],
            googleplay: statements.lines[.googleplay] ?? [], from: statements.from, to: statements.to,
            bundleId: SimulatedStatements.bundleId, packageName: SimulatedStatements.packageName,
            wechatAppId: SimulatedStatements.wechatAppId, wechatMerchant: SimulatedStatements.wechatMerchant
        ).map { try $0.parse() }
        for file in files {
            for fact in file.facts {
                position += 1
                p.apply(fact, FactContext(position: position, occurredAt: file.imported.periodEnd))
            }
        }
        return (p, files)
    }

    @Test(
        "clean histories: no reconciliation finding, and revenue ties to the statements row by row",
        arguments: [1, 2, 3] as [UInt64])
    func clean(seed: UInt64) throws {
        let sim = Simulator(users: 120, days: 20, seed: seed, faults: .none)
        let statements = SimulatedStatements(sim)
        #expect(statements.truth.isEmpty)
        let (p, files) = try Self.fold(sim, statements)
        #expect(Audit.run(p).filter { $0.kind.isReconciliation }.isEmpty)
        let rows = Revenue.compute(p, by: .day)
        #expect(!rows.isEmpty && rows.allSatisfy(\.ties))
        // The WeChat bills' own totals (the summary rows the parser checked) equal the revenue's.
        let wechatGross = files.filter { $0.imported.source == .wechatTradeBill }.flatMap(\.lines).filter {
            $0.kind == .sale
        }
        .reduce(Int64(0)) { $0 + ($1.amount?.minorUnits ?? 0) }
        #expect(Revenue.totals(rows).first { $0.channel == .wechat }?.ledger.gross == wechatGross)
        // Months are the days summed: the same totals by either bucket.
        #expect(Revenue.totals(Revenue.compute(p, by: .month)) == Revenue.totals(rows))
    }

    @Test(
        "injected faults: the audit's reconciliation findings are exactly the ground truth",
        arguments: [4, 5] as [UInt64])
    func faults(seed: UInt64) throws {
        let spec = try FaultSpec.parse(
            "unrecorded-sale=0.02,unrecorded-refund=0.02,unconfirmed-payment=0.02,amount-mismatch=0.02")
        let sim = Simulator(users: 200, days: 20, seed: seed, faults: spec)
        let statements = SimulatedStatements(sim)
        #expect(sim.groundTruth.isEmpty)
        for k in SimulatedStatements.kinds { #expect(statements.injected[k, default: 0] > 0, "\(k.rawValue) injected") }
        let (p, _) = try Self.fold(sim, statements)
        let found = Set(Audit.run(p).map(\.key))
        #expect(found == Set(statements.truth.map(\.key)))
        for f in Audit.run(p) {
            #expect(f.amountAtRisk != nil && !f.positions.isEmpty)
            #expect(
                f.kind == .unconfirmedPayment || f.detail.contains(" line "), "names the statement line: \(f.detail)")
        }
    }

    /// The simulator's whole ground truth, over 20 seeds with every fault and the statements (one
    /// bill imported a second time, as the same bytes under another name would be): the audit finds
    /// exactly what was injected, no more, no less.
    @Test("20 seeds, every fault, with statements: the audit is exactly the simulator's ground truth")
    func groundTruthOverSeeds() throws {
        let spec = try FaultSpec.parse("all=0.02")
        for seed: UInt64 in 101...120 {
            let sim = Simulator(users: 60, days: 20, seed: seed, faults: spec)
            let statements = SimulatedStatements(sim)
            var (p, files) = try Self.fold(sim, statements)
            if let again = files.first {
                var position = Int64(sim.facts.count + files.reduce(0) { $0 + $1.facts.count })
                for fact in again.facts {
                    position += 1
                    p.apply(fact, FactContext(position: position, occurredAt: again.imported.periodEnd))
                }
                files.append(again)
            }
            let findings = Audit.run(p)
            let expected = Set((sim.groundTruth + statements.truth).map(\.key)), actual = Set(findings.map(\.key))
            let extra = findings.filter { !expected.contains($0.key) }.map { "unexpected \($0.key): \($0.detail)" }
            let missing = expected.subtracting(actual).sorted().map { "missing \($0)" }
            #expect(
                extra.isEmpty && missing.isEmpty, "seed \(seed): \((extra + missing).prefix(8).joined(separator: "\n"))"
            )
            #expect(!expected.isEmpty)
        }
    }

    /// Statements for a month of a longer history (as `ledger bench reconcile` imports): a WeChat
    /// bill is for a whole Beijing day, so a period ending at UTC midnight must still list the sales
    /// of the rest of that day, and a refund line days after the period (an injected
    /// unrecorded-refund) must not bring a bill that lists none of its day's sales.
    @Test("statements for part of a longer history: exactly the injected findings", arguments: [6, 7] as [UInt64])
    func partOfHistory(seed: UInt64) throws {
        let spec = try FaultSpec.parse(
            "unrecorded-sale=0.05,unrecorded-refund=0.1,unconfirmed-payment=0.05,amount-mismatch=0.05")
        let sim = Simulator(users: 200, days: 20, seed: seed, faults: spec)
        var history = Projections()
        for (i, f) in sim.facts.enumerated() {
            history.apply(f.fact, FactContext(position: Int64(i + 1), occurredAt: f.at))
        }
        var listedAfterMidnight = 0
        for days in [8, 10, 12] as [Int64] {
            let to = Timestamp(microsecondsSince1970: Simulator.start.microseconds + days * 86_400_000_000)
            let statements = SimulatedStatements(history, seed: seed, faults: spec, from: Simulator.start, to: to)
            let wechat = statements.lines[.wechat] ?? []
            listedAfterMidnight += wechat.filter { $0.at >= to }.count
            #expect(!wechat.contains { $0.at.microseconds >= to.microseconds + 16 * 3_600_000_000 })
            let (p, _) = try Self.fold(sim, statements)
            let found = Set(Audit.reconciliation(p).map(\.key))
            #expect(!found.isEmpty)
            #expect(found == Set(statements.truth.map(\.key)), "statements through day \(days)")
        }
        #expect(listedAfterMidnight > 0, "the last Beijing day's sales after UTC midnight are listed")
    }
}

/// The rules one by one, on hand-made folds.
@Suite("Reconciliation rules")
struct ReconciliationRuleTests {
    static let t0 = Timestamp("2026-03-02T02:00:00Z")!
    static func at(_ hours: Int64) -> Timestamp {
        Timestamp(microsecondsSince1970: t0.microseconds + hours * 3_600_000_000)
    }
    static func cny(_ m: Int64) -> Money { Money(minorUnits: m, currency: Currency("CNY")!) }

    static func fold(_ facts: [(Fact, Timestamp)]) -> Projections {
        var p = Projections()
        for (i, f) in facts.enumerated() { p.apply(f.0, FactContext(position: Int64(i + 1), occurredAt: f.1)) }
        return p
    }

    static func verified(
        _ tx: String, _ minor: Int64, _ at: Timestamp, environment: StoreEnvironment = .production
    ) -> (Fact, Timestamp) {
        (
            .paymentVerified(
                PaymentVerified(
                    channel: .wechat, transactionId: tx, productId: "wx_coins_300", purchaseDate: at,
                    environment: environment,
                    price: cny(minor))), at
        )
    }

    static func line(
        _ n: Int64, _ kind: StatementLineKind, _ tx: String, _ minor: Int64?, _ at: Timestamp, refundId: String? = nil
    ) -> (Fact, Timestamp) {
        var l = StatementLine(
            digest: "sha256:aa", line: n, source: .wechatTradeBill, kind: kind, transactionId: tx,
            amount: minor.map(cny), at: at)
        l.refundId = refundId
        return (.statementLine(l), Self.at(24))
    }

    static let statement: (Fact, Timestamp) = (
        .statementImported(
            StatementImported(
                source: .wechatTradeBill, digest: "sha256:aa",
                periodStart: at(-48), periodEnd: at(48), lines: 4)), at(24)
    )

    /// An App Store transaction history is one customer's: a payment it lacks is not unconfirmed
    /// (Google's earnings report lists every sale of the account, and there it is).
    @Test(arguments: [
        (Channel.appstore, StatementSource.appstoreHistory, false), (.googleplay, .googleplayEarnings, true),
    ])
    func onlyAStatementOfEverySaleLeavesAPaymentUnconfirmed(
        _ channel: Channel, _ source: StatementSource, _ unconfirmed: Bool
    ) {
        func verified(_ tx: String) -> (Fact, Timestamp) {
            (
                .paymentVerified(
                    PaymentVerified(
                        channel: channel, transactionId: tx, productId: "vip_month", purchaseDate: Self.t0,
                        price: Money(minorUnits: 999, currency: Currency("USD")!))), Self.t0
            )
        }
        var sale = StatementLine(
            digest: "sha256:bb", line: 1, source: source, kind: .sale, transactionId: "A",
            amount: Money(minorUnits: 999, currency: Currency("USD")!), at: Self.t0)
        sale.productId = "vip_month"
        let facts: [(Fact, Timestamp)] = [
            verified("A"), verified("B"),
            (
                .statementImported(
                    StatementImported(
                        source: source, digest: "sha256:bb", periodStart: Self.at(-48), periodEnd: Self.at(48), lines: 1
                    )),
                Self.at(24)
            ),
            (.statementLine(sale), Self.at(24)),
            (
                .orderCreated(
                    OrderCreated(
                        orderId: "later", userId: "u", channel: channel, productId: "vip_month",
                        price: Money(minorUnits: 999, currency: Currency("USD")!))),
                Self.at(60)
            ),
        ]
        let found = Audit.run(Self.fold(facts)).filter { $0.kind == .unconfirmedPayment }
        #expect(found.map(\.transactionId) == (unconfirmed ? ["B"] : []))
    }

    @Test(
        "a second refund the log never recorded is unrecorded, though the log has the first; one the log wrote by another id is not"
    )
    func refundsByTheirIds() {
        func audit(_ logIds: [String], _ lineIds: [String], amounts: [Int64] = [1000, 1000]) -> [Finding] {
            var facts = [Self.verified("A", 3000, Self.t0), Self.statement]
            for (i, id) in lineIds.enumerated() {
                facts.append(Self.line(Int64(i + 2), .refund, "A", amounts[i], Self.at(3), refundId: id))
            }
            facts += logIds.map { Self.logRefund($0, amounts.last!) } + [Self.later]
            return Audit.run(Self.fold(facts)).filter { $0.kind == .unrecordedRefund }
        }
        let second = audit(["R1"], ["R1", "R2"])
        #expect(second.count == 1 && second.first?.detail.contains("refund R2") == true, "\(second)")
        #expect(audit(["R1", "R2"], ["R1", "R2"]).isEmpty)
        // The log wrote its refund by our own refund number: the one line is that refund; a second is not.
        #expect(audit(["our-refund-1"], ["R1"]).isEmpty)
        #expect(audit(["our-refund-1"], ["R1", "R2"]).count == 1)
        // The log's 5.00 refund under our own number is the bill's 5.00 line, not the 10.00 one listed first.
        let pair = audit(["our-refund-1"], ["R1", "R2"], amounts: [1000, 500])
        #expect(pair.count == 1 && pair.first?.amountAtRisk == Self.cny(1000), "\(pair)")
    }

    /// The log's refund `id` of transaction A, refunded at 3 h and logged at 4 h.
    static func logRefund(_ id: String, _ minor: Int64) -> (Fact, Timestamp) {
        (
            .refunded(
                Refunded(
                    channel: .wechat, transactionId: "A", refundId: id, amount: Self.cny(minor),
                    refundedAt: Self.at(3))), Self.at(4)
        )
    }

    /// A fact 30 h in, which moves the log's clock past the statements' window.
    static let later: (Fact, Timestamp) = (
        .orderCreated(
            OrderCreated(
                orderId: "later", userId: "u", channel: .wechat, productId: "wx_coins_300", price: cny(3000))),
        at(30)
    )

    @Test(
        "a refund line paired with a log refund of another id or none has its amount compared; each log refund answers one line"
    )
    func refundsPairedByAmount() {
        // `lines`: (refund id or none, amount) on the statement; `log`: the refunds the log recorded.
        func audit(_ lines: [(String?, Int64?)], log: [(String, Int64)]) -> [Finding] {
            var facts = [Self.verified("A", 3000, Self.t0), Self.statement, Self.line(1, .sale, "A", 3000, Self.t0)]
            for (i, (id, amount)) in lines.enumerated() {
                facts.append(Self.line(Int64(i + 2), .refund, "A", amount, Self.at(3 + Int64(i)), refundId: id))
            }
            facts += log.map { Self.logRefund($0.0, $0.1) } + [Self.later]
            return Audit.run(Self.fold(facts)).filter(\.kind.isReconciliation)
        }
        // The bill's refund of 30.00 under WeChat's id is the log's only refund, of 10.00, under ours.
        let other = audit([("5030000112", 3000)], log: [("our-refund-1", 1000)])
        #expect(other.map(\.kind) == [.amountMismatch] && other.first?.amountAtRisk == Self.cny(2000), "\(other)")
        // Lines naming no refund id (Google's earnings report): each is one of the log's refunds.
        #expect(audit([(nil, 400), (nil, 600)], log: [("r1", 600), ("r2", 400)]).isEmpty)
        let second = audit([(nil, 400), (nil, 600)], log: [("r1", 400)])
        #expect(
            second.map(\.kind) == [.unrecordedRefund] && second.first?.amountAtRisk == Self.cny(600), "\(second)")
        let differs = audit([(nil, 1000)], log: [("r1", 400)])
        #expect(differs.map(\.kind) == [.amountMismatch] && differs.first?.amountAtRisk == Self.cny(600), "\(differs)")
        // Two partial refunds the log recorded as one of their sum.
        #expect(audit([(nil, 400), (nil, 600)], log: [("r1", 1000)]).isEmpty)
        // A line without an amount (Google's voided purchases) is answered by any refund.
        #expect(audit([(nil, nil)], log: [("r1", 400)]).isEmpty)
        #expect(audit([(nil, nil)], log: []).map(\.kind) == [.unrecordedRefund])
        // A re-issue of the period corrects the refund from 12.00 to 6.00, which the log recorded:
        // the line as first written is not an unrecorded refund.
        var corrected = StatementLine(
            digest: "sha256:bb", line: 2, source: .wechatTradeBill, kind: .refund, transactionId: "A",
            amount: Self.cny(600), at: Self.at(4))
        corrected.productId = "wx_coins_300"
        let reissued: [(Fact, Timestamp)] = [
            Self.verified("A", 3000, Self.t0), Self.statement, Self.line(1, .sale, "A", 3000, Self.t0),
            Self.line(2, .refund, "A", 1200, Self.at(3)),
            (
                .statementImported(
                    StatementImported(
                        source: .wechatTradeBill, digest: "sha256:bb", periodStart: Self.at(-48),
                        periodEnd: Self.at(48), lines: 4)), Self.at(25)
            ),
            (.statementLine(corrected), Self.at(25)), Self.logRefund("r1", 600), Self.later,
        ]
        let afterReissue = Audit.run(Self.fold(reissued)).filter(\.kind.isReconciliation)
        #expect(afterReissue.isEmpty, "\(afterReissue)")
    }

    @Test("a free trial moves no money: no statement is expected to list it, and revenue counts no sale on either side")
    func freeTrial() {
        let facts = [Self.verified("T", 0, Self.t0), Self.verified("P", 3000, Self.t0), Self.statement]
        let p = Self.fold(facts)
        #expect(Audit.run(p).filter { $0.kind == .unconfirmedPayment }.map(\.transactionId) == ["P"])
        #expect(Revenue.compute(p, by: .day).map(\.ledger.sales) == [1])
        // An App Store history lists a trial at 0: no sale on either side.
        let listed = Self.fold(facts + [Self.line(2, .sale, "T", 0, Self.t0), Self.line(3, .sale, "P", 3000, Self.t0)])
        #expect(Revenue.compute(listed, by: .day).map { [$0.ledger.sales, $0.statements.sales] } == [[1, 1]])
    }

    @Test("an amount mismatch below a minor unit is at risk by exactly that")
    func mismatchBelowAMinorUnit() {
        let usd = Currency("USD")!
        let price = Money(storeAmount: 1995, unit: .milliunits, currency: usd)!
        var sale = StatementLine(
            digest: "sha256:aa", line: 2, source: .wechatTradeBill, kind: .sale, transactionId: "F",
            amount: Money(minorUnits: 199, currency: usd), at: Self.t0)
        sale.productId = "wx_coins_300"
        let facts: [(Fact, Timestamp)] = [
            (
                .paymentVerified(
                    PaymentVerified(
                        channel: .wechat, transactionId: "F", productId: "wx_coins_300", purchaseDate: Self.t0,
                        price: price)), Self.t0
            ),
            Self.statement, (.statementLine(sale), Self.at(24)),
        ]
        let mismatch = Audit.run(Self.fold(facts)).first { $0.kind == .amountMismatch }
        #expect(mismatch?.amountAtRisk == Money(storeAmount: 5, unit: .milliunits, currency: usd))
        #expect(mismatch?.amountAtRisk?.description == "0.005 USD")
    }

    @Test("each rule, with the window measured in log time")
    func rules() {
        var facts = [
            Self.verified("A", 3000, Self.t0), Self.verified("B", 3000, Self.t0),
            Self.verified("S", 600, Self.t0, environment: .sandbox),
            Self.verified("U", 6800, Self.at(1)), Self.statement,
            Self.line(2, .sale, "A", 3000, Self.t0), Self.line(3, .sale, "B", 3100, Self.t0),
            Self.line(4, .sale, "X", 1800, Self.at(2)),
            Self.line(5, .refund, "A", 1000, Self.at(3), refundId: "R1"),
        ]
        // (The unbound payments are also orphan-payment: only reconciliation is looked at here.)
        let early = Audit.run(Self.fold(facts)).filter { $0.kind.isReconciliation }
        // Log time is the statement's (t0 + 24 h): the sale at t0 + 2 h and the refund at t0 + 3 h are still inside the window.
        #expect(early.map(\.kind).sorted() == [.amountMismatch, .unconfirmedPayment])
        facts.append(
            (
                .orderCreated(
                    OrderCreated(
                        orderId: "later", userId: "u", channel: .wechat, productId: "wx_coins_300",
                        price: Self.cny(3000))), Self.at(30)
            ))
        let late = Audit.run(Self.fold(facts)).filter { $0.kind.isReconciliation }
        #expect(
            Dictionary(grouping: late, by: \.kind).mapValues(\.count) == [
                .amountMismatch: 1, .unconfirmedPayment: 1, .unrecordedSale: 1, .unrecordedRefund: 1,
            ])
        let mismatch = late.first { $0.kind == .amountMismatch }
        #expect(
            mismatch?.transactionId == "B" && mismatch?.amountAtRisk == Self.cny(100) && mismatch?.positions == [2, 7])
        #expect(late.first { $0.kind == .unconfirmedPayment }?.transactionId == "U")
        #expect(late.first { $0.kind == .unrecordedSale }?.amountAtRisk == Self.cny(1800))
        #expect(late.first { $0.kind == .unrecordedRefund }?.positions == [1, 9])
        #expect(!late.contains { $0.transactionId == "S" }, "sandbox is judged by no rule")
        // The log records the refund: the finding goes.
        facts.append(
            (
                .refunded(
                    Refunded(
                        channel: .wechat, transactionId: "A", refundId: "R1", amount: Self.cny(1000),
                        refundedAt: Self.at(3))), Self.at(31)
            ))
        #expect(!Audit.run(Self.fold(facts)).contains { $0.kind == .unrecordedRefund })
        #expect(Audit.reconciliation(Self.fold(facts)).count == 3)
    }

    @Test(
        "the order on every finding: the log's binding, else the line's out_trade_no, else the order an appAccountToken was minted for"
    )
    func orderIds() {
        let token = "7D1C1E8A-3F9B-4A51-9A55-2B8F0C6B8E11"
        var apple = StatementLine(
            digest: "sha256:bb", line: 1, source: .appstoreHistory, kind: .sale, transactionId: "2000000999",
            orderId: token.lowercased(), amount: Self.cny(600), at: Self.t0)
        apple.app = "com.example.coins"
        var wechat = StatementLine(
            digest: "sha256:aa", line: 6, source: .wechatTradeBill, kind: .sale, transactionId: "Y",
            orderId: "wx-order-9",
            amount: Self.cny(3000), at: Self.t0)
        wechat.app = nil
        let facts: [(Fact, Timestamp)] = [
            (
                .orderCreated(
                    OrderCreated(
                        orderId: "ord-apple", userId: "u", channel: .appstore, productId: "coins_60",
                        price: Self.cny(600),
                        accountToken: token)), Self.t0
            ),
            Self.statement, (.statementLine(wechat), Self.at(24)),
            (
                .statementImported(
                    StatementImported(
                        source: .appstoreHistory, digest: "sha256:bb", periodStart: Self.at(-48),
                        periodEnd: Self.at(48),
                        lines: 1, app: "com.example.coins")), Self.at(24)
            ),
            (.statementLine(apple), Self.at(24)),
            (
                .orderCreated(
                    OrderCreated(orderId: "later", userId: "u", channel: .wechat, productId: "p", price: Self.cny(1))),
                Self.at(30)
            ),
        ]
        let found = Audit.reconciliation(Self.fold(facts))
        #expect(
            Set(found.map { "\($0.kind.rawValue) \($0.transactionId ?? "") \($0.orderId ?? "-")" })
                == ["unrecorded-sale Y wx-order-9", "unrecorded-sale 2000000999 ord-apple"])
    }

    @Test("coverage is the statement's own period, with a few minutes' slack, per app")
    func coverage() {
        // A WeChat bill of one Beijing day: a payment inside it is judged at once; one within the
        // clock slack of its edge, or of another app, is not.
        let start = Timestamp("2026-03-01T16:00:00Z")!, end = Timestamp("2026-03-02T16:00:00Z")!
        func shifted(_ t: Timestamp, _ seconds: Int64) -> Timestamp {
            Timestamp(microsecondsSince1970: t.microseconds + seconds * 1_000_000)
        }
        func paid(_ tx: String, _ at: Timestamp, app: String?) -> (Fact, Timestamp) {
            (
                .paymentVerified(
                    PaymentVerified(
                        channel: .wechat, transactionId: tx, productId: "wx_coins_300", purchaseDate: at,
                        price: Self.cny(3000),
                        app: app)), at
            )
        }
        let facts: [(Fact, Timestamp)] = [
            paid("inside", shifted(start, 3600), app: "wxA"), paid("edge", shifted(end, -120), app: "wxA"),
            paid("other-app", shifted(start, 3600), app: "wxB"), paid("before", shifted(start, -3600), app: "wxA"),
            (
                .statementImported(
                    StatementImported(
                        source: .wechatTradeBill, digest: "sha256:cc", periodStart: start, periodEnd: end, lines: 0,
                        app: "wxA")), end
            ),
        ]
        #expect(Audit.reconciliation(Self.fold(facts)).map(\.transactionId) == ["inside"])
    }

    @Test("another file for an imported period is a re-issue, but the financial report's regions are not")
    func reissues() {
        func imported(_ source: StatementSource, _ digest: String) -> (Fact, Timestamp) {
            (
                .statementImported(
                    StatementImported(
                        source: source, digest: digest, periodStart: Self.at(-48), periodEnd: Self.at(48), lines: 0)),
                Self.at(48)
            )
        }
        let book = Self.fold([
            imported(.appstoreFinance, "sha256:01"), imported(.appstoreFinance, "sha256:02"),
            imported(.wechatTradeBill, "sha256:03"), imported(.wechatTradeBill, "sha256:04"),
            imported(.wechatTradeBill, "sha256:03"),
        ]).statements
        #expect(book.statements.count == 4)
        #expect(book.reissues.map(\.statement.digest) == ["sha256:04"] && book.reissues.first?.reissueOf == "sha256:03")
    }

    @Test("no statement: no reconciliation finding and no revenue from statements")
    func none() {
        let p = Self.fold([
            Self.verified("A", 3000, Self.t0),
            (
                .orderCreated(
                    OrderCreated(
                        orderId: "o", userId: "u", channel: .wechat, productId: "p",
                        price: Self.cny(1))), Self.at(100)
            ),
        ])
        #expect(Audit.reconciliation(p).isEmpty)
        let rows = Revenue.compute(p, by: .day)
        #expect(rows.count == 1 && rows[0].ledger.gross == 3000 && rows[0].statements == RevenueTotals())
    }
}
