import CLibPQ
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection (`PGconn`), owned by an actor that runs on its own serial dispatch queue:
/// every blocking libpq call happens there, never on Swift's cooperative thread pool.
///
/// Every `PGresult` is cleared on every path. Errors are ``PostgresError`` with SQLSTATE and
/// constraint name. Use ``withIsolation(_:)`` to run several steps (a transaction, a COPY, a
/// streamed read) synchronously on the connection's queue.
public actor PostgresConnection {
    private let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var handle: OpaquePointer?
    /// Prepared statements of this session: SQL and parameter types -> statement name.
    var preparedStatements: [PreparedKey: String] = [:]

    struct PreparedKey: Hashable {
        var sql: String
        var types: [UInt32]
    }
    /// The connection string with its password redacted.
    public nonisolated let redactedConnectionString: String
    private let connectionString: String
    private let applicationName: String
    private let settings: [String: String]
    private let logger: Logger

    private init(connectionString: String, applicationName: String, settings: [String: String], logger: Logger) {
        self.executor = QueueExecutor(label: "ledger.postgres.connection")
        self.connectionString = connectionString
        self.redactedConnectionString = ConnectionString.redacted(connectionString)
        self.applicationName = applicationName
        self.settings = settings
        self.logger = logger
    }

    /// Opens a connection from a URL (`postgresql://...`) or a keyword string (`host=... dbname=...`).
    /// `settings` are server parameters set for the session (`SET name TO value`), again after
    /// every reconnect.
    public static func connect(
        _ connectionString: String,
        applicationName: String = "ledger",
        settings: [String: String] = [:],
        logger: Logger = Logger(label: "ledger.postgres")
    ) async throws -> PostgresConnection {
        let connection = PostgresConnection(
            connectionString: connectionString, applicationName: applicationName, settings: settings,
            logger: logger)
        try await connection.open()
        return connection
    }

    isolated deinit {
        if let handle { PQfinish(handle) }
    }

    private func open() throws {
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
        preparedStatements.removeAll()
        let keys = ["dbname", "fallback_application_name", "client_encoding", "connect_timeout"]
        let values = [connectionString, applicationName, "UTF8", "10"]
        let conn: OpaquePointer? = withCStringArray(keys) { k in
            withCStringArray(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let conn else {
            throw PostgresError(kind: .connection, message: "out of memory creating a libpq connection")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(conn))
            PQfinish(conn)
            throw PostgresError(
                kind: .connection,
                message:
                    "cannot connect to \(redactedConnectionString): \(ConnectionString.redacted(message, quoting: connectionString))",
                hint: message.contains("role \"") && message.contains("does not exist")
                    ? "the user in the URL does not exist on this server (a ledger's login roles are made by `ledger migrate`)"
                    : "check that the server runs and LEDGER_DATABASE_URL is right (or unset it to use the embedded server)"
            )
        }
        handle = conn
        // Times are exchanged in UTC, ISO format, whatever the server's defaults.
        let own = settings.sorted { $0.key < $1.key }.map {
            "; SET \(quoteIdentifier($0.key)) TO \(quoteLiteral($0.value))"
        }
        try execute(
            "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET client_min_messages TO warning" + own.joined())
    }

    /// Closes the connection; later calls fail with a connection error until ``reconnect()``.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        preparedStatements.removeAll()
    }

    /// True while libpq believes the connection is usable.
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Drops the current connection (if any) and opens a new one with the same settings.
    public func reconnect() throws {
        logger.info("reconnecting", metadata: ["to": "\(redactedConnectionString)"])
        try open()
    }

    /// The server process id, for diagnostics (and `pg_terminate_backend` in tests).
    public var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs `body` synchronously on this connection's queue with the connection isolated.
    @discardableResult
    public func withIsolation<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) throws -> T {
        try body(self)
    }

    func connected() throws -> OpaquePointer {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(
                kind: .connection, message: "connection to \(redactedConnectionString) is closed or broken")
        }
        return handle
    }

    // MARK: - Statements

    /// Runs one or more statements with no parameters (simple query protocol).
    public func execute(_ sql: String) throws {
        let conn = try connected()
        guard let res = PQexec(conn, sql) else { throw connectionFailure(conn, sql) }
        defer { PQclear(res) }
        try check(res, conn, sql)
        // The simple protocol may return several results; PQexec keeps the last one.
    }

    /// Runs one parameterized statement and appends the first column of its first row, in the
    /// server's binary form, to `out` (for a bytea, its bytes as they are: no hex text to build
    /// and decode); false when there is no row or the value is NULL.
    public func appendBinaryValue(
        _ sql: String, _ parameters: [PostgresValue] = [], to out: inout [UInt8]
    ) throws -> Bool {
        let conn = try connected()
        let res = try withParameters(parameters) { count, types, values, lengths, formats in
            PQexecParams(conn, sql, count, types, values, lengths, formats, 1)
        }
        guard let res else { throw connectionFailure(conn, sql) }
        defer { PQclear(res) }
        try check(res, conn, sql)
        guard PQntuples(res) > 0, PQnfields(res) > 0, PQgetisnull(res, 0, 0) == 0, let value = PQgetvalue(res, 0, 0)
        else { return false }
        let n = Int(PQgetlength(res, 0, 0))
        value.withMemoryRebound(to: UInt8.self, capacity: n) {
            out.append(contentsOf: UnsafeBufferPointer(start: $0, count: n))
        }
        return true
    }

    /// Runs one parameterized statement (extended protocol, explicit type OIDs) and returns its rows.
    /// With `prepared`, the statement is prepared once per connection (`PQprepare`) and its plan reused.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = [], prepared: Bool = false) throws -> QueryResult {
        let conn = try connected()
        let name = prepared ? try prepare(sql, parameters, conn) : nil
        let res = try withParameters(parameters) { count, types, values, lengths, formats in
            if let name {
                return PQexecPrepared(conn, name, count, values, lengths, formats, 0)
            }
            return PQexecParams(conn, sql, count, types, values, lengths, formats, 0)
        }
        guard let res else { throw connectionFailure(conn, sql) }
        defer { PQclear(res) }
        try check(res, conn, sql)
        return Self.extract(res)
    }

    /// Runs `body` inside BEGIN/COMMIT; rolls back if it throws.
    public func transaction<T>(isolation: String? = nil, _ body: (isolated PostgresConnection) throws -> T) throws -> T
    {
        try execute(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if isConnected { try? execute("ROLLBACK") }
            throw error
        }
    }

    @discardableResult
    /// Sends every statement in one pipeline (one round trip) and returns each statement's rows.
    /// If one fails, the statements after it are skipped by the server and its error is thrown.
    public func pipeline(_ statements: [Statement]) throws -> [QueryResult] {
        try pipeline(segments: [statements])[0]
    }

    @discardableResult
    /// Sends several pipelines in one round trip, each segment ending at a sync point of its own:
    /// the server ends each segment (commits its implicit transaction, if any) and sends its
    /// results before it runs the next one. `received` is given each segment's results as soon as
    /// they are read, if the segment succeeded: a caller keeps what an early segment returned even
    /// when the connection breaks during a later one. A segment that fails skips its statements
    /// after the failing one; the later segments still run, and the first error is thrown once
    /// every segment is read.
    public func pipeline(
        segments: [[Statement]], received: ([QueryResult]) -> Void = { _ in }
    ) throws -> [[QueryResult]] {
        let conn = try connected()
        // Statements to prepare are prepared before the pipeline starts (once per connection).
        var names: [String?] = []
        for statement in segments.joined() {
            names.append(statement.prepared ? try prepare(statement.sql, statement.parameters, conn) : nil)
        }
        guard PQenterPipelineMode(conn) == 1 else { throw connectionFailure(conn, "pipeline") }
        defer { PQexitPipelineMode(conn) }
        var name = names.makeIterator()
        for segment in segments {
            for statement in segment {
                let prepared = name.next() ?? nil
                let sent = try withParameters(statement.parameters) { count, types, values, lengths, formats in
                    if let prepared {
                        return PQsendQueryPrepared(conn, prepared, count, values, lengths, formats, 0)
                    }
                    return PQsendQueryParams(conn, statement.sql, count, types, values, lengths, formats, 0)
                }
                guard sent == 1 else {
                    // Drain whatever was queued before failing.
                    throw connectionFailure(conn, statement.sql)
                }
            }
            guard PQpipelineSync(conn) == 1 else { throw connectionFailure(conn, "pipeline sync") }
        }
        var all: [[QueryResult]] = []
        var firstError: (any Error)?
        for segment in segments {
            var error: (any Error)?
            let results = try readSegment(segment, conn, firstError: &error)
            if let error {
                if firstError == nil { firstError = error }
            } else {
                received(results)
            }
            all.append(results)
        }
        if let firstError { throw firstError }
        return all
    }

    /// Reads one segment's results, then its sync point; the first error of the segment (a
    /// statement's, or its sync's) becomes `firstError`.
    private func readSegment(
        _ statements: [Statement], _ conn: OpaquePointer, firstError: inout (any Error)?
    ) throws -> [QueryResult] {
        var results: [QueryResult] = []
        for statement in statements {
            guard let res = PQgetResult(conn) else { throw connectionFailure(conn, statement.sql) }
            let status = PQresultStatus(res)
            if status == PGRES_PIPELINE_ABORTED {
                results.append(QueryResult())
            } else if let error = errorIfFailed(res, conn, statement.sql) {
                if firstError == nil { firstError = error }
                results.append(QueryResult())
            } else {
                results.append(Self.extract(res))
            }
            PQclear(res)
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(conn) { PQclear(extra) }
        }
        // The sync point, where the server commits the implicit transaction of the statements
        // after the segment's last explicit COMMIT (if any). That commit can fail (lock_timeout
        // on the lock NOTIFY takes at commit, a deferred constraint, a lost connection) after
        // those statements returned their rows: its error is the pipeline's, named by its last
        // statement, or their results would be reported for a transaction that rolled back.
        var synced = false
        var nulls = 0
        while !synced {
            // (A NULL ends the error's result; more than a few in a row: the sync never came.)
            guard let res = PQgetResult(conn) else {
                nulls += 1
                if nulls > 2 || PQstatus(conn) != CONNECTION_OK { break }
                continue
            }
            nulls = 0
            let status = PQresultStatus(res)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(res)
                synced = true
                continue
            }
            if firstError == nil, let error = errorIfFailed(res, conn, statements.last?.sql ?? "pipeline sync") {
                firstError = error
            }
            PQclear(res)
        }
        guard synced else {
            // Whatever the connection's status says (and whatever error came first), it is not
            // fit for another statement: a connection failure, so that callers reconnect.
            let message = firstError.map { "\($0)" } ?? Self.trimmed(PQerrorMessage(conn))
            throw PostgresError(
                kind: .connection,
                message: "the pipeline's sync point never came" + (message.isEmpty ? "" : ": \(message)"),
                statement: Self.firstLine(statements.last?.sql ?? "pipeline sync"))
        }
        return results
    }
}
