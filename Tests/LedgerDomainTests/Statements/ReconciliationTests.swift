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
        for f in sim.facts { position += 1; p.apply(f.fact, FactContext(position: position, occurredAt: f.at)) }
        let files = try StatementWriter.files(wechatDays: statements.wechatDays, appstore: statements.lines[.appstore] ?? [],
                                              googleplay: statements.lines[.googleplay] ?? [], from: statements.from, to: statements.to,
                                              bundleId: SimulatedStatements.bundleId, packageName: SimulatedStatements.packageName,
                                              wechatAppId: SimulatedStatements.wechatAppId, wechatMerchant: SimulatedStatements.wechatMerchant).map { try $0.parse() }
        for file in files {
            for fact in file.facts { position += 1; p.apply(fact, FactContext(position: position, occurredAt: file.imported.periodEnd)) }
        }
        return (p, files)
    }

    @Test("clean histories: no reconciliation finding, and revenue ties to the statements row by row", arguments: [1, 2, 3] as [UInt64])
    func clean(seed: UInt64) throws {
        let sim = Simulator(users: 120, days: 20, seed: seed, faults: .none)
        let statements = SimulatedStatements(sim)
        #expect(statements.truth.isEmpty)
        let (p, files) = try Self.fold(sim, statements)
        #expect(Audit.run(p).filter { $0.kind.isReconciliation }.isEmpty)
        let rows = Revenue.compute(p, by: .day)
        #expect(!rows.isEmpty && rows.allSatisfy(\.ties))
        // The WeChat bills' own totals (the summary rows the parser checked) equal the revenue's.
        let wechatGross = files.filter { $0.imported.source == .wechatTradeBill }.flatMap(\.lines).filter { $0.kind == .sale }
            .reduce(Int64(0)) { $0 + ($1.amount?.minorUnits ?? 0) }
        #expect(Revenue.totals(rows).first { $0.channel == .wechat }?.ledger.gross == wechatGross)
        #expect(Revenue.compute(p, by: .month) == Revenue.compute(p, by: .month))
    }

    @Test("injected faults: the audit's reconciliation findings are exactly the ground truth", arguments: [4, 5] as [UInt64])
    func faults(seed: UInt64) throws {
        let spec = try FaultSpec.parse("unrecorded-sale=0.02,unrecorded-refund=0.02,unconfirmed-payment=0.02,amount-mismatch=0.02")
        let sim = Simulator(users: 200, days: 20, seed: seed, faults: spec)
        let statements = SimulatedStatements(sim)
        #expect(sim.groundTruth.isEmpty)
        for k in SimulatedStatements.kinds { #expect(statements.injected[k, default: 0] > 0, "\(k.rawValue) injected") }
        let (p, _) = try Self.fold(sim, statements)
        let found = Set(Audit.run(p).map(\.key))
        #expect(found == Set(statements.truth.map(\.key)))
        for f in Audit.run(p) {
            #expect(f.amountAtRisk != nil && !f.positions.isEmpty)
            #expect(f.kind == .unconfirmedPayment || f.detail.contains(" line "), "names the statement line: \(f.detail)")
        }
    }
}
