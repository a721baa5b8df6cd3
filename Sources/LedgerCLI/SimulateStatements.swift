import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerScenarios
import LedgerStatements

/// `ledger simulate --statements DIR`: the stores' files for the simulated history, written in the
/// stores' formats, then parsed back and imported exactly as `ledger import statement` does.
enum SimulateStatements {
    struct File {
        var name: String
        var source: StatementSource
        var text: String
        var from: Timestamp?
        var to: Timestamp?
    }

    static func files(_ s: SimulatedStatements) -> [File] {
        var out: [File] = []
        for (day, lines) in s.wechatDays {
            let date = Timestamp(microsecondsSince1970: day.microseconds + 8 * 3_600_000_000).iso8601.prefix(10)
            out.append(File(name: "wechat-tradebill-\(date).csv", source: .wechatTradeBill,
                            text: StatementWriter.wechatBill(lines, refundBill: false, appId: SimulatedStatements.wechatAppId,
                                                             merchantId: SimulatedStatements.wechatMerchant),
                            from: day, to: Timestamp(microsecondsSince1970: day.microseconds + 86_400_000_000)))
        }
        let apple = s.lines[.appstore] ?? [], google = s.lines[.googleplay] ?? []
        out.append(File(name: "appstore-history.json", source: .appstoreHistory,
                        text: StatementWriter.appstoreHistory(apple, bundleId: SimulatedStatements.bundleId, from: s.from, to: s.to)))
        out.append(File(name: "appstore-finance.tsv", source: .appstoreFinance, text: StatementWriter.appstoreFinance(apple, from: s.from, to: s.to)))
        out.append(File(name: "googleplay-earnings.csv", source: .googleplayEarnings,
                        text: StatementWriter.googleplayEarnings(google, packageName: SimulatedStatements.packageName), from: s.from, to: s.to))
        out.append(File(name: "googleplay-voided.json", source: .googleplayVoided, text: StatementWriter.googleplayVoided(google),
                        from: s.from, to: s.to))
        return out
    }

    /// Writes the files into `folder`, imports each (one batch per statement) and returns the
    /// reconciliation ground truth and the lines imported.
    static func run(_ sim: Simulator, folder: String, store: EventStore) async throws -> (truth: [ExpectedFinding], lines: Int, files: Int) {
        let statements = SimulatedStatements(sim)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lines = 0
        let all = files(statements)
        for f in all {
            let path = (folder as NSString).appendingPathComponent(f.name)
            try writeOutput(f.text, to: path)
            let parsed: StatementFile
            do throws(StatementError) {
                parsed = try StatementParser.parse(Array(f.text.utf8), source: f.source,
                                                   options: StatementOptions(fileName: f.name, periodStart: f.from, periodEnd: f.to))
            } catch {
                throw InputProblem("the simulated \(f.name) does not parse back: \(error)")
            }
            _ = try await ImportStatement.append(parsed, to: store)
            lines += parsed.lines.count
        }
        let byKind = Dictionary(grouping: statements.truth, by: \.kind).mapValues(\.count)
        Diagnostics.say("ledger: wrote and imported \(all.count) statement files (\(grouped(Int64(lines))) lines) in \(folder)"
            + (byKind.isEmpty ? "" : "; injected " + byKind.keys.sorted().map { "\($0.rawValue) \(byKind[$0]!)" }.joined(separator: ", ")))
        return (statements.truth, lines, all.count)
    }
}
