import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres
import Logging

/// The read side's work over one log: folding it into projections, auditing it, rebuilding and
/// reading the read models. A type of its own, so that the log (``EventStore``: append, read,
/// subscribe, verify) does not seem to audit itself: `LogReplay(store).audit()`.
public struct LogReplay: Sendable {
    /// The log replayed (its connection, schema and roles are the replay's).
    public let store: EventStore

    public init(_ store: EventStore) { self.store = store }

    // What the replay's work uses of the log.
    var configuration: LedgerConfiguration { store.configuration }
    var pool: ConnectionPool { store.pool }
    var logger: Logger { store.logger }
    func headPosition() async throws -> Int64 { try await store.headPosition() }
    func standbyState() async throws -> StandbyState { try await store.standbyState() }
    func checkReached(_ through: Int64?) async throws -> Int64 { try await store.checkReached(through) }
    func chainReport(_ v: ChainVerifier, through: Int64?) async throws -> ChainReport {
        try await store.chainReport(v, through: through)
    }
}

extension LogReplay {
    /// Runs a read-only query on a pooled connection (`$schema` in `sql` is replaced by the quoted
    /// ledger schema). For the read models; the log itself is read with `readAll`/`scan`.
    public func queryReadModels(_ sql: String, _ parameters: [PostgresValue] = []) async throws -> QueryResult {
        let text = sql.replacingOccurrences(of: "$schema", with: quoteIdentifier(configuration.schema))
        return try await pool.withConnection { conn in try await conn.query(text, parameters) }
    }

    /// The events at these positions, in position order.
    public func events(at positions: [Int64]) async throws -> [RecordedEvent] {
        guard !positions.isEmpty else { return [] }
        let s = quoteIdentifier(configuration.schema)
        let r = try await pool.withConnection { conn in
            try await conn.query(
                "SELECT \(EventRows.columns) FROM \(s).events WHERE position = ANY($1) ORDER BY position",
                [.int8Array(positions)])
        }
        return try EventRows.decode(r)
    }
}
