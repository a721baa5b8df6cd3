import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
import LedgerProjection
import LedgerTesting
import Testing

/// The log's SQL functions are each written once (Sources/LedgerLog/Functions): what the database
/// runs is those files' text, a schema migrated before they moved there is accepted, a changed
/// file reaches every schema at its next migrate, and plain SQL tests (Tests/SQL) cover them.
@Suite("SQL functions", .timeLimit(.minutes(2)))
struct SQLFunctionTests {
    struct Declared: Hashable {
        var name: String
        var body: String
        var volatility: String
        var securityDefiner: Bool
    }

    /// Each `CREATE OR REPLACE FUNCTION` of the files: its name, its body between `$$`, its
    /// volatility (`s`, `i`, `v` as pg_proc writes them) and whether it is SECURITY DEFINER.
    static func declared() throws -> [Declared] {
        var out: [Declared] = []
        for f in try SQLFunction.eventLog() {
            var rest = Substring(f.sql)
            while let start = rest.range(of: "CREATE OR REPLACE FUNCTION ") {
                let afterName = rest[start.upperBound...]
                let name = String(afterName.prefix { $0 != "(" })
                guard let open = afterName.range(of: "$$"), let close = afterName[open.upperBound...].range(of: "$$")
                else { break }
                let header = afterName[..<open.lowerBound]
                let volatility = header.contains(" STABLE") ? "s" : header.contains(" IMMUTABLE") ? "i" : "v"
                out.append(
                    Declared(
                        name: name, body: String(afterName[open.upperBound..<close.lowerBound]), volatility: volatility,
                        securityDefiner: header.contains("SECURITY DEFINER")))
                rest = afterName[close.upperBound...]
            }
        }
        return out
    }

