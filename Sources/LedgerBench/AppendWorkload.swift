import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres

/// The workloads of `ledger bench append`: the ledger's appends and a raw PostgreSQL baseline on
/// the same row shape (plain INSERT / COPY into a table with no constraints), each for a duration.
public enum AppendWorkload {
    /// What one workload did in its time.
    public struct Measurement: Sendable {
        public var events: Int
        public var elapsed: Double
        /// Seconds per operation.
        public var latencies: [Double]
        public var perSecond: Double { Double(events) / elapsed }
        /// The latency at `p` (0...1), in milliseconds.
        public func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000
        }
    }

    /// Hands out ranges of event numbers, so that no two workloads append the same event.
    public struct Counter: Sendable {
        var next = 0
        public init() {}
        mutating func take(_ n: Int) -> Int {
            defer { next += n }
            return next
        }
    }

    /// A realistic verified App Store payment (about 450 bytes of payload).
    static func event(_ i: Int) -> NewEvent {
        let tx = String(2_000_000_000_000_000 + i)
        let payload = JSONValue.makeObject([
            ("channel", .string("appstore")), ("transactionId", .string(tx)), ("originalTransactionId", .string(tx)),
            ("productId", .string("com.example.coins100")), ("quantity", .int(1)),
            ("purchaseDate", .string("2026-03-31T08:15:40Z")),
            ("environment", .string("Production")), ("ownership", .string("PURCHASED")),
            (
                "price",
                .makeObject([("amount", .int(600)), ("currency", .string("CNY")), ("storeMilliunits", .int(6000))])
            ),
            ("appAccountToken", .string(UUID.systemRandom().uuidString.lowercased())),
            ("rawDigest", .string("sha256:" + String(repeating: "ab", count: 32))),
        ])
        return NewEvent(
            stream: "appstore:tx:\(tx)", type: "PaymentVerified", payload: payload,
            metadata: EventMetadata(correlationId: "req-\(i)", source: "payment-callback"),
            occurredAt: Timestamp("2026-03-31T08:15:41Z")!, idempotencyKey: "appstore:tx:\(tx):verified")
    }

    static func rawValues(_ i: Int) -> [PostgresValue] {
        let e = event(i)
        return [
            .int8(Int64(i)), .uuid(withUnsafeBytes(of: e.eventId.uuid) { Array($0) }), .text(e.stream), .int8(0),
            .text(e.type), .int4(1), .jsonb(e.payload.canonicalText),
            .jsonb(e.metadata.json.canonicalText), .timestamptz(microsecondsSince1970: e.occurredAt.microseconds),
            .timestamptz(microsecondsSince1970: e.occurredAt.microseconds), .text(e.idempotencyKey!),
            .bytea(SHA256.hash(Array(e.stream.utf8))),
        ]
    }

    /// Single-row INSERTs into a plain table of the events' shape, by `clients` connections at once.
    public static func rawInserts(
        url: String, table: String, clients: Int, duration: Duration
    ) async throws -> Measurement {
        var connections: [PostgresConnection] = []
        for _ in 0..<clients {
            connections.append(try await PostgresConnection.connect(url, applicationName: "ledger-bench-raw"))
        }
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

    /// COPY batches of `batch` rows into a plain table of the events' shape, on one connection.
    public static func rawCopies(url: String, table: String, batch: Int, duration: Duration) async throws -> Measurement
    {
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
                out += Array(
                    "\(first + k)\t\(e.eventId.lowercased)\t\(e.stream)\t0\t\(e.type)\t1\t\(e.payload.canonicalText)\t\(e.metadata.json.canonicalText)\t\(e.occurredAt.iso8601)\t\(e.occurredAt.iso8601)\t\(e.idempotencyKey!)\t\\\\x\(SHA256.hash(Array(e.stream.utf8)).hexString)\n"
                        .utf8)
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

    /// Appends of `batch` events by `clients` tasks sharing `stores`; `atCommit`: answered at their
    /// commit (``EventStore/appendAtCommit(_:)``), not waiting for their positions.
    public static func ledgerAppends(
        stores: [EventStore], clients: Int, batch: Int, duration: Duration, atCommit: Bool = false,
        counter: inout Counter
    ) async throws -> Measurement {
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
                        if atCommit {
                            _ = try await store.appendAtCommit(events)
                        } else {
                            _ = try await store.append(events)
                        }
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
