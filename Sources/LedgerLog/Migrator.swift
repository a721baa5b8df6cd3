import LedgerPostgres

/// Applies migrations to one schema: each in its own transaction, serialized across processes by
/// an advisory lock, recorded with a checksum; an edited applied file is refused.
public struct Migrator: Sendable {
    public var schema: String
    public var migrations: [Migration]

    public init(schema: String, migrations: [Migration]) {
        self.schema = schema
        self.migrations = migrations
    }

    public struct Outcome: Sendable {
        public var applied: [Migration]
        public var alreadyApplied: Int
    }

    public func run(on connection: PostgresConnection) async throws -> Outcome {
        let schema = self.schema
        let migrations = self.migrations
        return try await connection.withIsolation { conn in
            try conn.query("SELECT pg_advisory_lock(4242, hashtext($1))", [.text("ledger-migrate:" + schema)])
            defer { _ = try? conn.query("SELECT pg_advisory_unlock(4242, hashtext($1))", [.text("ledger-migrate:" + schema)]) }
            let s = quoteIdentifier(schema)
            try conn.execute("""
                CREATE SCHEMA IF NOT EXISTS \(s);
                CREATE TABLE IF NOT EXISTS \(s).schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                );
                """)
            let rows = try conn.query("SELECT version, name, checksum FROM \(s).schema_migrations ORDER BY version")
            var applied: [Int: (name: String, checksum: String)] = [:]
            for r in 0..<rows.count {
                applied[Int(rows.int64(r, 0)!)] = (rows.string(r, 1)!, rows.string(r, 2)!)
            }
            let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
            for (version, record) in applied.sorted(by: { $0.key < $1.key }) {
                guard let m = known[version] else {
                    throw LedgerError.migration("schema \(schema) has migration \(record.name) applied, which this build does not have (was it made by a newer ledger?)")
                }
                if m.checksum != record.checksum {
                    throw LedgerError.migration("\(m.name).sql was edited after it was applied to schema \(schema) (checksum \(record.checksum.prefix(12)) when applied, \(m.checksum.prefix(12)) now); restore the file and put the change in a new migration")
                }
            }
            var done: [Migration] = []
            for m in migrations where applied[m.version] == nil {
                try conn.transaction { conn in
                    try conn.execute("SET LOCAL search_path TO \(s)")
                    try conn.execute(m.sql)
                    try conn.query("INSERT INTO \(s).schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                   [.int4(Int32(m.version)), .text(m.name), .text(m.checksum)])
                }
                done.append(m)
            }
            return Outcome(applied: done, alreadyApplied: applied.count)
        }
    }
}
