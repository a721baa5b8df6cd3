import Foundation
import LedgerCore
import LedgerPostgres
import Logging

/// The event log: append (idempotent, atomic per batch, group-committed), read, tail, verify.
public final class EventStore: Sendable {
    public let configuration: LedgerConfiguration
    /// Connections for reads, shared with the modules built on the log (projections, benchmarks).
    package let pool: ConnectionPool
    private let coordinator: AppendCoordinator
    /// This store's candidate sealer, when a sealer seals (``Sealing/sealer``).
    private let sealer: Sealer?
    package let logger: Logger

    private init(configuration: LedgerConfiguration, writer: PostgresConnection, logger: Logger) {
        self.configuration = configuration
        self.pool = ConnectionPool(
            connectionString: configuration.connectionString,
            maximumConnections: configuration.readConnections, logger: logger)
        let sealer = configuration.sealing == .sealer ? Sealer(configuration: configuration, logger: logger) : nil
        self.sealer = sealer
        self.coordinator = AppendCoordinator(
            configuration: configuration, connection: writer, sealer: sealer, logger: logger)
        self.logger = logger
    }

    /// Connects (the writer connection at once, readers on demand). Run ``migrate(_:logger:)`` first.
    public static func open(
        _ configuration: LedgerConfiguration, logger: Logger = Logger(label: "ledger")
    ) async throws -> EventStore {
        let writer = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-writer",
            settings: AppendTransaction.sessionSettings, logger: logger)
        if configuration.sealing == .sealer {
            // A candidate that cannot seal would be elected and leave every event pending: refused here.
            do {
                if let problem = try await Sealer.problem(on: writer, schema: configuration.schema) { throw problem }
            } catch {
                await writer.close()
                throw error
            }
        }
        let store = EventStore(configuration: configuration, writer: writer, logger: logger)
        await store.sealer?.start()
        return store
    }

    /// Applies migrations to the configured schema: `migrations`, or the event log's own
    /// (``Migration/eventLog()``). A ledger with read models passes them too, combined with
    /// ``Migration/combining(_:)``: the migrator refuses a schema holding migrations it was not given.
    public static func migrate(
        _ configuration: LedgerConfiguration, migrations: [Migration]? = nil
    ) async throws -> Migrator.Outcome {
        let connection = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-migrate")
        do {
            let outcome = try await Migrator(
                schema: configuration.schema, migrations: migrations ?? Migration.eventLog()
            ).run(on: connection)
            await connection.close()
            return outcome
        } catch {
            await connection.close()
            throw error
        }
    }

    /// The writer connection's server process id (diagnostics, tests).
    public func writerBackendPID() async -> Int32 { await coordinator.backendPID() }

    /// Whether this store is the log's sealer now (``Sealing/sealer``; false otherwise).
    public func isSealer() async -> Bool { await sealer?.isElected() ?? false }

    public func close() async {
        await coordinator.close()
        await sealer?.stop()
        await pool.shutdown()
    }

    // MARK: Append

    /// Appends a batch atomically: every event is stored, or none is.
    ///
    /// - An event whose id (or idempotency key) is already stored with the same content is not
    ///   stored again: its original position comes back with `alreadyStored = true`.
    /// - Throws ``LedgerError/idempotencyConflict(key:eventId:storedPosition:reason:)`` when the
    ///   content differs, ``LedgerError/versionConflict(stream:expected:actual:eventId:)`` when a
    ///   stream is not at the expected version, ``LedgerError/invalidEvent(_:)`` before anything
    ///   is sent, and ``LedgerError/database(_:)`` when the database fails.
    ///
    /// Concurrent calls are committed together (group commit); each keeps its own all-or-nothing
    /// outcome.
    public func append(_ events: [NewEvent]) async throws -> [AppendedEvent] {
        if events.isEmpty { return [] }
        return try await coordinator.submit(try prepare(events))
    }

    /// Appends a batch atomically, as ``append(_:)`` does, and answers once it is committed,
    /// without waiting for the events' positions.
    ///
    /// Every guarantee but the answer's position is the same: the events are durable and claimed
    /// under their ids, idempotency keys and stream versions when this returns; a retry returns
    /// them with `alreadyStored = true` (and their positions once sealed); a stream not at the
    /// expected version, or a key stored with other content, throws the same typed errors.
    ///
    /// When another writer holds the append lock (several stores or processes on one log), the
    /// events are committed pending: not in the log yet, unseen by readers, ``CommittedEvent/position``
    /// nil. The next writer to take the lock seals them, in commit order, and this store seals what
    /// it left itself once it has nothing more to append. Without waiting for the lock and a second
    /// transaction, many independent writers append 1.4-2x as fast as with ``append(_:)``; a
    /// writer alone finds the lock free, and gets its positions either way.
    public func appendAtCommit(_ events: [NewEvent]) async throws -> [CommittedEvent] {
        if events.isEmpty { return [] }
        return try await coordinator.submit(try prepare(events), waits: false).map(CommittedEvent.init)
    }

    /// The events validated, with their canonical texts; the first invalid one throws.
    private func prepare(_ events: [NewEvent]) throws -> [PreparedEvent] {
        var prepared: [PreparedEvent] = []
        prepared.reserveCapacity(events.count)
        for (i, e) in events.enumerated() {
            let p = PreparedEvent(e)
            do { try configuration.validation.validate(e, canonicalPayloadBytes: p.payloadText.utf8.count) } catch {
                var error = error
                if events.count > 1, error.line == nil { error.message = "(batch item \(i + 1)) " + error.message }
                throw LedgerError.invalidEvent(error)
            }
            prepared.append(p)
        }
        return prepared
    }

    /// What the log knows of an append request's idempotency key (the HTTP API's `Idempotency-Key`).
    public enum RequestKey: Sendable, Equatable {
        /// First seen now, or seen before with the same body: go on (the append itself is idempotent).
        case body
        /// Seen before with another body: a conflict, whatever the new body's lines carry.
        case otherBody
    }

    /// Records that `caller`'s request `key` names the body whose SHA-256 is `digest` (32 bytes),
    /// unless the key is recorded already; says whether the recorded body is this one. A key names
    /// one body for good, even when the request it came with failed (the same body sent again runs
    /// again). The database's primary key decides between concurrent requests.
    public func claimRequestKey(caller: String, key: String, digest: [UInt8]) async throws -> RequestKey {
        precondition(digest.count == 32, "a SHA-256 digest")
        let s = quoteIdentifier(configuration.schema)
        // Committed without waiting for its own WAL flush: a claim is the first of a request's two
        // commits, and the append's synchronous commit right after it flushes it too, so the claim
        // is durable whenever anything of its request is. (Only after a crash that loses the claim
        // of a request that wrote nothing could the key name another body.) Waiting for a flush of
        // its own took every request two flushes, one of them outside the group commit.
        //
        // Two statements, in one round trip: the insert waits for a concurrent request that is
        // recording the same key (a client's retry racing its original) and leaves that row alone;
        // the select, a statement of its own under READ COMMITTED, has a snapshot taken after
        // that wait, so it sees the row the other request committed.
        let parameters: [PostgresValue] = [.text(caller), .text(key)]
        let stored = try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                do {
                    let results = try conn.pipeline([
                        Statement("BEGIN ISOLATION LEVEL READ COMMITTED"),
                        Statement("SET LOCAL synchronous_commit TO off"),
                        Statement(
                            """
                            INSERT INTO \(s).append_requests (caller, request_key, body_digest) VALUES ($1, $2, $3)
                            ON CONFLICT (caller, request_key) DO NOTHING
                            """, parameters + [.bytea(digest)], prepared: true),
                        Statement(
                            "SELECT body_digest FROM \(s).append_requests WHERE caller = $1 AND request_key = $2",
                            parameters, prepared: true),
                        Statement("COMMIT"),
                    ])
                    return results[3]
                } catch {
                    if conn.isConnected { try? conn.execute("ROLLBACK") }
                    throw error
                }
            }
        }
        guard stored.count == 1, let recorded = stored.bytea(0, 0) else {
            throw LedgerError.migration(
                "the request key \(Echo.quoted(key, limit: 80)) was recorded but cannot be read back from \(configuration.schema).append_requests (the writer role needs SELECT on it: run `ledger migrate`, which grants it); nothing was written: send the request again"
            )
        }
        return recorded == digest ? .body : .otherBody
    }

    // MARK: Read

    /// The last committed position (0 for an empty log).
    public func headPosition() async throws -> Int64 {
        let s = quoteIdentifier(configuration.schema)
        return try await pool.withConnection { conn in
            try await conn.query("SELECT last_position FROM \(s).log_head").int64(0, 0) ?? 0
        }
    }

    /// Events committed by writers that found the append lock taken and not sealed yet (they are not
    /// in the log, and their appends have not returned). Normally 0 or a moment's worth; the next
    /// append of any writer seals them.
    public func pendingCount() async throws -> Int64 {
        let s = quoteIdentifier(configuration.schema)
        return try await pool.withConnection { conn in
            try await conn.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) ?? 0
        }
    }

    /// Seals the events other writers committed as pending and have not sealed (a writer that
    /// stopped between its commit and its `seal_events`, and no append since), waiting for the
    /// append lock; returns how many it sealed. Appends seal them anyway; `ledger serve` calls
    /// this every few seconds, and `ledger seal` once, so that a quiet log leaves nothing pending.
    /// Needs the writer's rights.
    @discardableResult
    public func sealPending() async throws -> Int64 {
        let s = quoteIdentifier(configuration.schema)
        return try await pool.withConnection { conn in
            try await conn.query(
                "SELECT CASE WHEN EXISTS (SELECT 1 FROM \(s).pending_events) THEN \(s).seal_pending() ELSE 0 END"
            )
            .int64(0, 0) ?? 0
        }
    }

    /// Whether this database is a hot standby, and the commit time of the last transaction it replayed.
    public func standbyState() async throws -> StandbyState {
        try await pool.withConnection { conn in
            let r = try await conn.query(
                "SELECT pg_is_in_recovery()::text, (extract(epoch FROM pg_last_xact_replay_timestamp()) * 1000000)::bigint"
            )
            return StandbyState(
                isStandby: r.string(0, 0) == "true",
                lastReplayedAt: r.int64(0, 1).map { Timestamp(microsecondsSince1970: $0) })
        }
    }

    /// `through`, checked against the head: a position the log has not reached is refused
    /// (on a hot standby: not replayed yet) rather than quietly replaced by the head.
    public func checkReached(_ through: Int64?) async throws -> Int64 {
        let head = try await headPosition()
        guard let through else { return head }
        if through > head {
            throw PositionNotReached(requested: "position \(through)", head: head, standby: try await standbyState())
        }
        return through
    }

    /// Events of one stream, from `version` on, in version order.
    public func readStream(
        _ stream: String, fromVersion version: Int64 = 0, limit: Int = 1000
    ) async throws -> [RecordedEvent] {
        let s = quoteIdentifier(configuration.schema)
        let result = try await pool.withConnection { conn in
            try await conn.query(
                """
                SELECT \(EventRows.columns) FROM \(s).events
                WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version LIMIT $3
                """, [.text(stream), .int8(version), .int8(Int64(limit))])
        }
        return try EventRows.decode(result)
    }

    /// One page of the global log: events with `position > after`, in order.
    public func readAll(after: Int64, limit: Int = 1000) async throws -> [RecordedEvent] {
        let s = quoteIdentifier(configuration.schema)
        let result = try await pool.withConnection { conn in
            try await conn.query(
                """
                SELECT \(EventRows.columns) FROM \(s).events
                WHERE position > $1 ORDER BY position LIMIT $2
                """, [.int8(after), .int8(Int64(limit))])
        }
        return try EventRows.decode(result)
    }

    /// Streams the global log from `after` (exclusive) up to `through` (inclusive, or the head)
    /// with `COPY ... TO STDOUT`: rows are handed to `body` as PostgreSQL sends them, so memory stays
    /// bounded. `body` runs on the connection's own thread; return false from it to stop early.
    @discardableResult
    public func scan(
        after: Int64 = 0, through: Int64? = nil, stream: String? = nil,
        _ body: @escaping @Sendable (RecordedEvent) throws -> Bool
    ) async throws -> Int64 {
        let sql = scanSQL(after: after, through: through, stream: stream)
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                var count: Int64 = 0
                do {
                    try conn.copyOut(sql) { row in
                        count += 1
                        if try !body(try EventRows.decode(copyRow: row)) { throw StopScan() }
                    }
                } catch is StopScan {}
                return count
            }
        }
    }

    struct StopScan: Error {}

    /// The COPY of ``scan(after:through:stream:_:)``: the events after `after`, through `through`,
    /// of `stream` (nil: all), in position order.
    func scanSQL(after: Int64, through: Int64?, stream: String? = nil) -> String {
        var conditions = ["position > \(after)"]
        if let through { conditions.append("position <= \(through)") }
        if let stream { conditions.append("stream_id = \(quoteLiteral(stream))") }
        return
            "COPY (SELECT \(EventRows.columns) FROM \(quoteIdentifier(configuration.schema)).events WHERE \(conditions.joined(separator: " AND ")) ORDER BY position) TO STDOUT"
    }
}
