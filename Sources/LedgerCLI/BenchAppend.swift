import ArgumentParser
import Foundation
import LedgerCore
import LedgerPostgres
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

    @Option(help: ArgumentHelp(
        "Measure the cost of a guarantee by removing it from the benchmark's own schema: position-fk, version-fk, head-check (repeatable).",
        valueName: "guarantee"))
    var without: [Guarantee] = []

    enum Guarantee: String, ExpressibleByArgument, CaseIterable {
        case positionFK = "position-fk"
        case versionFK = "version-fk"
        case headCheck = "head-check"

        var sql: String {
            switch self {
            case .positionFK: return "ALTER TABLE events DROP CONSTRAINT events_gapless_position"
            case .versionFK: return "ALTER TABLE events DROP CONSTRAINT events_contiguous_version"
            case .headCheck: return "DROP TRIGGER log_head_advance ON log_head"
            }
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let url = try await connection.resolveURL()
            let tag = String(UUID().uuidString.prefix(8)).lowercased()
            let schema = "bench_\(tag)"
            let config = LedgerConfiguration(connectionString: url, schema: schema, validation: EventValidation(allowUnknownTypes: true),
                                             readConnections: 2)
            _ = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
            let admin = try await PostgresConnection.connect(url, applicationName: "ledger-bench")
            for g in without {
                try await admin.execute("SET search_path TO \(quoteIdentifier(schema)); \(g.sql); RESET search_path")
            }
            let raw = "\(quoteIdentifier(schema)).raw_events"
            try await admin.execute("""
                CREATE TABLE \(raw) (position bigint, event_id uuid, stream_id text, stream_version bigint, event_type text,
                  schema_version integer, payload jsonb, metadata jsonb, occurred_at timestamptz, recorded_at timestamptz,
                  idempotency_key text, hash bytea)
                """)
            let server = try await admin.query("SHOW server_version").string(0, 0) ?? "?"
            let fsync = try await admin.query("SHOW synchronous_commit").string(0, 0) ?? "?"
            Diagnostics.say("ledger bench: PostgreSQL \(server), synchronous_commit=\(fsync), \(seconds) s per measurement, schema \(schema)"
                + (without.isEmpty ? "" : ", WITHOUT \(without.map(\.rawValue).joined(separator: ", "))"))

            let duration = Duration.milliseconds(Int64(seconds * 1000))
            var rows: [Row] = []
            func report(_ name: String, _ ledger: Measurement, _ baseline: Measurement, _ baselineName: String) {
                let row = Row(name: name, ledger: ledger, baseline: baseline, baselineName: baselineName)
                rows.append(row)
                Diagnostics.say("  \(row.line)")
            }

            // (a) one event per transaction, one client.
            let store = try await EventStore.open(config)
            var counter = Counter()
            let rawA = try await Self.rawInserts(url: url, table: raw, clients: 1, duration: duration)
            let ledA = try await Self.ledgerAppends(stores: [store], clients: 1, batch: 1, duration: duration, counter: &counter)
            report("(a) 1 event/tx, 1 client", ledA, rawA, "INSERT")

            // (b) one event per transaction, N clients sharing one store (group commit).
            let rawB = try await Self.rawInserts(url: url, table: raw, clients: clients, duration: duration)
            let ledB = try await Self.ledgerAppends(stores: [store], clients: clients, batch: 1, duration: duration, counter: &counter)
            report("(b) 1 event/tx, \(clients) clients, 1 store", ledB, rawB, "INSERT")

            // (b') N clients, each with its own store (its own writer connection, as N processes would).
            var own: [EventStore] = []
            for _ in 0..<clients { own.append(try await EventStore.open(config)) }
            let ledB2 = try await Self.ledgerAppends(stores: own, clients: clients, batch: 1, duration: duration, counter: &counter)
            for s in own { await s.close() }
            report("(b') 1 event/tx, \(clients) clients, \(clients) stores", ledB2, rawB, "INSERT")

            // (c) batches, one client.
            for size in [100, 1000] {
                let rawC = try await Self.rawCopies(url: url, table: raw, batch: size, duration: duration)
                let ledC = try await Self.ledgerAppends(stores: [store], clients: 1, batch: size, duration: duration, counter: &counter)
                report("(c) batches of \(size), 1 client", ledC, rawC, "COPY")
            }
            await store.close()

            // Reading the whole log back: the ledger's streamed scan (decoding every event) beside
            // raw COPY TO of the same rows (bytes counted, nothing decoded).
            let reader = try await EventStore.open(config)
            let scanStart = ContinuousClock.now
            let scanned = try await reader.scan { _ in true }
            let scanSeconds = (ContinuousClock.now - scanStart).seconds
            await reader.close()
            let copyStart = ContinuousClock.now
            let copied: Int64 = try await admin.withIsolation { conn in
                var rows: Int64 = 0
                try conn.copyOut("COPY (SELECT * FROM \(quoteIdentifier(schema)).events ORDER BY position) TO STDOUT") { _ in rows += 1 }
                return rows
            }
            let copySeconds = (ContinuousClock.now - copyStart).seconds

            let verify = try await EventStore.open(config)
            let start = ContinuousClock.now
            let chain = try await verify.verifyChain()
            let verifySeconds = (ContinuousClock.now - start).seconds
            await verify.close()

            print("")
            print("| scenario | ledger events/s | baseline events/s | ratio | ledger p50 / p99 ms | baseline p50 / p99 ms |")
            print("|---|---:|---:|---:|---:|---:|")
            for r in rows { print(r.markdown) }
            print("")
            print("read the log: ledger scan \(scanned) events in \(String(format: "%.2f", scanSeconds)) s (\(Int(Double(scanned) / max(scanSeconds, 0.001))) events/s); raw COPY TO \(copied) rows in \(String(format: "%.2f", copySeconds)) s (\(Int(Double(copied) / max(copySeconds, 0.001))) rows/s); ratio \(String(format: "%.0f", copySeconds / max(scanSeconds, 0.001) * 100)) %")
            print("verify-chain: \(chain.verified) events in \(String(format: "%.2f", verifySeconds)) s (\(Int(Double(chain.verified) / max(verifySeconds, 0.001))) events/s), intact: \(chain.isIntact)")
            try await admin.execute("DROP SCHEMA \(quoteIdentifier(schema)) CASCADE")
            await admin.close()
        }
    }

    struct Measurement {
        var events: Int
        var elapsed: Double
        var latencies: [Double] // seconds per operation
        var perSecond: Double { Double(events) / elapsed }
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000
        }
    }

    struct Row {
        var name: String
        var ledger: Measurement
        var baseline: Measurement
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

    struct Counter { var next = 0; mutating func take(_ n: Int) -> Int { defer { next += n }; return next } }

    /// A realistic verified App Store payment (about 450 bytes of payload).
    static func event(_ i: Int) -> NewEvent {
        let tx = String(2_000_000_000_000_000 + i)
        let payload = JSONValue.makeObject([
            ("channel", .string("appstore")), ("transactionId", .string(tx)), ("originalTransactionId", .string(tx)),
            ("productId", .string("com.example.coins100")), ("quantity", .int(1)), ("purchaseDate", .string("2026-03-31T08:15:40Z")),
            ("environment", .string("Production")), ("ownership", .string("PURCHASED")),
            ("price", .makeObject([("amount", .int(600)), ("currency", .string("CNY")), ("storeMilliunits", .int(6000))])),
            ("appAccountToken", .string(UUID().uuidString.lowercased())), ("rawDigest", .string("sha256:" + String(repeating: "ab", count: 32))),
        ])
        return NewEvent(stream: "appstore:tx:\(tx)", type: "PaymentVerified", payload: payload,
                        metadata: EventMetadata(correlationId: "req-\(i)", source: "payment-callback"),
                        occurredAt: Timestamp("2026-03-31T08:15:41Z")!, idempotencyKey: "appstore:tx:\(tx):verified")
    }

    static func rawValues(_ i: Int) -> [PostgresValue] {
        let e = event(i)
        return [.int8(Int64(i)), .uuid(withUnsafeBytes(of: e.eventId.uuid) { Array($0) }), .text(e.stream), .int8(0), .text(e.type), .int4(1), .jsonb(e.payload.canonicalText),
                .jsonb(e.metadata.json.canonicalText), .timestamptz(microsecondsSince1970: e.occurredAt.microseconds),
                .timestamptz(microsecondsSince1970: e.occurredAt.microseconds), .text(e.idempotencyKey!), .bytea(SHA256.hash(Array(e.stream.utf8)))]
    }

    static func rawInserts(url: String, table: String, clients: Int, duration: Duration) async throws -> Measurement {
        var connections: [PostgresConnection] = []
        for _ in 0..<clients { connections.append(try await PostgresConnection.connect(url, applicationName: "ledger-bench-raw")) }
        let sql = "INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        let start = ContinuousClock.now
        let end = start + duration
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for (c, conn) in connections.enumerated() {
                group.addTask {
                    var lat: [Double] = []
                    var i = c * 10_000_000
                    while ContinuousClock.now < end {
                        let t0 = ContinuousClock.now
                        let values = rawValues(i)
                        try await conn.query(sql, values, prepared: true)
                        lat.append((ContinuousClock.now - t0).seconds)
                        i += 1
                    }
                    return lat
                }
            }
            var all: [Double] = []
            for try await l in group { all += l }
            return all
        }
        let elapsed = (ContinuousClock.now - start).seconds
        for c in connections { await c.close() }
        return Measurement(events: latencies.count, elapsed: elapsed, latencies: latencies)
    }

    static func rawCopies(url: String, table: String, batch: Int, duration: Duration) async throws -> Measurement {
        let conn = try await PostgresConnection.connect(url, applicationName: "ledger-bench-raw")
        let start = ContinuousClock.now
        let end = start + duration
        var latencies: [Double] = []
        var i = 50_000_000
        while ContinuousClock.now < end {
            // Rows are encoded inside the timed section, as the ledger encodes its own.
            let first = i
            let t0 = ContinuousClock.now
            var out: [UInt8] = []
            for k in 0..<batch {
                let e = event(first + k)
                out += Array("\(first + k)\t\(e.eventId.lowercased)\t\(e.stream)\t0\t\(e.type)\t1\t\(e.payload.canonicalText)\t\(e.metadata.json.canonicalText)\t\(e.occurredAt.iso8601)\t\(e.occurredAt.iso8601)\t\(e.idempotencyKey!)\t\\\\x\(SHA256.hash(Array(e.stream.utf8)).hexString)\n".utf8)
            }
            let chunk = out
            try await conn.withIsolation { conn in
                try conn.transaction { conn in
                    try conn.copyIn("COPY \(table) FROM STDIN", chunks: [chunk])
                }
            }
            latencies.append((ContinuousClock.now - t0).seconds)
            i += batch
        }
        let elapsed = (ContinuousClock.now - start).seconds
        await conn.close()
        return Measurement(events: latencies.count * batch, elapsed: elapsed, latencies: latencies)
    }

    static func ledgerAppends(stores: [EventStore], clients: Int, batch: Int, duration: Duration, counter: inout Counter) async throws -> Measurement {
        let base = counter.take(100_000_000)
        let start = ContinuousClock.now
        let end = start + duration
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for c in 0..<clients {
                let store = stores[c % stores.count]
                group.addTask {
                    var lat: [Double] = []
                    var i = base + c * 1_000_000
                    while ContinuousClock.now < end {
                        let first = i
                        let t0 = ContinuousClock.now
                        let events = (0..<batch).map { event(first + $0) }
                        _ = try await store.append(events)
                        lat.append((ContinuousClock.now - t0).seconds)
                        i += batch
                    }
                    return lat
                }
            }
            var all: [Double] = []
            for try await l in group { all += l }
            return all
        }
        let elapsed = (ContinuousClock.now - start).seconds
        return Measurement(events: latencies.count * batch, elapsed: elapsed, latencies: latencies)
    }
}