    @Test func whatTheDatabaseRunsIsTheFilesText() async throws {
        try await TestDatabase.withSchema("sqlfunctions") { owner in
            let conn = try await PostgresConnection.connect(
                owner.connectionString, applicationName: "test-sql-functions")
            defer { Task { await conn.close() } }
            let rows = try await conn.query(
                """
                SELECT p.proname, p.prosrc, p.provolatile::text, p.prosecdef::text FROM pg_proc p
                JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
                """, [.text(owner.schema)])
            let stored = Set(
                (0..<rows.count).map {
                    Declared(
                        name: rows.string($0, 0)!, body: rows.string($0, 1)!, volatility: rows.string($0, 2)!,
                        securityDefiner: rows.string($0, 3) == "true")
                })
            let declared = try Self.declared()
            #expect(declared.count >= 12)
            #expect(
                Set(declared) == stored,
                "in the database, not the files: \(stored.subtracting(declared).map(\.name)); in the files, not the database: \(Set(declared).subtracting(stored).map(\.name))"
            )
        }
    }

    /// No migration restates a function: each is created from its file by a `-- function:` line.
    @Test func noMigrationDefinesAFunctionItself() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for module in ["Sources/LedgerLog/Migrations", "Sources/LedgerProjection/Migrations"] {
            let dir = folder.appendingPathComponent(module)
            for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) where file.hasSuffix(".sql") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8).uppercased()
                #expect(
                    !text.contains("CREATE FUNCTION") && !text.contains("CREATE OR REPLACE FUNCTION"),
                    "\(module)/\(file) defines a function")
            }
        }
    }

    @Test func aSchemaMigratedBeforeTheMoveIsAcceptedAndAnEditedOneIsNot() async throws {
        try await TestDatabase.withSchema("sqlformer") { owner in
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-sql-former")
            defer { Task { await conn.close() } }
            let s = quoteIdentifier(owner.schema)
            let former = try #require(Migration.formerChecksums[11]?.first)
            _ = try await conn.query(
                "UPDATE \(s).schema_migrations SET checksum = $1 WHERE version = 11", [.text(former)])
            let outcome = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
            #expect(outcome.rechecked == ["0011_append_function"])
            let now = try await conn.query("SELECT checksum FROM \(s).schema_migrations WHERE version = 11").string(
                0, 0)
            #expect(now == (try Migration.eventLog()).first { $0.version == 11 }?.checksum)
            _ = try await conn.query("UPDATE \(s).schema_migrations SET checksum = 'edited' WHERE version = 11")
            await #expect(throws: LedgerError.self) {
                _ = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
            }
        }
    }

    /// Every function that sets its search_path names pg_temp last, so that a writer's temporary
    /// tables never stand in for the log's inside it: in a schema whose functions were made
    /// before (the schema alone), 0023 gives it to each, and a function applied again takes it
    /// from the path `ledger migrate` sets.
    @Test func functionsSearchTemporaryTablesLast() async throws {
        try await TestDatabase.withSchema("sqltemp") { owner in
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-sql-temp")
            defer { Task { await conn.close() } }
            let s = quoteIdentifier(owner.schema)
            let paths = """
                SELECT p.oid::regprocedure::text, c FROM pg_proc p CROSS JOIN LATERAL unnest(p.proconfig) AS c
                WHERE p.pronamespace = $1::regnamespace AND c LIKE 'search_path=%' ORDER BY 1
                """
            let made = try await conn.query(paths, [.text(owner.schema)])
            #expect(made.count >= 10)
            #expect((0..<made.count).allSatisfy { made.string($0, 1)?.hasSuffix(", pg_temp") == true })
            // As a schema migrated before 0023: each function's path the schema alone, and one
            // function's text older than its file.
            for r in 0..<made.count {
                // The function's signature as regprocedure prints it (schema-qualified outside the path).
                try await conn.execute("ALTER FUNCTION \(made.string(r, 0)!) SET search_path = \(s)")
            }
            _ = try await conn.query("DELETE FROM \(s).schema_migrations WHERE version = 23")
            _ = try await conn.query(
                "UPDATE \(s).schema_functions SET checksum = 'older' WHERE name = 'try_seal_pending'")
            let outcome = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
            #expect(outcome.applied.map(\.name) == ["0023_functions_search_temporary_tables_last"])
            #expect(outcome.functionsApplied == ["try_seal_pending"])
            let now = try await conn.query(paths, [.text(owner.schema)])
            #expect(now.count == made.count)
            for r in 0..<now.count {
                #expect(now.string(r, 1) == made.string(r, 1), "\(now.string(r, 0) ?? "?")")
            }
        }
    }

    @Test func aChangedFunctionReachesTheSchemaAtItsNextMigrate() async throws {
        try await TestDatabase.withSchema("sqlchanged") { owner in
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-sql-changed")
            defer { Task { await conn.close() } }
            let s = quoteIdentifier(owner.schema)
            let again = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
            #expect(again.functionsApplied.isEmpty, "nothing changed, yet \(again.functionsApplied) were applied")
            // As a schema whose append_events is an older text: the next migrate applies the file's.
            _ = try await conn.query("UPDATE \(s).schema_functions SET checksum = 'older' WHERE name = 'append_events'")
            try await conn.execute(
                "SET search_path TO \(s); CREATE OR REPLACE FUNCTION try_seal_pending() RETURNS boolean LANGUAGE sql AS $$ SELECT false $$"
            )
            _ = try await conn.query(
                "UPDATE \(s).schema_functions SET checksum = 'older' WHERE name = 'try_seal_pending'")
            let outcome = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
            #expect(outcome.functionsApplied == ["append_events", "try_seal_pending"])
            #expect(
                try await conn.query(
                    "SELECT prosrc FROM pg_proc WHERE proname = 'try_seal_pending' AND pronamespace = $1::regnamespace",
                    [.text(owner.schema)]
                ).string(0, 0)?.contains("pg_try_advisory_xact_lock") == true)
        }
    }

    /// Tests/SQL/*.sql in a migrated schema, each file in a transaction rolled back.
    @Test func thePlainSQLTestsPass() async throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SQL")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
            .sorted()
        #expect(!files.isEmpty)
        try await TestDatabase.withSchema("sqltests") { owner in
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-sql-plain")
            defer { Task { await conn.close() } }
            for file in files {
                let sql = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                try await conn.execute("BEGIN; SET LOCAL search_path TO \(quoteIdentifier(owner.schema))")
                do {
                    try await conn.execute(sql)
                } catch {
                    try? await conn.execute("ROLLBACK")
                    Issue.record("Tests/SQL/\(file): \(error)")
                    continue
                }
                try await conn.execute("ROLLBACK")
            }
        }
    }

    /// SQL's `chain_hash`, its form over texts computed once (`chain_hash_texts`, which the head
    /// trigger uses), and Swift's one layout (EventChain.appendCanonical) give the same hash for
    /// every event: with and without an idempotency key, text beyond ASCII, times with microseconds.
    @Test func sqlChainHashAgreesWithTheSwiftLayout() async throws {
        try await TestDatabase.withSchema("sqlchain") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([
                testEvent(
                    stream: "order:e-1", payload: .makeObject([("note", .string("支付成功 \u{1F600}")), ("n", .int(-7))]),
                    key: "k:ü"),
                testEvent(stream: "order:2"),
            ])
            let events = try await store.readAll(after: 0)
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-sql-chain")
            defer { Task { await conn.close() } }
            let s = quoteIdentifier(owner.schema)
            // As the trigger and append_events call it: with the schema as the search path.
            try await conn.execute("SET search_path TO \(s)")
            var previous = EventChain.genesis
            for e in events {
                let sql = try await conn.query(
                    """
                    SELECT encode(chain_hash(decode($1, 'hex'), e), 'hex'),
                           encode(chain_hash_texts(decode($1, 'hex'), e.position::text, e.event_id::text, e.stream_id,
                                  e.stream_version::text, e.event_type, e.schema_version::text,
                                  chain_microseconds(e.occurred_at), chain_microseconds(e.recorded_at), e.idempotency_key,
                                  e.payload::text, e.metadata::text), 'hex')
                    FROM \(s).events e WHERE position = $2
                    """,
                    [.text(previous.hexString), .int8(e.position)])
                let swift = EventChain.expectedHash(of: e, previous: previous)
                #expect(sql.string(0, 0) == swift.hexString, "position \(e.position)")
                #expect(sql.string(0, 1) == swift.hexString, "position \(e.position), from texts")
                previous = swift
            }
            #expect(events.count == 2)
        }
    }
}
