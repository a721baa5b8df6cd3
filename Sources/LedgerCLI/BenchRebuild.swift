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

    @OptionGroup var foldMemory: FoldMemoryOptions

    func run() async throws {
        try await runReportingErrors {
            let (config, admin, head) = try await log.open(connection)
            let (url, schema, users, seed, ids) = (
                config.connectionString, config.schema, log.users, log.seed, log.ids
            )

            // Baseline: raw binary COPY TO of every column of the log, rows counted, nothing decoded.
            let copySeconds = try await Self.copyOut(admin, schema)
            await admin.close()

            // Pure fold: typed facts already in memory, folded (as `bench fold` does); the facts and
            // the fold freed before the rebuild runs.
            let (folded, foldRate) = {
                let facts = BenchFold.generatedFacts(events: foldEvents, users: users, seed: seed, ids: ids)
                let (fold, seconds) = BenchFold.fold(facts)
                return (fold.position, Double(facts.count) / seconds)
            }()

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
            print(
                textTable(
                    ["measure", "ledger", "raw PostgreSQL COPY TO (same run)", "ledger / COPY TO"],
                    [
                        [
                            "pure fold (\(grouped(folded)) typed facts in memory)",
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

/// The generated log the projection benchmarks run on (schema `bench_rebuild` unless given).
struct BenchLogOptions: ParsableArguments {
    @Option(help: "Facts in the generated log.") var events: Int = 10_000_000
    @Option(help: "Distinct users in the generated log.") var users: Int = 200_000
    @Option(help: "Generator seed.") var seed: UInt64 = 42
    @Option(help: idsHelp) var ids: IdShape = .short
    @Flag(
        help:
            "Drop the schema's benchmark log and load the one asked for, even when it is that one already. Without it, a log other than the one asked for is kept and the run refused."
    ) var reload = false

    /// The log's configuration, an owner connection and the log's head, after generating and
    /// loading the log if it is not there.
    func open(_ connection: ConnectionOptions) async throws -> (LedgerConfiguration, PostgresConnection, Int64) {
        var options = connection
        if options.schema == nil { options.schema = "bench_rebuild" }
        let config = try await options.configuration(as: nil)
        let admin = try await PostgresConnection.connect(config.connectionString, applicationName: "ledger-bench")
        do {
            return (
                config, admin,
                try await BenchRebuild.ensureLoaded(
                    config, admin, events: events, users: users, seed: seed, ids: ids, reload: reload)
            )
        } catch {
            await admin.close()
            throw error
        }
    }
}

extension BenchRebuild {
    /// The comment on a schema a benchmark made: the only kind of schema a benchmark works in.
    static let benchmarkSchemaNote = "ledger benchmark log: generated, dropped and regenerated by ledger bench"

    /// The note of a benchmark log loaded to the end: what it was generated from.
    static func benchmarkSchemaNote(events: Int, users: Int, seed: UInt64, ids: IdShape) -> String {
        "\(benchmarkSchemaNote); events \(events), users \(users), seed \(seed)" + (ids == .short ? "" : ", ids \(ids)")
    }

    /// The note on `schema` (nil when there is no such schema); refuses a schema a benchmark did
    /// not make. A benchmark rebuilds read models, deletes snapshots, imports statements and may
    /// drop the schema: it works only in a schema a benchmark made, never in one holding a ledger
    /// (`--schema` naming it).
    @discardableResult
    static func requireBenchmarkSchema(_ schema: String, _ admin: PostgresConnection) async throws -> String? {
        guard try await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [.text(schema)]).count > 0 else {
            return nil
        }
        let note = try await admin.query(
            "SELECT obj_description($1::regnamespace, 'pg_namespace')", [.text(quoteIdentifier(schema))]
        ).string(0, 0)
        guard let note, note.hasPrefix(benchmarkSchemaNote) else {
            throw ValidationError(
                "schema \(schema) exists and was not made by `ledger bench`; a benchmark works only in a schema "
                    + "it made (it rebuilds, deletes and drops there): name another --schema")
        }
        return note
    }

    /// Refuses to drop, without `--reload`, a loaded benchmark log other than the one asked for: it
    /// took minutes to generate, and another run may want it again. A schema whose load did not
    /// finish (its note names no size) is dropped and loaded again.
    static func refuseReplacing(
        _ schema: String, note: String, events: Int, users: Int, seed: UInt64, ids: IdShape, head: Int64
    ) throws {
        let asked = benchmarkSchemaNote(events: events, users: users, seed: seed, ids: ids)
        guard note != asked, note != benchmarkSchemaNote, head > 0 else { return }
        let holds = note.dropFirst(benchmarkSchemaNote.count + 2)
        throw ValidationError(
            "schema \(schema) holds another benchmark log (\(holds); head \(grouped(head))), not the one asked for "
                + "(\(asked.dropFirst(benchmarkSchemaNote.count + 2))); it is kept: name another --schema, or "
                + "add --reload to drop it and load this one")
    }

    /// Generates and bulk-loads the benchmark log unless the one asked for is there (the same
    /// size, users and seed). Another one is dropped only with `reload`.
    static func ensureLoaded(
        _ config: LedgerConfiguration, _ admin: PostgresConnection, events: Int, users: Int, seed: UInt64,
        ids: IdShape, reload: Bool
    ) async throws -> Int64 {
        let schema = config.schema
        let s = quoteIdentifier(schema)
        let note = try await requireBenchmarkSchema(schema, admin)
        var head: Int64 = 0
        if let note, !reload {
            head = (try? await admin.query("SELECT last_position FROM \(s).log_head").int64(0, 0)) ?? 0
            try refuseReplacing(schema, note: note, events: events, users: users, seed: seed, ids: ids, head: head)
            // A log loaded by an older build names no size: kept when its size is the one asked for.
            if note != benchmarkSchemaNote(events: events, users: users, seed: seed, ids: ids) && head != Int64(events)
            {
                head = 0
            }
        }
        if head != Int64(events) {
            Diagnostics.say(
                "bench: generating and loading \(grouped(Int64(events))) facts for \(grouped(Int64(users))) users into schema \(schema)"
            )
            try await admin.execute("DROP SCHEMA IF EXISTS \(s) CASCADE")
            _ = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
            try await admin.execute("COMMENT ON SCHEMA \(s) IS '\(benchmarkSchemaNote)'")
            let store = try await EventStore.open(config)
            let t0 = ContinuousClock.now
            let bar = ProgressBar("load")
            let total = Int64(events)
            let gen = GeneratedEvents(count: events, users: users, seed: seed, ids: ids)
            head = try await store.bulkLoadForBenchmark(gen) { bar.update($0, total) }
            bar.finish()
            Diagnostics.say(
                "bench: loaded \(grouped(head)) facts in \(String(format: "%.1f", (ContinuousClock.now - t0).seconds)) s"
            )
            await store.close()
            // Loaded to the end: the note says what the log is.
            try await admin.execute(
                "COMMENT ON SCHEMA \(s) IS '\(benchmarkSchemaNote(events: events, users: users, seed: seed, ids: ids))'"
            )
        } else {
            Diagnostics.say("bench: reusing the \(grouped(head))-fact log in schema \(schema) (--reload to regenerate)")
            // A log loaded by an older build gets the migrations it lacks.
            _ = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
        }
        try await admin.execute("VACUUM ANALYZE \(quoteIdentifier(schema)).events")
        return head
    }

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
                "ledger bench project: \(grouped(head)) facts, \(grouped(Int64(users))) users, seed \(seed), fold memory \(try foldMemory.memory)"
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
