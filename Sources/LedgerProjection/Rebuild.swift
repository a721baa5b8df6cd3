import Foundation
import LedgerCore
import LedgerFoldStore
import LedgerLog
import LedgerDomain
import LedgerPostgres

/// What `ledger rebuild` does.
public struct RebuildOptions: Sendable {
    public var models: [ReadModel]
    /// Rebuild as of this position (default: the head, or with `verify` the live checkpoint).
    public var through: Int64?
    /// Compare with the live tables instead of swapping.
    public var verify: Bool
    /// After swapping, write a snapshot of the fold at the rebuilt position, for the projector to
    /// start from (see ``SnapshotInfo``).
    public var snapshot: Bool
    /// How much memory the fold keeps its views in (``FoldMemory``); the tables do not depend on it.
    public var memory: FoldMemory
    /// Below this many rows in all, the shadow tables are written on one connection: a small
    /// rebuild is over before a second one pays for itself. (Tests set 0, to write on two.)
    var rowsForSecondConnection = 100_000

    public init(
        models: [ReadModel] = ReadModel.allCases, through: Int64? = nil, verify: Bool = false, snapshot: Bool = true,
        memory: FoldMemory = .automatic
    ) {
        self.models = models
        self.through = through
        self.verify = verify
        self.snapshot = snapshot
        self.memory = memory
    }
}

/// One table, rebuilt, and (with verify) compared with the live one.
public struct TableResult: Sendable, Hashable {
    public var table: String
    public var rows: Int64
    /// Order-independent: the sum of a 64-bit digest of every row, with the row count.
    public var checksum: String
    public var liveRows: Int64?
    public var liveChecksum: String?
    /// A readable line per differing row (at most 10).
    public var differences: [String]
    public var differingRows: Int64

    public var matches: Bool { liveChecksum == nil || (liveChecksum == checksum && differingRows == 0) }
}

public struct RebuildReport: Sendable {
    /// The position rebuilt to: every event through it was folded.
    public var position: Int64
    public var foldSeconds: Double
    public var writeSeconds: Double
    /// How many connections wrote the shadow tables: two for a large rebuild, one for a small one.
    public var writeConnections = 1
    public var tables: [TableResult]
    public var swapped: Bool
    public var livePositions: [ReadModel: Int64]
    /// The snapshot written after the swap, and how long it took.
    public var snapshot: SnapshotInfo?
    /// What the fold spilled out of memory (nil: nothing; see ``FoldMemory``).
    public var spill: SpillReport?
    public var snapshotSeconds: Double = 0
    /// Why no snapshot was written though one was asked for: the projector starts from its lowest
    /// checkpoint, and read models this rebuild left are behind it.
    public var snapshotSkipped: String?
    /// The log's head when a verification ran: the live read models, and so the comparison, stop at
    /// ``position``, and whatever lies beyond it is not yet projected.
    public var logHead: Int64?
    public var hasDifferences: Bool { tables.contains { !$0.matches } }
}

/// Rows produced lazily, about 1 MiB a chunk, so a rebuild never holds a table's text in memory.
/// Each element is written where it lies, not copied out first; a table's spilled views are read
/// back a page at a time.
struct RowChunks: Sequence, IteratorProtocol {
    /// Writes the next element's rows; false when there is none.
    let writeNext: (inout RowWriter) -> Bool

    init<Element>(_ views: ViewTable<Element>.Views, _ write: @escaping (Element, inout RowWriter) -> Void) {
        var views = views.makeIterator()
        writeNext = { w in views.withNext { write($0, &w) } != nil }
    }

    init<Element>(_ elements: [Element], _ write: @escaping (Element, inout RowWriter) -> Void) {
        var i = 0
        writeNext = { w in
            guard i < elements.count else { return false }
            defer { i += 1 }
            write(elements[i], &w)
            return true
        }
    }

    mutating func next() -> [UInt8]? {
        var w = RowWriter()
        while w.out.count < 1 << 20, writeNext(&w) {}
        return w.out.isEmpty ? nil : w.out
    }
}

extension LogReplay {
    /// Folds the log into shadow tables, then swaps them in atomically (or, with `verify`,
    /// compares them with the live tables and drops them). Live tables keep serving meanwhile.
    public func rebuild(_ options: RebuildOptions, progress: FoldProgress? = nil) async throws -> RebuildReport {
        let conn = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-rebuild", logger: logger)
        do {
            let report = try await rebuild(options, on: conn, progress: progress)
            await closeReleasingProjectorLock(conn)
            return report
        } catch {
            await closeReleasingProjectorLock(conn)
            throw error
        }
    }

