import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerReport
import LedgerPostgres
import LedgerScenarios
import LedgerLog
import LedgerProjection
import LedgerBench
import LedgerServer

/// `ledger bench rebuild`: fold throughput, full rebuild time and peak memory on a large generated
/// log, each beside reading the same log with raw `COPY ... TO STDOUT` in the same run.
struct BenchRebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract:
            "Measure the pure fold, a full rebuild and its peak RSS on a generated log, beside raw COPY TO (use a release build).",
        discussion: paragraphs(
            """
            The log is generated (deterministic per --seed) and loaded once into --schema with COPY
            (bench-only loader: positions, versions and hash chain as append computes them, constraints'
            triggers off); later runs reuse it unless --reload. The rebuild runs as a child process
            (`ledger rebuild all --json --no-snapshot`), which reports its own peak RSS (VmHWM) at exit.
            """))

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var log: BenchLogOptions

    @Option(help: "Facts folded in memory for the pure fold figure.")
    var foldEvents: Int = 2_000_000

    @Option(help: "Rounds of the pure fold, each a fresh fold of the same facts; the best is the figure.")
    var foldRounds: Int = 3

    @OptionGroup var foldMemory: FoldMemoryOptions

    func validate() throws {
        guard foldEvents > 0, foldRounds > 0 else {
            throw ValidationError("--fold-events and --fold-rounds must be positive")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let (config, admin, head) = try await log.open(connection)
            let (url, schema, users, seed, ids) = (
                config.connectionString, config.schema, log.users, log.seed, log.ids
            )

            // Baseline: raw binary COPY TO of every column of the log, rows counted, nothing decoded.
            let copySeconds = try await Self.copyOut(admin, schema)
            await admin.close()

            // Pure fold: typed facts already in memory, folded (as `bench fold` does) round after
            // round, the best round the figure: one round alone moved by a third between runs of one
            // build, with whatever else the machine ran. The facts and the folds are freed before
            // the rebuild runs.
            let (folded, foldRates) = {
                let facts = BenchFold.generatedFacts(events: foldEvents, users: users, seed: seed, ids: ids)
                let rates = (0..<foldRounds).map { _ in Double(facts.count) / BenchFold.fold(facts).seconds }
                return (Int64(facts.count), rates)
            }()
            let foldRate = foldRates.max() ?? 0

            // Full rebuild in a child process.
            let r0 = ContinuousClock.now
            let (child, usage) = try await PeakMemory.runMeasured(
                ["rebuild", "all", "--json", "--no-snapshot", "--database-url", url, "--schema", schema]
                    + foldMemory.arguments)
            let rebuildWall = (ContinuousClock.now - r0).seconds
            guard child.status == 0,
                let report = try? JSONValue.parse(child.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                throw ValidationError("the rebuild failed (exit \(child.status)): \(child.stderr)")
            }
            let peak = usage.peakBytes ?? 0
            let foldMs = report["foldMilliseconds"]?.intValue ?? 0
            let writeMs = report["writeMilliseconds"]?.intValue ?? 0
            let copyRate = Double(head) / copySeconds

            print(
                "ledger bench rebuild: \(grouped(head)) facts, \(grouped(Int64(users))) users, seed \(seed), \(ids) ids, fold memory \(try foldMemory.memory)"
            )
            if let spill = report["spill"], let views = spill["views"]?.intValue, let bytes = spill["bytes"]?.intValue,
                let reads = spill["reads"]?.intValue
            {
                let spilled = SpillReport(
                    views: Int(views), bytes: bytes, reads: Int(reads), failure: spill["failure"]?.stringValue)
                print("the fold kept to its memory: \(spilled)")
            }
            print("pure fold rounds: \(foldRates.map { grouped(Int64($0)) }.joined(separator: "; ")) facts/s")
            print(
                textTable(
                    ["measure", "ledger", "raw PostgreSQL COPY TO (same run)", "ledger / COPY TO"],
                    [
                        [
                            "pure fold (\(grouped(folded)) typed facts in memory, best of \(foldRounds))",
                            "\(grouped(Int64(foldRate))) ev/s",
                            "\(grouped(Int64(copyRate))) rows/s", String(format: "%.2fx", foldRate / copyRate),
                        ],
                        [
                            "full rebuild, all read models (wall, child process)",
                            String(format: "%.1f s = %@ ev/s", rebuildWall, grouped(Int64(Double(head) / rebuildWall))),
                            String(format: "%.1f s = %@ rows/s", copySeconds, grouped(Int64(copyRate))),
                            String(format: "%.2fx the time", rebuildWall / copySeconds),
                        ],
                        [
                            "  of which read + decode + fold", String(format: "%.1f s", Double(foldMs) / 1000), "",
                            String(format: "%.2fx the time", Double(foldMs) / 1000 / copySeconds),
                        ],
                        [
                            "  of which write shadow tables + swap", String(format: "%.1f s", Double(writeMs) / 1000),
                            "", "",
                        ],
                        ["peak RSS of the rebuild (its own VmHWM)", "\(peak / 1_048_576) MiB", "", ""],
                        ["CPU time of the rebuild (its own, user + system)", cpu(usage), "", ""],
                    ]), terminator: "")
        }
    }

}

