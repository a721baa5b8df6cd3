import LedgerPostgres
import LedgerTesting
import Testing

/// A pipeline's statements after its last COMMIT run in an implicit transaction that the server
/// commits at the sync point, after they have returned their rows. The append relies on that
/// commit (its `seal_events` call), so a commit that fails there must fail the pipeline.
@Suite("Pipelines", .timeLimit(.minutes(2)))
struct PipelineTests {
    @Test func aCommitThatFailsAtTheSyncPointFailsThePipeline() async throws {
        let conn = try await PostgresConnection.connect(try await TestDatabase.url(), applicationName: "test-pipeline")
        defer { Task { await conn.close() } }
        // A deferred constraint is checked at commit, after the statements have answered.
        try await conn.execute("CREATE TEMP TABLE t (x int UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        do {
            let results = try await conn.pipeline([
                Statement("BEGIN"), Statement("INSERT INTO t VALUES (1)"), Statement("COMMIT"),
                Statement("INSERT INTO t VALUES (2), (2) RETURNING x"),
            ])
            Issue.record("a pipeline whose commit failed answered \(results.map(\.count))")
        } catch let error as PostgresError {
            #expect(error.isUniqueViolation)
            #expect(error.statement == "INSERT INTO t VALUES (2), (2) RETURNING x")
        }
        // The explicit transaction committed; the implicit one did not. The connection goes on.
        #expect(
            try await conn.query("SELECT coalesce(string_agg(x::text, ',' ORDER BY x), '') FROM t").string(0, 0) == "1")
        let next = try await conn.pipeline([Statement("INSERT INTO t VALUES (3) RETURNING x")])
        #expect(next.first?.int64(0, 0) == 3)
        #expect(try await conn.query("SELECT count(*) FROM t").int64(0, 0) == 2)
    }

    /// Segments of one pipeline, each ending at its own sync point: each is its own implicit
    /// transaction, answered as it ends; a failing one does not stop the ones after it, and its
    /// error is the pipeline's once all are read.
    @Test func segmentsEndAtSyncPointsOfTheirOwn() async throws {
        let conn = try await PostgresConnection.connect(try await TestDatabase.url(), applicationName: "test-pipeline")
        defer { Task { await conn.close() } }
        try await conn.execute("CREATE TEMP TABLE s (x int)")
        let (received, all) = try await conn.withIsolation { conn in
            var received: [[Int64?]] = []
            let all = try conn.pipeline(
                segments: [
                    [Statement("SELECT pg_current_xact_id()::text::int8")],
                    [Statement("INSERT INTO s VALUES (1)"), Statement("SELECT pg_current_xact_id()::text::int8")],
                ], received: { results in received.append(results.map { $0.int64(0, 0) }) })
            return (received, all.count)
        }
        #expect(received.count == 2 && all == 2)
        // Two transactions: the second segment's id is not the first's.
        #expect(received[0][0] != nil && received[1][1] != nil && received[0][0] != received[1][1])
        let failed = try await conn.withIsolation { conn in
            var received: [[Int64?]] = []
            do {
                _ = try conn.pipeline(
                    segments: [
                        [Statement("INSERT INTO s VALUES (2)"), Statement("SELECT 1 / 0")],
                        [Statement("INSERT INTO s VALUES (3) RETURNING x")],
                    ], received: { results in received.append(results.map { $0.int64(0, 0) }) })
                return (received, nil as PostgresError?)
            } catch let error as PostgresError {
                return (received, error)
            }
        }
        #expect(failed.1?.message.contains("division by zero") == true, "a pipeline with a failing segment answered")
        #expect(failed.0 == [[3]])
        #expect(try await conn.query("SELECT string_agg(x::text, ',' ORDER BY x) FROM s").string(0, 0) == "1,3")
    }
}

/// Settings a connection gives its session, again after a reconnect. The writer uses them for
/// generic plans: with array parameters of a few elements PostgreSQL otherwise plans a prepared
/// statement again at every execution.
@Suite("Session settings", .timeLimit(.minutes(2)))
struct SessionSettingsTests {
    /// Runs a prepared statement with an array parameter eight times and returns how the session
    /// planned it: (generic plans, custom plans), from `pg_prepared_statements`.
    private func plans(on conn: PostgresConnection) async throws -> (generic: Int64, custom: Int64) {
        try await conn.execute("CREATE TEMP TABLE IF NOT EXISTS k (id bigint PRIMARY KEY)")
        let sql = "SELECT count(*) FROM k WHERE id = ANY ($1::int8[])"
        for i in 0..<8 { _ = try await conn.query(sql, [.int8Array([Int64(i)])], prepared: true) }
        let row = try await conn.query(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", [.text(sql)])
        return (row.int64(0, 0) ?? -1, row.int64(0, 1) ?? -1)
    }

    @Test func settingsHoldForTheSessionAndAfterAReconnect() async throws {
        let url = try await TestDatabase.url()
        let conn = try await PostgresConnection.connect(
            url, applicationName: "test-settings", settings: ["plan_cache_mode": "force_generic_plan"])
        defer { Task { await conn.close() } }
        #expect(try await conn.query("SHOW plan_cache_mode").string(0, 0) == "force_generic_plan")
        let forced = try await plans(on: conn)
        #expect(forced.generic == 8 && forced.custom == 0)
        try await conn.reconnect()
        #expect(try await conn.query("SHOW plan_cache_mode").string(0, 0) == "force_generic_plan")

        // Without the setting, the same statement is planned again at every execution.
        let plain = try await PostgresConnection.connect(url, applicationName: "test-settings")
        defer { Task { await plain.close() } }
        #expect(try await plain.query("SHOW plan_cache_mode").string(0, 0) == "auto")
        #expect(try await plans(on: plain).custom == 8)
    }
}