    private func rebuild(
        _ options: RebuildOptions, on conn: PostgresConnection, progress: FoldProgress?
    ) async throws -> RebuildReport {
        try await takeProjectorLock(conn)
        let live = try await checkpoints()
        let target: Int64
        if options.verify, options.through != nil {
            throw RebuildRefused(
                description:
                    "--verify compares with the live tables at their own checkpoint; leave out --to-position and --as-of"
            )
        }
        if let t = options.through {
            target = try await checkReached(t)
        } else if options.verify {
            // Compare like with like: the rebuilt tables at the position the live ones are at.
            let positions = Set(options.models.map { live[$0] ?? 0 })
            guard positions.count <= 1 else {
                throw ReadModelsApart(
                    description: "the live read models are at different positions ("
                        + options.models.map { "\($0.rawValue) \(live[$0] ?? 0)" }.joined(separator: ", ")
                        + "); run `ledger project` so they agree, or verify one model at a time")
            }
            target = positions.first ?? 0
        } else {
            target = try await headPosition()
        }
        let clock = ContinuousClock()
        let t0 = clock.now
        let (empty, spillFile) = try options.memory.emptyState()
        let state = try await fold(empty, through: target, progress: progress)
        let t1 = clock.now
        let schema = quoteIdentifier(configuration.schema)
        let tables = options.models.flatMap { m in m.tables.map { (name: $0.name, key: $0.key) } }

        let (results, writeConnections) = try await writeShadows(
            tables, from: state, verify: options.verify, rowsForSecondConnection: options.rowsForSecondConnection,
            main: conn)
        if options.verify {
            try await conn.withIsolation { conn in
                for t in tables { try conn.execute("DROP TABLE IF EXISTS \(schema).\(t.name)_rebuild") }
            }
        } else {
            try await swap(tables.map(\.name), models: options.models, position: target, schema: schema, conn)
        }
        let t2 = clock.now
        var report = RebuildReport(
            position: target, foldSeconds: (t1 - t0).seconds, writeSeconds: (t2 - t1).seconds,
            tables: results, swapped: !options.verify, livePositions: live)
        report.writeConnections = writeConnections
        report.spill = SpillReport(state, spillFile)
        if options.verify { report.logHead = try await headPosition() }
        // The projector starts from a snapshot at or before its lowest checkpoint, and one is kept:
        // with read models left behind the rebuilt position, a snapshot there would replace the
        // one the projector can start from by one it cannot.
        let behind = ReadModel.allCases.filter { !options.models.contains($0) && (live[$0] ?? 0) < target }
        if options.snapshot && !options.verify && !behind.isEmpty {
            report.snapshotSkipped =
                behind.map { "\($0.rawValue) is at position \(live[$0] ?? 0)" }.joined(separator: ", ")
                + ", behind \(target): the projector starts from its lowest checkpoint, so the snapshot it has is kept"
        } else if options.snapshot && !options.verify {
            let name = configuration.schema
            report.snapshot = try await conn.withIsolation { conn in
                try SnapshotStore.write(state, schema: name, on: conn)
            }
            report.snapshotSeconds = (clock.now - t2).seconds
        }
        Discarded.free(consume state)
        return report
    }

    /// Fills the shadow table of each of `tables` (name, key) and checksums it (with `verify`, also
    /// against the live table), on two connections at once: while one waits for PostgreSQL to
    /// build indexes or checksum a table, the other streams rows. The larger tables are spread
    /// first, so the two finish close together. Results come back in the order of `tables`, with
    /// the number of connections that wrote them.
    private func writeShadows(
        _ tables: [(name: String, key: [String])], from state: Projections, verify: Bool,
        rowsForSecondConnection: Int, main: PostgresConnection
    ) async throws -> ([TableResult], connections: Int) {
        let schema = configuration.schema
        // Greedy split by rows to write: each table to the lighter of the two lanes.
        var lanes: [[Int]] = [[], []]
        var load = [0, 0]
        let sizes = tables.map { Self.shadowRows($0.name, state) }
        for i in tables.indices.sorted(by: { sizes[$0] > sizes[$1] }) {
            let lane = load[0] <= load[1] ? 0 : 1
            lanes[lane].append(i)
            load[lane] += sizes[i]
        }
        if load.reduce(0, +) < rowsForSecondConnection {
            lanes = [lanes[0] + lanes[1], []]
        }
        let second =
            lanes[1].isEmpty
            ? nil
            : try await PostgresConnection.connect(
                configuration.connectionString, applicationName: "ledger-rebuild", logger: logger)
        do {
            let results = try await withThrowingTaskGroup(of: [(Int, TableResult)].self) { group in
                for (lane, conn) in [(0, main), (1, second)] {
                    guard let conn, !lanes[lane].isEmpty else { continue }
                    let indices = lanes[lane]
                    group.addTask {
                        var out: [(Int, TableResult)] = []
                        for i in indices {
                            out.append(
                                (
                                    i,
                                    try await Self.writeShadow(
                                        tables[i].name, key: tables[i].key, from: state, verify: verify,
                                        schema: schema, on: conn)
                                ))
                        }
                        return out
                    }
                }
                var byIndex: [Int: TableResult] = [:]
                for try await part in group { for (i, r) in part { byIndex[i] = r } }
                return tables.indices.map { byIndex[$0]! }
            }
            await second?.close()
            return (results, second == nil ? 1 : 2)
        } catch {
            await second?.close()
            throw error
        }
    }

