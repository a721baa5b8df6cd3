import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerReport
import LedgerLog
import LedgerProjection

extension RevenueBucket: ExpressibleByArgument {}

struct RevenueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revenue",
        abstract:
            "Gross, refunds, net, fees and counts per currency and channel, the ledger beside the stores' statements.",
        discussion: paragraphs(
            """
            Replays the log as of the head, --to-position or --as-of. Per period (--by day or month, UTC) and per
            channel and currency, never summed across currencies: the ledger's verified payments (gross, at the
            purchase date) and standing refunds (at the store's refund date), and beside them the imported
            statements' sales, refunds and fees; "ties" says whether they agree. Sandbox and family-shared
            purchases are excluded. The same log and options give a byte-identical report.
            """))

    typealias Format = ReportFormat

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var replay: ReplayOptions

    @Option(help: "Count only money moved at or after this time (RFC 3339).")
    var from: String?

    @Option(help: "Count only money moved before this time (RFC 3339).")
    var to: String?

    @Option(help: "day or month.")
    var by: RevenueBucket = .day

    @Option(help: "table, json, csv or html.")
    var format: Format = .table

    @Flag(help: "With --format csv: begin with a UTF-8 byte order mark, for spreadsheets that otherwise misread UTF-8.")
    var bom = false

    @Option(name: [.short, .customLong("output")], help: "Write the report to this file instead of stdout.")
    var output: String?

    func validate() throws {
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, Timestamp(value) == nil {
                throw ValidationError("\(name) '\(value)' is not an RFC 3339 time such as 2026-03-01T00:00:00Z")
            }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            let report: RevenueReport
            do {
                // A position beyond the head (or not replayed yet on a standby) is refused, as by audit.
                let target = try await store.checkReached(try await replay.through(store))
                let bar = ProgressBar("revenue")
                let fold = try await LogReplay(store).fold(through: target, progress: bar.update)
                bar.finish()
                let rows = Revenue.compute(
                    fold, by: by, from: from.flatMap(Timestamp.init), to: to.flatMap(Timestamp.init))
                report = RevenueReport(position: target, bucket: by, from: from, to: to, rows: rows)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            try emit(report, as: format, to: output, what: "revenue report", bom: bom)
            let untied = report.rows.filter { !$0.ties && ($0.statements.sales > 0 || $0.statements.refunds > 0) }.count
            Diagnostics.say(
                "ledger: revenue as of position \(report.position): \(report.rows.count) rows, \(untied) rows with statements that do not tie"
            )
        }
    }
}