extension BenchRebuild {
    static func copyOut(_ conn: PostgresConnection, _ schema: String) async throws -> Double {
        let t0 = ContinuousClock.now
        try await conn.withIsolation { conn in
            var rows = 0
            // Binary, PostgreSQL's fastest way out (the ledger's reads use it too): no text formatting.
            try conn.copyOut(
                "COPY (SELECT position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, recorded_at, idempotency_key, hash FROM \(quoteIdentifier(schema)).events ORDER BY position) TO STDOUT (FORMAT binary)"
            ) { _ in rows += 1 }
        }
        return (ContinuousClock.now - t0).seconds
    }
}

/// `ledger bench audit`: the whole audit (fold, hash chain, rules, JSON report) of a large generated
/// log, in a child process, beside raw `COPY ... TO STDOUT` of the same rows in the same run.
struct BenchAudit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Measure `ledger audit` on a generated log (time, peak RSS) beside raw COPY TO (use a release build)."
    )

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var log: BenchLogOptions
    @OptionGroup var foldMemory: FoldMemoryOptions

    func run() async throws {
        try await runReportingErrors {
            let (config, admin, head) = try await log.open(connection)
            let (users, seed, ids) = (log.users, log.seed, log.ids)
            let copySeconds = try await BenchRebuild.copyOut(admin, config.schema)
            await admin.close()
            let t0 = ContinuousClock.now
            let (child, usage) = try await PeakMemory.runMeasured(
                [
                    "audit", "--format", "json", "--output", "/dev/null",
                    "--database-url", config.connectionString, "--schema", config.schema,
                ]
                    + foldMemory.arguments)
            let seconds = (ContinuousClock.now - t0).seconds
            guard child.status == 0 else {
                throw ValidationError("the audit failed (exit \(child.status)): \(child.stderr)")
            }
            print(
                "ledger bench audit: \(grouped(head)) facts, \(grouped(Int64(users))) users, seed \(seed), \(ids) ids, fold memory \(try foldMemory.memory)"
            )
            for line in child.stderr.split(separator: "\n") where line.hasPrefix("audit: ") && line.contains("spilled")
            {
                print("the fold kept to its memory: \(line.dropFirst("audit: ".count))")
            }
            print(
                textTable(
                    ["measure", "ledger", "raw PostgreSQL COPY TO (same run)", "ledger / COPY TO"],
                    [
                        [
                            "audit (fold + hash chain + rules + JSON report, child process)",
                            String(format: "%.1f s = %@ ev/s", seconds, grouped(Int64(Double(head) / seconds))),
                            String(
                                format: "%.1f s = %@ rows/s", copySeconds, grouped(Int64(Double(head) / copySeconds))),
                            String(format: "%.2fx the time", seconds / copySeconds),
                        ],
                        ["peak RSS of the audit (its own VmHWM)", "\((usage.peakBytes ?? 0) / 1_048_576) MiB", "", ""],
                        ["CPU time of the audit (its own, user + system)", cpu(usage), "", ""],
                    ]), terminator: "")
        }
    }
}