    /// The rows a table's shadow will hold, to spread the work.
    private static func shadowRows(_ table: String, _ state: Projections) -> Int {
        switch table {
        case "rm_orders": state.orders.count
        case "rm_transactions": state.transactions.count
        case "rm_subscriptions": state.subscriptions.count
        case "rm_users", "rm_entitlement_periods": state.users.count
        case "rm_anomalies": state.anomalies.count
        default: 0
        }
    }

    private static func writeShadow(
        _ table: String, key: [String], from state: Projections, verify: Bool, schema plainSchema: String,
        on conn: PostgresConnection
    ) async throws -> TableResult {
        let schema = quoteIdentifier(plainSchema)
        let shadow = table + "_rebuild"
        let rows: Int64 = try await conn.withIsolation { conn in
            try Self.fillShadow(shadow, of: table, from: state, schema: plainSchema, on: conn)
        }
        var result = TableResult(
            table: table, rows: rows, checksum: try await Self.checksum(schema, shadow, conn).checksum,
            differences: [], differingRows: 0)
        if verify {
            let l = try await Self.checksum(schema, table, conn)
            result.liveRows = l.rows
            result.liveChecksum = l.checksum
            (result.differingRows, result.differences) = try await Self.differences(
                schema, live: table, rebuilt: shadow, key: key, conn)
        }
        return result
    }

    /// Creates the shadow table `shadow` of `table`, fills it from the fold, then gives it the
    /// live table's indexes.
    static func fillShadow(
        _ shadow: String, of table: String, from state: Projections, schema plainSchema: String,
        on conn: isolated PostgresConnection
    ) throws -> Int64 {
        let schema = quoteIdentifier(plainSchema)
        try conn.execute("DROP TABLE IF EXISTS \(schema).\(shadow)")
        // Columns, defaults and checks now; the indexes after the rows are in (building an
        // index once is far cheaper than maintaining it row by row).
        try conn.execute(
            "CREATE TABLE \(schema).\(shadow) (LIKE \(schema).\(table) INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)"
        )
        let indexes = try conn.query(
            """
            SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisprimary
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = $1 AND t.relname = $2 ORDER BY c.relname
            """, [.text(plainSchema), .text(table)])
        let copied: Int64
        let sql = "COPY \(schema).\(shadow) FROM STDIN"
        switch table {
        case "rm_orders":
            copied = Int64(
                try conn.copyIn(sql, chunks: RowChunks(state.orders.values) { state.orderRow($0, into: &$1) }))
        case "rm_transactions":
            copied = Int64(
                try conn.copyIn(
                    sql, chunks: RowChunks(state.transactions.values) { state.transactionRow($0, into: &$1) }))
        case "rm_subscriptions":
            copied = Int64(
                try conn.copyIn(
                    sql, chunks: RowChunks(state.subscriptions.values) { state.subscriptionRow($0, into: &$1) }))
        case "rm_users":
            copied = Int64(try conn.copyIn(sql, chunks: RowChunks(state.users.values) { state.userRow($0, into: &$1) }))
        case "rm_entitlement_periods":
            copied = Int64(
                try conn.copyIn(sql, chunks: RowChunks(state.users.values) { state.periodRows($0, into: &$1) }))
        case "rm_anomalies":
            copied = Int64(
                try conn.copyIn(sql, chunks: RowChunks(state.anomalies) { Projections.anomalyRow($0, into: &$1) }))
        default: copied = 0
        }
        try copyIndexes(indexes, of: table, to: shadow, schema: plainSchema, on: conn)
        return copied
    }
}
