import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerServer
import Synchronization

/// A Mutex in a class, so concurrent test tasks can share state.
public final class Locked<T: Sendable>: Sendable {
    private let mutex: Mutex<T>
    public init(_ value: T) { mutex = Mutex(value) }
    public func withLock<R>(_ body: (inout T) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A real PostgreSQL for tests: `LEDGER_TEST_DATABASE_URL` when set, otherwise the embedded cluster
/// under the package's `.ledger` folder (started on first use). Each test gets its own schema.
public enum TestDatabase {
    /// The server URL, starting the embedded cluster once per process if needed.
    public static func url() async throws -> String {
        try await shared.value
    }

    private static let shared = Task<String, any Error> {
        let env = ProcessInfo.processInfo.environment
        if let url = env["LEDGER_TEST_DATABASE_URL"], !url.isEmpty { return withSessionLimits(url) }
        if let url = env["LEDGER_DATABASE_URL"], !url.isEmpty { return withSessionLimits(url) }
        let root = env["LEDGER_HOME"].map { URL(fileURLWithPath: $0) } ?? EmbeddedPostgres.defaultRoot(in: packageRoot)
        return withSessionLimits(try await EmbeddedPostgres(root: root).start())
    }

    /// Server-side limits for every test session (in this process and in the CLI children, which
    /// get the same URL): a statement or lock wait that never ends fails its test rather than hang
    /// the run, since a libpq call in progress cannot be cancelled. Well above any test's needs.
    static let sessionLimits = "-c statement_timeout=90s -c lock_timeout=60s -c idle_in_transaction_session_timeout=60s"

    /// `url` with ``sessionLimits`` as libpq's `options`, unless it sets `options` itself.
    static func withSessionLimits(_ url: String) -> String {
        if url.contains("options=") { return url }
        if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") {
            let encoded = sessionLimits.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? sessionLimits
            return url + (url.contains("?") ? "&" : "?") + "options=" + encoded
        }
        return url + " options='\(sessionLimits)'"
    }

    /// The folder holding Package.swift (found from this source file's path).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// A fresh, migrated schema named after the test, dropped afterwards: on the tests' shared
    /// server, or on `server` (a private cluster's URL) when given.
    public static func withSchema<T>(
        _ label: String = "t",
        migrate: Bool = true,
        on server: String? = nil,
        _ body: (LedgerConfiguration) async throws -> T
    ) async throws -> T {
        let url: String
        if let server { url = withSessionLimits(server) } else { url = try await Self.url() }
        let name =
            "t_" + label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20) + "_"
            + UUID().uuidString.prefix(8).lowercased()
        let config = LedgerConfiguration(
            connectionString: url, schema: String(name), validation: EventValidation(allowUnknownTypes: true))
        if migrate { _ = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels()) }
        do {
            let value = try await body(config)
            try await drop(config)
            return value
        } catch {
            try? await drop(config)
            throw error
        }
    }

    static func drop(_ config: LedgerConfiguration) async throws {
        let admin = try await PostgresConnection.connect(
            config.connectionString, applicationName: "ledger-test-cleanup")
        try await admin.execute("DROP SCHEMA IF EXISTS \(quoteIdentifier(config.schema)) CASCADE")
        await admin.close()
    }

    /// The rows of `events` in the schema, counted as the owner: "nothing was written" is read from
    /// the log itself, not from the head that the code under test maintains.
    public static func storedEventRows(_ config: LedgerConfiguration) async throws -> Int64 {
        let conn = try await admin(config)
        defer { Task { await conn.close() } }
        return try await conn.query("SELECT count(*) FROM \(quoteIdentifier(config.schema)).events").int64(0, 0) ?? -1
    }

    /// Runs `sql` as the owner with every trigger off (`session_replication_role = replica`), as
    /// an owner or a superuser rewriting history could.
    public static func tamper(_ config: LedgerConfiguration, _ sql: String) async throws {
        let conn = try await admin(config)
        defer { Task { await conn.close() } }
        try await conn.execute("SET session_replication_role = replica; \(sql); SET session_replication_role = origin;")
    }

    /// Removes the events after `position` and moves the head back to it, triggers off: the chain
    /// still verifies, only an anchor can tell.
    public static func cutTail(_ config: LedgerConfiguration, keeping position: Int64) async throws {
        let s = quoteIdentifier(config.schema)
        try await tamper(
            config,
            """
            DELETE FROM \(s).events WHERE position > \(position);
            UPDATE \(s).log_head SET last_position = \(position), last_hash = (SELECT hash FROM \(s).events WHERE position = \(position))
            """)
    }

    /// Commits an event as pending, as the ledger's writer role, the way a writer that stopped
    /// between its commit and its `seal_events` leaves it: claimed with its content (in the view
    /// `pending_events`), not in the log. Returns its id (lowercased).
    @discardableResult
    public static func leavePending(
        _ config: LedgerConfiguration, stream: String, version: Int64
    ) async throws -> String {
        let writer = try await Self.writer(config)
        defer { Task { await writer.close() } }
        return try await claimPending(on: writer, schema: config.schema, stream: stream, version: version)
    }

    /// A session of the schema's writer role (`ledger_writer`), as an application appends with.
    public static func writer(_ config: LedgerConfiguration) async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            config.connecting(as: .writer).connectionString, applicationName: "ledger-test-writer")
    }

    /// Writes a pending event (a claim with its content, a `PaymentVerified`) on `conn`, in whatever
    /// transaction it has open, as a writer that found the append lock taken does. Returns its id
    /// (lowercased).
    @discardableResult
    public static func claimPending(
        on conn: PostgresConnection, schema: String, stream: String, version: Int64, id: String? = nil
    ) async throws -> String {
        let id = id ?? UUID().uuidString.lowercased()
        _ = try await conn.query(
            """
            INSERT INTO \(quoteIdentifier(schema)).event_claims (event_id, stream_id, stream_version, event_type, schema_version,
                                                               payload, metadata, occurred_at)
            VALUES ($1::uuid, $2, $3, 'PaymentVerified', 1, '{"n": 1}', '{}', '2026-03-31T08:15:00Z')
            """, [.text(id), .text(stream), .int8(version)])
        return id
    }

    /// Polls (by count, each poll a query) until `sql` returns `expected`; a hang is caught by the
    /// suite's time limit, not by a wall-clock bound here.
    public static func waitUntil(_ conn: PostgresConnection, _ sql: String, equals expected: Int64) async throws {
        while try await conn.query(sql).int64(0, 0) != expected {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The server process holding the election of `schema`'s sealer (`Sealing.sealer`): a row, or none.
    public static func electedSealerPID(schema: String) -> String {
        """
        SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND classid = 4244 AND objsubid = 1
          AND objid = to_regnamespace(\(quoteLiteral(schema)))::oid
        """
    }

    /// Counts the sessions holding the election of `schema`'s sealer: 0 or 1.
    public static func electedSealers(schema: String) -> String {
        "SELECT count(*) FROM (\(electedSealerPID(schema: schema))) AS elected"
    }

    /// A superuser connection to run SQL around the ledger (tampering, inspection).
    public static func admin(_ config: LedgerConfiguration) async throws -> PostgresConnection {
        try await PostgresConnection.connect(config.connectionString, applicationName: "ledger-test-admin")
    }
}

/// A payload-carrying event for tests.
public func testEvent(
    stream: String, type: String = "PaymentVerified", payload: JSONValue = .makeObject([("n", .int(1))]),
    key: String? = nil, expected: ExpectedVersion = .any, id: UUID = UUID()
) -> NewEvent {
    NewEvent(
        eventId: id, stream: stream, type: type, payload: payload,
        metadata: EventMetadata(source: "test"), occurredAt: Timestamp("2026-03-31T08:15:00Z")!,
        idempotencyKey: key, expectedVersion: expected)
}

extension EmbeddedPostgres {
    /// Runs `body` with a private PostgreSQL of its own under /tmp (for tests that stop and start
    /// their server), stopped and removed afterwards, whether `body` succeeds or throws.
    public static func withPrivateCluster<T>(
        _ label: String, _ body: (EmbeddedPostgres) async throws -> T
    ) async throws -> T {
        let root = URL(fileURLWithPath: "/tmp/ledger-\(label)-\(UUID().uuidString.prefix(8))")
        let db = EmbeddedPostgres(root: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let value: T
        do {
            value = try await body(db)
        } catch {
            try? await db.stop()
            throw error
        }
        try await db.stop()
        return value
    }
}
