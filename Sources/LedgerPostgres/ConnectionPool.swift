import Logging

/// A small pool of ``PostgresConnection``s, lent out with scoped ``withConnection(_:)``.
///
/// A connection that comes back broken is dropped and replaced on the next lease.
public actor ConnectionPool {
    public let connectionString: String
    public let maximumConnections: Int
    private let logger: Logger
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var waiters: [CheckedContinuation<PostgresConnection?, Never>] = []
    private var closed = false

    public init(connectionString: String, maximumConnections: Int = 4, logger: Logger = Logger(label: "ledger.pool")) {
        precondition(maximumConnections > 0)
        self.connectionString = connectionString
        self.maximumConnections = maximumConnections
        self.logger = logger
    }

    /// Lends a connection to `body` and takes it back afterwards, even if `body` throws.
    public func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease()
        do {
            let value = try await body(connection)
            await giveBack(connection)
            return value
        } catch {
            await giveBack(connection)
            throw error
        }
    }

    /// Closes idle connections; connections in use are closed when they come back.
    public func shutdown() async {
        closed = true
        let toClose = idle
        idle.removeAll()
        for connection in toClose { await connection.close() }
        open -= toClose.count
        for waiter in waiters { waiter.resume(returning: nil) }
        waiters.removeAll()
    }

    private func lease() async throws -> PostgresConnection {
        while true {
            if closed { throw PostgresError(kind: .client, message: "connection pool is shut down") }
            if let connection = idle.popLast() { return connection }
            if open < maximumConnections {
                open += 1
                do {
                    return try await PostgresConnection.connect(connectionString, logger: logger)
                } catch {
                    open -= 1
                    // The slot is free again: a waiter may try it (else it would wait for a connection
                    // that may never come back, e.g. when every slot was opening while the server was down).
                    if !waiters.isEmpty { waiters.removeFirst().resume(returning: nil) }
                    throw error
                }
            }
            if let connection = await withCheckedContinuation({ waiters.append($0) }) { return connection }
        }
    }

    private func giveBack(_ connection: PostgresConnection) async {
        let healthy = await connection.isConnected
        if !healthy || closed {
            open -= 1
            await connection.close()
            if !waiters.isEmpty { waiters.removeFirst().resume(returning: nil) }  // let a waiter open a new one
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().resume(returning: connection)
        } else {
            idle.append(connection)
        }
    }
}
