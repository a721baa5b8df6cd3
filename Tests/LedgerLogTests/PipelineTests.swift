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
        #expect(try await conn.query("SELECT coalesce(string_agg(x::text, ',' ORDER BY x), '') FROM t").string(0, 0) == "1")
        let next = try await conn.pipeline([Statement("INSERT INTO t VALUES (3) RETURNING x")])
        #expect(next.first?.int64(0, 0) == 3)
        #expect(try await conn.query("SELECT count(*) FROM t").int64(0, 0) == 2)
    }
}
