import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerScenarios
import LedgerStatements

/// `ledger simulate --statements DIR`: the stores' files for the simulated history, written in the
/// stores' formats, then parsed back and imported exactly as `ledger import statement` does.
enum SimulateStatements {
    static func files(_ s: SimulatedStatements) -> [StatementFileText] {
        StatementWriter.files(
            wechatDays: s.wechatDays, appstore: s.lines[.appstore] ?? [], googleplay: s.lines[.googleplay] ?? [],
            from: s.from, to: s.to, bundleId: SimulatedStatements.bundleId,
            packageName: SimulatedStatements.packageName,
            wechatAppId: SimulatedStatements.wechatAppId, wechatMerchant: SimulatedStatements.wechatMerchant)
    }

    /// Writes the files into `folder`, imports each (one batch per statement) and returns the
    /// reconciliation ground truth and the lines imported.
    static func run(
        _ sim: Simulator, folder: String, store: EventStore
    ) async throws -> (truth: [ExpectedFinding], lines: Int, files: Int) {
        let statements = SimulatedStatements(sim)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lines = 0
        let all = files(statements)
        for f in all {
            try writeOutput(f.text, to: (folder as NSString).appendingPathComponent(f.name))
            let parsed: StatementFile
            do throws(StatementError) { parsed = try f.parse() } catch {
                throw InputProblem("the simulated \(f.name) does not parse back: \(error)")
            }
            _ = try await ImportStatement.append(parsed, to: store)
            lines += parsed.lines.count
        }
        // A bill downloaded twice lands under another name: the same bytes are the same statement,
        // imported again, with nothing new stored.
        if let bill = all.first(where: { $0.source == .wechatTradeBill }) {
            let copy = (folder as NSString).appendingPathComponent(
                (bill.name as NSString).deletingPathExtension + " (1).csv")
            try writeOutput(bill.text, to: copy)
            let again = try await ImportStatement.append(try bill.parse(), to: store)
            guard again.stored == 0 else {
                throw Defect(
                    "the same bill imported again under another name stored \(again.stored) new facts, "
                        + "where a statement is its bytes alone: a defect of the ledger, please report it (exit 70)")
            }
        }
        let byKind = Dictionary(grouping: statements.truth, by: \.kind).mapValues(\.count)
        Diagnostics.say(
            "ledger: wrote and imported \(all.count) statement files (\(grouped(Int64(lines))) lines) in \(folder)"
                + (byKind.isEmpty
                    ? ""
                    : "; injected "
                        + byKind.keys.sorted().map { "\($0.rawValue) \(byKind[$0]!)" }.joined(separator: ", ")))
        return (statements.truth, lines, all.count)
    }
}

/// What cannot happen unless the ledger itself is wrong: exit 70 (an internal error).
private struct Defect: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
