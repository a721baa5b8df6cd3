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

    /// The SQL functions the migrations name, by name: applied after the migrations whenever a
    /// file's text changed since it was last applied.
    var functions: [SQLFunction] {
        var byName: [String: SQLFunction] = [:]
        for m in migrations { for f in m.functions { byName[f.name] = f } }
        return byName.values.sorted { $0.name < $1.name }
    }

    public struct Outcome: Sendable {
        public var applied: [Migration]
        public var alreadyApplied: Int
        /// The functions whose current text was applied now (none when every one was current).
        public var functionsApplied: [String] = []
        /// Migrations whose record was moved from a former checksum to the file's (same effect).
        public var rechecked: [String] = []
    }

    public func run(on connection: PostgresConnection) async throws -> Outcome {
        let schema = self.schema
        let migrations = self.migrations
        return try await connection.withIsolation { conn in
            try conn.query("SELECT pg_advisory_lock(4242, hashtext($1))", [.text("ledger-migrate:" + schema)])
            defer {
                _ = try? conn.query(
                    "SELECT pg_advisory_unlock(4242, hashtext($1))", [.text("ledger-migrate:" + schema)])
            }
            let s = quoteIdentifier(schema)
            try conn.execute(
                """
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
            var rechecked: [String] = []
            for (version, record) in applied.sorted(by: { $0.key < $1.key }) {
                guard let m = known[version] else {
                    throw LedgerError.migration(
                        "schema \(schema) has migration \(record.name) applied, which this build does not have (was it made by a newer ledger?)"
                    )
                }
                if m.checksum != record.checksum, Migration.formerChecksums[version]?.contains(record.checksum) == true
                {
                    try conn.query(
                        "UPDATE \(s).schema_migrations SET checksum = $1 WHERE version = $2",
                        [.text(m.checksum), .int4(Int32(version))])
                    rechecked.append(m.name)
                } else if m.checksum != record.checksum {
                    throw LedgerError.migration(
                        "\(m.name).sql was edited after it was applied to schema \(schema) (checksum \(record.checksum.prefix(12)) when applied, \(m.checksum.prefix(12)) now); restore the file and put the change in a new migration"
                    )
                }
            }
            let functions = self.functions
            if !functions.isEmpty {
                try conn.execute(
                    """
                    CREATE TABLE IF NOT EXISTS \(s).schema_functions (
                        name       text PRIMARY KEY,
                        checksum   text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
            }
            /// Records the text of `f` as the one applied (in the transaction that applied it).
            func record(_ f: SQLFunction, _ conn: isolated PostgresConnection) throws {
                try conn.query(
                    """
                    INSERT INTO \(s).schema_functions (name, checksum) VALUES ($1, $2)
                    ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()
                    """, [.text(f.name), .text(f.checksum)])
            }
            var done: [Migration] = []
            // Under `schema, pg_temp`: a function created with `SET search_path FROM CURRENT` keeps
            // that path, and a path that does not name pg_temp searches the session's temporary
            // tables first, so a writer's temporary `event_claims` would stand in for the log's
            // inside the function (0023 gave the functions made before this path too).
            for m in migrations where applied[m.version] == nil {
                try conn.transaction { conn in
                    try conn.execute("SET LOCAL search_path TO \(s), pg_temp")
                    try conn.execute(m.sql)
                    try conn.query(
                        "INSERT INTO \(s).schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                        [.int4(Int32(m.version)), .text(m.name), .text(m.checksum)])
                    // The functions it created from their files are current.
                    for f in m.functions { try record(f, conn) }
                }
                done.append(m)
            }
            // Each function's current text, where it changed since it was last applied (a schema
            // migrated before, or a function file edited since).
            var functionsApplied: [String] = []
            if !functions.isEmpty {
                let recorded = try conn.query("SELECT name, checksum FROM \(s).schema_functions")
                var current: [String: String] = [:]
                for r in 0..<recorded.count { current[recorded.string(r, 0)!] = recorded.string(r, 1)! }
                for f in functions where current[f.name] != f.checksum {
                    try conn.transaction { conn in
                        try conn.execute("SET LOCAL search_path TO \(s), pg_temp")
                        try conn.execute(f.sql)
                        try record(f, conn)
                    }
                    functionsApplied.append(f.name)
                }
            }
            return Outcome(
                applied: done, alreadyApplied: applied.count, functionsApplied: functionsApplied, rechecked: rechecked)
        }
    }
}
