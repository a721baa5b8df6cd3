import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres

extension EventStore {
    /// Loads a large generated log into an EMPTY ledger with COPY, for benchmarks only.
    ///
    /// Positions, stream versions, recordedAt and the hash chain are computed exactly as `append`
    /// computes them (so `verify-chain` passes on the result), but triggers and foreign-key checks
    /// are switched off for the session (`session_replication_role = replica`, which needs a
    /// superuser) and nothing is validated: services must use ``append(_:)``.
    public func bulkLoadForBenchmark<S: Sequence & Sendable>(
        _ events: S, progress: (@Sendable (Int64) -> Void)? = nil
    ) async throws -> Int64
    where S.Element == NewEvent {
        let conn = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-bulk-load", logger: logger)
        let s = quoteIdentifier(configuration.schema)
        do {
            let n: Int64 = try await conn.withIsolation { conn in
                let head = try conn.query("SELECT last_position FROM \(s).log_head")
                guard head.int64(0, 0) == 0 else {
                    throw LedgerError.migration(
                        "bulk load needs an empty ledger; schema \(configuration.schema) already holds events (drop the schema, or load into another one: `ledger bench rebuild --reload` or `--schema`)"
                    )
                }
                try conn.execute("SET session_replication_role = replica")
                var versions: [String: Int64] = [:]
                var previous = EventChain.genesis
                var position: Int64 = 0
                var lastRecorded = Timestamp(microsecondsSince1970: 0)
                var iterator = events.makeIterator()
                var done = false
                while !done {
                    do {
                        var chunk: [UInt8] = []
                        chunk.reserveCapacity(1 << 22)
                        var chunks: [[UInt8]] = []
                        var count = 0
                        while count < 100_000 {
                            guard let e = iterator.next() else {
                                done = true
                                break
                            }
                            count += 1
                            position += 1
                            let version = versions[e.stream, default: -1] + 1
                            versions[e.stream] = version
                            let recordedAt = max(lastRecorded, e.occurredAt)
                            lastRecorded = recordedAt
                            let payload = e.payload.canonicalText
                            let metadata = e.metadata.json.canonicalText
                            let eventId = e.eventId.lowercased
                            previous = EventChain.hash(
                                previous: previous,
                                canonical: EventChain.canonicalBytes(
                                    position: position, eventId: eventId, stream: e.stream, version: version,
                                    type: e.type,
                                    schemaVersion: e.schemaVersion, occurredAt: e.occurredAt, recordedAt: recordedAt,
                                    idempotencyKey: e.idempotencyKey, payloadText: payload, metadataText: metadata))
                            EventRows.appendCopyRow(
                                position: position, eventId: eventId, stream: e.stream, version: version, type: e.type,
                                schemaVersion: e.schemaVersion, payloadText: payload, metadataText: metadata,
                                occurredAt: e.occurredAt, recordedAt: Array(recordedAt.iso8601.utf8),
                                idempotencyKey: e.idempotencyKey, hash: previous, into: &chunk)
                            if chunk.count > 1 << 22 {
                                chunks.append(chunk)
                                chunk.removeAll(keepingCapacity: true)
                            }
                        }
                        if !chunk.isEmpty { chunks.append(chunk) }
                        guard count > 0 else { break }
                        try conn.execute("BEGIN")
                        try conn.copyIn("COPY \(s).events (\(EventRows.insertColumns)) FROM STDIN", chunks: chunks)
                        _ = try conn.query(
                            "UPDATE \(s).log_head SET last_position = $1, last_hash = $2, last_recorded_at = $3",
                            [
                                .int8(position), .bytea(previous),
                                .timestamptz(microsecondsSince1970: lastRecorded.microseconds),
                            ])
                        try conn.execute("COMMIT")
                    }
                    progress?(position)
                }
                // Every event's claim (id, key, stream version), as an append would have made it.
                try conn.execute(
                    """
                    INSERT INTO \(s).event_claims (event_id, idempotency_key, stream_id, stream_version)
                    SELECT event_id, idempotency_key, stream_id, stream_version FROM \(s).events
                    """)
                try conn.execute("RESET session_replication_role")
                try conn.execute("ANALYZE \(s).events")
                try conn.execute("ANALYZE \(s).event_claims")
                return position
            }
            await conn.close()
            return n
        } catch {
            await conn.close()
            throw error
        }
    }
}
