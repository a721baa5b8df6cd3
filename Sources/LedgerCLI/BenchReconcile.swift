import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerProjection
import LedgerReport
import LedgerScenarios
import LedgerServer
import LedgerStatements

/// `ledger bench reconcile`: a month of the stores' statements for the generated benchmark log
/// (WeChat Pay daily bills, the App Store history and financial report, Google Play earnings and
/// voided purchases, with a few reconciliation faults), imported through the parser and the
/// append; then the audit (child process) and, in this process, the rules alone and the
/// reconciliation alone over the same fold. Figures are printed, nothing is asserted.
struct BenchReconcile: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract:
            "Measure statement import (lines/s) and reconciliation beside the audit on a generated log (use a release build)."
    )

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Facts in the generated log.") var events: Int = 10_000_000
    @Option(help: "Distinct users in the generated log.") var users: Int = 200_000
    @Option(help: "Generator seed.") var seed: UInt64 = 42
    @Option(help: "Days of statements, from the log's first day.") var days: Int = 30
    @Flag(help: "Drop and regenerate the benchmark log (and its statements).") var reload = false

    func run() async throws {
        try await runReportingErrors {
            var options = connection
            if options.schema == nil { options.schema = "bench_reconcile" }
            let config = try await options.configuration(as: nil)
            let admin = try await PostgresConnection.connect(config.connectionString, applicationName: "ledger-bench")
            let existing: Int64
            do {
                let note = try await BenchRebuild.requireBenchmarkSchema(config.schema, admin)
                existing =
                    (try? await admin.query("SELECT last_position FROM \(quoteIdentifier(config.schema)).log_head")
                        .int64(0, 0)) ?? 0
                // Its log grows by the statements imported: only refused when it is another one.
                if let note, !reload {
                    _ = try BenchRebuild.holdsLogAskedFor(
                        config.schema, note: note, head: existing, events: events, users: users, seed: seed,
                        ids: .short)
                }
            } catch {
                await admin.close()
                throw error
            }
            if reload || existing < Int64(events) {
                _ = try await BenchRebuild.ensureLoaded(
                    config, admin, events: events, users: users, seed: seed, ids: .short, reload: true)
            } else if existing > Int64(events) {
                Diagnostics.say(
                    "bench: the statements of an earlier run are in schema \(config.schema): this import is a re-import (--reload for a first one)"
                )
            }
            await admin.close()
            let store = try await EventStore.open(config)
            let result: String
            do { result = try await measure(store, config) } catch {
                await store.close()
                throw error
            }
            await store.close()
            print(result, terminator: "")
        }
    }

    func measure(_ store: EventStore, _ config: LedgerConfiguration) async throws -> String {
        let from = HistoryGenerator.start,
            to = Timestamp(microsecondsSince1970: from.microseconds + Int64(days) * 86_400_000_000)
        let spec = try FaultSpec.parse(
            "unrecorded-sale=0.0005,unrecorded-refund=0.0005,unconfirmed-payment=0.0005,amount-mismatch=0.0005")
        // The generated log, folded once: its statements are made from it, and the statement facts
        // are folded onto it below (consumed there, so one fold is in memory at a time).
        let generated = try await LogReplay(store).fold(through: Int64(events))
        let statements = SimulatedStatements(generated, seed: seed, faults: spec, from: from, to: to)
        let files = SimulateStatements.files(statements)
        // Parse everything first (timed), then append statement by statement (timed): the import is both.
        let t0 = ContinuousClock.now
        var parsed: [StatementFile] = []
        for f in files {
            do throws(StatementError) { parsed.append(try f.parse()) } catch {
                throw InputProblem("\(f.name): \(error)")
            }
        }
        let parseSeconds = (ContinuousClock.now - t0).seconds
        let t1 = ContinuousClock.now
        var stored = 0
        for file in parsed { stored += try await ImportStatement.append(file, to: store).stored }
        let appendSeconds = (ContinuousClock.now - t1).seconds
        let lines = parsed.reduce(0) { $0 + $1.lines.count }
        let bytes = files.reduce(0) { $0 + $1.text.utf8.count }
        // The audit as users run it (child process: fold, chain, every rule, JSON report).
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let t2 = ContinuousClock.now
        let child = try await ChildProcess.run(
            exe,
            [
                "audit", "--format", "json", "--output", "/dev/null",
                "--database-url", config.connectionString, "--schema", config.schema,
            ])
        let auditSeconds = (ContinuousClock.now - t2).seconds
        guard child.status == 0 else {
            throw ValidationError("the audit failed (exit \(child.status)): \(child.stderr)")
        }
        // The rules over one fold: all of them, then the reconciliation alone.
        let head = try await store.headPosition()
        let p = try await LogReplay(store).fold(consume generated, through: head)
        let t3 = ContinuousClock.now
        let all = Audit.run(p)
        let rulesSeconds = (ContinuousClock.now - t3).seconds
        let t4 = ContinuousClock.now
        let recon = Audit.reconciliation(p)
        let reconSeconds = (ContinuousClock.now - t4).seconds
        let expected = Set(statements.truth.map(\.key)), found = Set(recon.map(\.key))
        func rate(_ n: Int, _ s: Double) -> String { grouped(Int64(Double(n) / max(s, 1e-9))) }
        var out =
            "ledger bench reconcile: \(grouped(Int64(events))) generated facts (\(grouped(Int64(users))) users, seed \(seed)); "
        out +=
            "\(days) days of statements: \(files.count) files, \(grouped(Int64(lines))) lines, \(bytes / 1_048_576) MiB; \(stored) facts stored\n"
        out += textTable(
            ["measure", "time", "rate"],
            [
                [
                    "parse + validate the files", String(format: "%.2f s", parseSeconds),
                    "\(rate(lines, parseSeconds)) lines/s",
                ],
                [
                    "append the statement facts (one batch per file)", String(format: "%.2f s", appendSeconds),
                    "\(rate(stored, appendSeconds)) facts/s",
                ],
                [
                    "import (parse + append)", String(format: "%.2f s", parseSeconds + appendSeconds),
                    "\(rate(lines, parseSeconds + appendSeconds)) lines/s",
                ],
                [
                    "ledger audit, whole (child process: fold, chain, rules, JSON)",
                    String(format: "%.1f s", auditSeconds), "\(rate(Int(head), auditSeconds)) facts/s",
                ],
                [
                    "every audit rule over one fold (in process)", String(format: "%.3f s", rulesSeconds),
                    "\(all.count) findings",
                ],
                [
                    "reconciliation alone over the same fold", String(format: "%.3f s", reconSeconds),
                    "\(recon.count) findings",
                ],
            ])
        out +=
            "reconciliation found \(found.intersection(expected).count) of the \(expected.count) injected faults, \(found.subtracting(expected).count) others\n"
        // Whatever was not injected is named, a few per kind, so it can be explained.
        let others = recon.filter { !expected.contains($0.key) }
        for kind in FindingKind.allCases where others.contains(where: { $0.kind == kind }) {
            let ofKind = others.filter { $0.kind == kind }
            out += "  \(kind.rawValue): \(ofKind.count) not injected, e.g.\n"
            for f in ofKind.prefix(3) { out += "    \(f.transactionId ?? "-"): \(f.detail)\n" }
        }
        return out
    }
}
