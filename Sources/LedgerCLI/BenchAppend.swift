import ArgumentParser
import Foundation
import LedgerCore
import LedgerPostgres
import LedgerBench
import LedgerLog
import LedgerProjection

/// `ledger bench append`: append throughput and latency beside a raw PostgreSQL baseline measured
/// in the same run on the same row shape (plain INSERT / COPY into a table with no constraints).
struct BenchAppend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract: "Measure appends against raw INSERT and COPY baselines (prints a table; use a release build).")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Seconds per scenario and side.")
    var seconds: Double = 5

    @Option(help: "Concurrent clients for the concurrent scenarios.")
    var clients: Int = 16

    @Option(
        help: ArgumentHelp(
            "Measure the cost of a guarantee by removing it from the benchmark's own schema: position-fk, version-fk, head-check, chain-check, claim-check (repeatable).",
            valueName: "guarantee"))
    var without: [Guarantee] = []

    @Option(
        help: ArgumentHelp(
            "Run only these scenarios (repeatable): one (a), shared (b), stores (b'), stores-at-commit (b''), stores-sealer (b'''), one-sealer (a''), batches (c). Default: all.",
            valueName: "scenario"))
    var only: [Scenario] = []

    enum Scenario: String, ExpressibleByArgument, CaseIterable {
        case one
        case shared
        case stores
        case storesAtCommit = "stores-at-commit"
        case storesSealer = "stores-sealer"
        case oneSealer = "one-sealer"
        case batches
    }

    func wants(_ scenario: Scenario) -> Bool { only.isEmpty || only.contains(scenario) }

    enum Guarantee: String, ExpressibleByArgument, CaseIterable {
        case positionFK = "position-fk"
        case versionFK = "version-fk"
        case headCheck = "head-check"
        /// The head trigger's re-hash of every new row (it still checks positions and time).
        case chainCheck = "chain-check"
        /// The deferred check at commit that each claim has its event (or, pending, its writer's id).
        case claimCheck = "claim-check"

        var sql: String {
            switch self {
            case .positionFK: return "ALTER TABLE events DROP CONSTRAINT events_gapless_position"
            case .versionFK: return "ALTER TABLE events DROP CONSTRAINT events_contiguous_version"
            case .headCheck: return "DROP TRIGGER log_head_advance ON log_head"
            case .claimCheck: return "DROP TRIGGER event_claims_have_events ON event_claims"
            case .chainCheck:
                return """
                    DO $$
                    DECLARE
                        def text := pg_get_functiondef('advance_head'::regproc);
                        cut text := regexp_replace(def, 'SELECT c\\.position INTO broken.*?ORDER BY c\\.position LIMIT 1;', 'broken := NULL;');
                    BEGIN
                        IF cut = def THEN
                            RAISE EXCEPTION 'bench: the chain check of advance_head() was not found; nothing removed';
                        END IF;
                        EXECUTE cut;
                    END
                    $$
                    """
            }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let url = try await connection.resolveURL()
            let tag = String(UUID().uuidString.prefix(8)).lowercased()
            let schema = "bench_\(tag)"
            let config = LedgerConfiguration(
                connectionString: url, schema: schema, validation: EventValidation(allowUnknownTypes: true),
                readConnections: 2)
            _ = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
            let admin = try await PostgresConnection.connect(url, applicationName: "ledger-bench")
            for g in without {
                try await admin.execute("SET search_path TO \(quoteIdentifier(schema)); \(g.sql); RESET search_path")
            }
            let raw = "\(quoteIdentifier(schema)).raw_events"
            try await admin.execute(
                """
                CREATE TABLE \(raw) (position bigint, event_id uuid, stream_id text, stream_version bigint, event_type text,
                  schema_version integer, payload jsonb, metadata jsonb, occurred_at timestamptz, recorded_at timestamptz,
                  idempotency_key text, hash bytea)
                """)
            let server = try await admin.query("SHOW server_version").string(0, 0) ?? "?"
            let fsync = try await admin.query("SHOW synchronous_commit").string(0, 0) ?? "?"
            Diagnostics.say(
                "ledger bench: PostgreSQL \(server), synchronous_commit=\(fsync), \(seconds) s per measurement, schema \(schema)"
                    + (without.isEmpty ? "" : ", WITHOUT \(without.map(\.rawValue).joined(separator: ", "))"))

            let duration = Duration.milliseconds(Int64(seconds * 1000))
            var rows: [Row] = []
            func report(
                _ name: String, _ ledger: AppendWorkload.Measurement, _ baseline: AppendWorkload.Measurement,
                _ baselineName: String
            ) {
                let row = Row(name: name, ledger: ledger, baseline: baseline, baselineName: baselineName)
                rows.append(row)
                Diagnostics.say("  \(row.line)")
            }

            // The raw baselines, each measured once, when a scenario needs it.
            var rawOne: AppendWorkload.Measurement?
            var rawMany: AppendWorkload.Measurement?
            func rawA() async throws -> AppendWorkload.Measurement {
                if let m = rawOne { return m }
                let m = try await AppendWorkload.rawInserts(url: url, table: raw, clients: 1, duration: duration)
                rawOne = m
                return m
            }
            func rawB() async throws -> AppendWorkload.Measurement {
                if let m = rawMany { return m }
                let m = try await AppendWorkload.rawInserts(url: url, table: raw, clients: clients, duration: duration)
                rawMany = m
                return m
            }
            let store = try await EventStore.open(config)
            var counter = AppendWorkload.Counter()

            // (a) one event per transaction, one client.
            if wants(.one) {
                let rawA = try await rawA()
                let ledA = try await AppendWorkload.ledgerAppends(
                    stores: [store], clients: 1, batch: 1, duration: duration, counter: &counter)
                report("(a) 1 event/tx, 1 client", ledA, rawA, "INSERT")
            }

            // (b) one event per transaction, N clients sharing one store (group commit).
            if wants(.shared) {
                let rawB = try await rawB()
                let ledB = try await AppendWorkload.ledgerAppends(
                    stores: [store], clients: clients, batch: 1, duration: duration, counter: &counter)
                report("(b) 1 event/tx, \(clients) clients, 1 store", ledB, rawB, "INSERT")
            }

            // (b') N clients, each with its own store (its own writer connection, as N processes would),
            // and (b'') the same, each append answered at its commit (its position later, when sealed).
            if wants(.stores) || wants(.storesAtCommit) {
                let rawB = try await rawB()
                var own: [EventStore] = []
                for _ in 0..<clients { own.append(try await EventStore.open(config)) }
                if wants(.stores) {
                    let ledB2 = try await AppendWorkload.ledgerAppends(
                        stores: own, clients: clients, batch: 1, duration: duration, counter: &counter)
                    report("(b') 1 event/tx, \(clients) clients, \(clients) stores", ledB2, rawB, "INSERT")
                }
                if wants(.storesAtCommit) {
                    let ledB3 = try await AppendWorkload.ledgerAppends(
                        stores: own, clients: clients, batch: 1, duration: duration, atCommit: true,
                        counter: &counter)
                    report(
                        "(b'') 1 event/tx, \(clients) clients, \(clients) stores, answered at commit", ledB3, rawB,
                        "INSERT")
                }
                for s in own { await s.close() }
            }

            // (b''') the same with a sealer: the appends never take the append lock; one of the
            // stores, elected, seals what they leave (Sealing.sealer). (a'') one client so.
            if wants(.storesSealer) || wants(.oneSealer) {
                var sealerConfig = config
                sealerConfig.sealing = .sealer
                var sealed: [EventStore] = []
                for _ in 0..<(wants(.storesSealer) ? clients : 1) {
                    sealed.append(try await EventStore.open(sealerConfig))
                }
                if wants(.storesSealer) {
                    let rawB = try await rawB()
                    let ledB4 = try await AppendWorkload.ledgerAppends(
                        stores: sealed, clients: clients, batch: 1, duration: duration, atCommit: true,
                        counter: &counter)
                    report(
                        "(b''') 1 event/tx, \(clients) clients, \(clients) stores, answered at commit, a sealer", ledB4,
                        rawB, "INSERT")
                }
                if wants(.oneSealer) {
                    let rawA = try await rawA()
                    // The first store opened, elected unless another process's sealer was first.
                    let ledA2 = try await AppendWorkload.ledgerAppends(
                        stores: [sealed[0]], clients: 1, batch: 1, duration: duration, atCommit: true,
                        counter: &counter)
                    report("(a'') 1 event/tx, 1 client, answered at commit, a sealer", ledA2, rawA, "INSERT")
                }
                for s in sealed { await s.close() }
            }

            // (c) batches, one client.
            if wants(.batches) {
                for size in [100, 1000] {
                    let rawC = try await AppendWorkload.rawCopies(url: url, table: raw, batch: size, duration: duration)
                    let ledC = try await AppendWorkload.ledgerAppends(
                        stores: [store], clients: 1, batch: size, duration: duration, counter: &counter)
                    report("(c) batches of \(size), 1 client", ledC, rawC, "COPY")
                }
            }
            await store.close()

            let lines = try await Self.readBack(config, admin: admin)
            print("")
            print(
                "| scenario | ledger events/s | baseline events/s | ratio | ledger p50 / p99 ms | baseline p50 / p99 ms |"
            )
            print("|---|---:|---:|---:|---:|---:|")
            for r in rows { print(r.markdown) }
            print("")
            for line in lines { print(line) }
            try await admin.execute("DROP SCHEMA \(quoteIdentifier(schema)) CASCADE")
            await admin.close()
        }
    }

    /// Reads the whole log back: the ledger's streamed scan (decoding every event) beside raw
    /// COPY TO of the same rows (bytes counted, nothing decoded), then verifies the chain.
    static func readBack(_ config: LedgerConfiguration, admin: PostgresConnection) async throws -> [String] {
        let schema = config.schema
        let reader = try await EventStore.open(config)
        let scanStart = ContinuousClock.now
        let scanned = try await reader.scan { _ in true }
        let scanSeconds = (ContinuousClock.now - scanStart).seconds
        await reader.close()
        let copyStart = ContinuousClock.now
        let copied: Int64 = try await admin.withIsolation { conn in
            var rows: Int64 = 0
            try conn.copyOut("COPY (SELECT * FROM \(quoteIdentifier(schema)).events ORDER BY position) TO STDOUT") {
                _ in rows += 1
            }
            return rows
        }
        let copySeconds = (ContinuousClock.now - copyStart).seconds

        let verify = try await EventStore.open(config)
        let start = ContinuousClock.now
        let chain = try await verify.verifyChain()
        let verifySeconds = (ContinuousClock.now - start).seconds
        // Appends answered at their commit leave nothing pending once their stores are closed.
        let pending = try await verify.pendingCount()
        await verify.close()

        return [
            "read the log: ledger scan \(scanned) events in \(String(format: "%.2f", scanSeconds)) s (\(Int(Double(scanned) / max(scanSeconds, 0.001))) events/s); raw COPY TO \(copied) rows in \(String(format: "%.2f", copySeconds)) s (\(Int(Double(copied) / max(copySeconds, 0.001))) rows/s); ratio \(String(format: "%.0f", copySeconds / max(scanSeconds, 0.001) * 100)) %",
            "verify-chain: \(chain.verified) events in \(String(format: "%.2f", verifySeconds)) s (\(Int(Double(chain.verified) / max(verifySeconds, 0.001))) events/s), intact: \(chain.isIntact), left pending: \(pending)",
        ]
    }

    struct Row {
        var name: String
        var ledger: AppendWorkload.Measurement
        var baseline: AppendWorkload.Measurement
        var baselineName: String
        var ratio: Double { ledger.perSecond / baseline.perSecond }
        var line: String {
            "\(name): ledger \(Int(ledger.perSecond)) ev/s (p50 \(f(ledger.percentile(0.5))) ms, p99 \(f(ledger.percentile(0.99))) ms); raw \(baselineName) \(Int(baseline.perSecond)) ev/s; ratio \(String(format: "%.0f", ratio * 100)) %"
        }
        var markdown: String {
            "| \(name) | \(Int(ledger.perSecond)) | \(Int(baseline.perSecond)) (\(baselineName)) | \(String(format: "%.0f", ratio * 100)) % | \(f(ledger.percentile(0.5))) / \(f(ledger.percentile(0.99))) | \(f(baseline.percentile(0.5))) / \(f(baseline.percentile(0.99))) |"
        }
        func f(_ v: Double) -> String { String(format: "%.2f", v) }
    }
}