/// `ledger bench project`: how long a projector takes to start on a large generated log, folding
/// the log from the first event and starting from a snapshot, beside raw COPY TO in the same run.
struct BenchProject: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "project",
        abstract:
            "Measure a projector's start on a generated log: from the first event, and from a snapshot (use a release build).",
        discussion: paragraphs(
            """
            Uses the log of `ledger bench rebuild` (the same --schema, generated if missing) and brings its read
            models to the head first if they are behind. Each start is a child process (`ledger project`), with
            its own peak RSS: folding the log (no snapshot), folding it and writing a snapshot, then starting from
            that snapshot.
            """))

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var log: BenchLogOptions
    @OptionGroup var foldMemory: FoldMemoryOptions

    func run() async throws {
        try await runReportingErrors {
            let (config, admin, head) = try await log.open(connection)
            let (url, schema, users, seed) = (config.connectionString, config.schema, log.users, log.seed)
            let s = quoteIdentifier(schema)
            let low =
                try await admin.query("SELECT coalesce(min(position), 0) FROM \(s).projection_checkpoints").int64(0, 0)
                ?? 0
            if low < head {
                Diagnostics.say("bench: bringing the read models to the head first (ledger rebuild all)")
                let (rebuilt, _) = try await PeakMemory.runMeasured([
                    "rebuild", "all", "--database-url", url, "--schema", schema,
                ])
                guard rebuilt.status == 0 else {
                    throw ValidationError("the rebuild failed (exit \(rebuilt.status)): \(rebuilt.stderr)")
                }
            }
            let copySeconds = try await BenchRebuild.copyOut(admin, schema)

            func start(_ snapshotEvery: Int64) async throws -> (seconds: Double, peak: Int64, stderr: String) {
                let t0 = ContinuousClock.now
                let (child, usage) = try await PeakMemory.runMeasured(
                    ["project", "--snapshot-every", "\(snapshotEvery)", "--database-url", url, "--schema", schema]
                        + foldMemory.arguments)
                guard child.status == 0 else {
                    throw ValidationError("the projector failed (exit \(child.status)): \(child.stderr)")
                }
                return ((ContinuousClock.now - t0).seconds, usage.peakBytes ?? 0, child.stderr)
            }
            try await admin.execute("DELETE FROM \(s).projector_snapshots")
            let scratch = try await start(0)
            let writing = try await start(1)
            let size =
                try await admin.query("SELECT coalesce(sum(length(bytes)), 0) FROM \(s).projector_snapshots").int64(
                    0, 0) ?? 0
            let resumed = try await start(1_000_000)
            await admin.close()
            guard resumed.stderr.contains("started from the snapshot") else {
                throw ValidationError("the projector did not start from the snapshot: \(resumed.stderr)")
            }
            let copy = String(format: "%.1f s = %@ rows/s", copySeconds, grouped(Int64(Double(head) / copySeconds)))
            func row(_ what: String, _ r: (seconds: Double, peak: Int64, stderr: String)) -> [String] {
                [
                    what, String(format: "%.1f s, peak RSS %@ MiB", r.seconds, grouped(r.peak / 1_048_576)), copy,
                    String(format: "%.2fx the time", r.seconds / copySeconds),
                ]
            }
            print(
                "ledger bench project: \(grouped(head)) facts, \(grouped(Int64(users))) users, seed \(seed), \(log.ids) ids, fold memory \(try foldMemory.memory)"
            )
            print(
                textTable(
                    ["measure", "ledger (child process)", "raw PostgreSQL COPY TO (same run)", "ledger / COPY TO"],
                    [
                        row("projector start, folding the log from the first event", scratch),
                        row("  the same, then writing a snapshot", writing),
                        row("projector start from the snapshot", resumed),
                        [
                            "snapshot size", "\(grouped(size / 1_048_576)) MiB (\(size / max(head, 1)) bytes/fact)", "",
                            "",
                        ],
                    ]), terminator: "")
        }
    }
}

/// A child's CPU time for a benchmark's table: seconds, or "-" when it did not say.
private func cpu(_ usage: PeakMemory.Usage) -> String {
    usage.cpuSeconds.map { String(format: "%.1f s", $0) } ?? "-"
}
