import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
import LedgerTesting
import Testing

/// `append_events(jsonb)`: the server-side append any language can call as ledger_writer keeps the
/// log's guarantees, and its rows interleave with the Swift library's on one verified chain.
@Suite("append_events", .timeLimit(.minutes(2)))
struct AppendFunctionTests {
    static func line(
        _ stream: String, key: String? = nil, expected: String = "\"any\"", amount: Int = 1, id: UUID? = nil
    ) -> String {
        let idText = id.map { "\"eventId\":\"\($0.lowercased)\"," } ?? ""
        let keyText = key.map { ",\"idempotencyKey\":\"\($0)\"" } ?? ""
        return
            "{\(idText)\"stream\":\"\(stream)\",\"type\":\"PaymentVerified\",\"payload\":{\"n\":\(amount),\"note\":\"é ü\"},\"metadata\":{\"source\":\"psql\"},\"occurredAt\":\"2026-03-31T08:15:00.123456Z\",\"expectedVersion\":\(expected)\(keyText)}"
    }

    static func append(
        _ conn: PostgresConnection, _ schema: String, _ lines: [String]
    ) async throws -> [(position: Int64, version: Int64, stored: Bool)] {
        let r = try await conn.query(
            "SELECT position, stream_version, already_stored FROM \(quoteIdentifier(schema)).append_events($1::jsonb)",
            [.jsonb("[" + lines.joined(separator: ",") + "]")])
        return (0..<r.count).map { (r.int64($0, 0)!, r.int64($0, 1)!, r.string($0, 2) == "t") }
    }

    static func sqlState(_ body: () async throws -> Void) async -> String? {
        do { try await body() } catch let e as PostgresError { return e.sqlState?.code } catch { return "other" }
        return nil
    }

    /// The chain functions are inlined where they are called: declared IMMUTABLE over STABLE
    /// built-ins (`convert_to`, `extract`), each call parsed and planned their bodies again in every
    /// transaction, about a quarter of an append's server time (migration 0015).
    @Test func theChainFunctionsAreInlinedIntoTheirCallers() async throws {
        try await TestDatabase.withSchema("inlined") { owner in
            let conn = try await PostgresConnection.connect(owner.connectionString, applicationName: "test-inlined")
            defer { Task { await conn.close() } }
            let s = quoteIdentifier(owner.schema)
            // As the trigger and append_events call it: with the schema as the search path.
            try await conn.execute("SET search_path TO \(s)")
            func explain(_ sql: some StringProtocol) async throws -> [String] {
                let plan = try await conn.query("EXPLAIN (VERBOSE, COSTS OFF) \(sql)")
                return (0..<plan.count).compactMap { plan.string($0, 0) }
            }
            let text = try await explain("SELECT chain_hash('\\x00'::bytea, e) FROM events e").joined(separator: "\n")
            #expect(text.contains("sha256(") && text.contains("convert_to("), "\(text)")
            #expect(!text.contains("chain_"), "\(text)")
            // The head trigger's own re-hash (migration 0025), as the schema has it, over the table
            // instead of the statement's rows: chain_hash_texts inlined over texts a subquery
            // computes once, apart (its own node: flattened, each text would be made twice).
            let source = try await conn.query("SELECT prosrc FROM pg_proc WHERE oid = 'advance_head()'::regprocedure")
            let trigger = try #require(source.string(0, 0))
            let start = try #require(trigger.range(of: "SELECT c.position INTO broken"))
            let end = try #require(trigger.range(of: "LIMIT 1", range: start.upperBound..<trigger.endIndex))
            let recheck = trigger[start.lowerBound..<end.upperBound].replacingOccurrences(of: " INTO broken", with: "")
                .replacingOccurrences(of: "new_rows", with: "events")
                .replacingOccurrences(of: "head.last_hash", with: "'\\x00'::bytea")
            let textsPlan = try await explain(recheck)
            let joined = textsPlan.joined(separator: "\n")
            #expect(joined.contains("sha256(") && joined.contains("convert_to("), "\(joined)")
            #expect(!joined.contains("chain_"), "\(joined)")
            let result = textsPlan.firstIndex { $0.hasSuffix("->  Result") }
            let texts = result.flatMap { textsPlan.indices.contains($0 + 1) ? textsPlan[$0 + 1] : nil } ?? ""
            for field in [
                "(r.\"position\")::text", "(r.event_id)::text", "(r.stream_version)::text", "(r.schema_version)::text",
                "r.occurred_at", "r.recorded_at", "(r.payload)::text", "(r.metadata)::text",
            ] {
                #expect(texts.contains(field), "\(field) in \(joined)")
            }
        }
    }

    @Test func appendsChainOntoTheLibrarysRowsAndRetriesReturnTheOriginalPositions() async throws {
        try await TestDatabase.withSchema("sqlappend") { owner in
            let writer = owner.connecting(as: .writer)
            let store = try await EventStore.open(writer)
            defer { Task { await store.close() } }
            let conn = try await PostgresConnection.connect(writer.connectionString, applicationName: "test-sql-writer")
            defer { Task { await conn.close() } }
            _ = try await store.append([testEvent(stream: "a"), testEvent(stream: "b")])
            let id = UUID()
            let batch = [
                Self.line("a", expected: "0"), Self.line("c", key: "k-1", expected: "\"no-stream\""),
                Self.line("c", id: id),
            ]
            let first = try await Self.append(conn, owner.schema, batch)
            #expect(first.map(\.position) == [3, 4, 5])
            #expect(first.map(\.version) == [1, 0, 1])
            #expect(first.allSatisfy { !$0.stored })
            _ = try await store.append([testEvent(stream: "a")])
            // The same events again (by key, the same request though the stream exists now, and by
            // id): the original positions, nothing new.
            let retry = try await Self.append(
                conn, owner.schema, [Self.line("c", key: "k-1", expected: "\"no-stream\""), Self.line("c", id: id)])
            #expect(retry.map(\.position) == [4, 5] && retry.allSatisfy(\.stored))
            #expect(try await TestDatabase.storedEventRows(owner) == 6)
            let report = try await store.verifyChain()
            #expect(report.isIntact, "\(report.problem ?? "")")
            #expect(report.verified == 6)
            // The library reads them back like its own.
            #expect(try await store.readStream("c").map(\.version) == [0, 1])
        }
    }

    @Test func conflictsWriteNothing() async throws {
        try await TestDatabase.withSchema("sqlconflict") { owner in
            let writer = owner.connecting(as: .writer)
            let conn = try await PostgresConnection.connect(writer.connectionString, applicationName: "test-sql-writer")
            defer { Task { await conn.close() } }
            _ = try await Self.append(conn, owner.schema, [Self.line("a", key: "k-1")])
            let version = await Self.sqlState {
                _ = try await Self.append(
                    conn, owner.schema, [Self.line("b"), Self.line("a", expected: "\"no-stream\"")])
            }
            #expect(version == "LV409")
            let wrongVersion = await Self.sqlState {
                _ = try await Self.append(conn, owner.schema, [Self.line("a", expected: "5")])
            }
            #expect(wrongVersion == "LV409")
            let key = await Self.sqlState {
                _ = try await Self.append(conn, owner.schema, [Self.line("b"), Self.line("a", key: "k-1", amount: 2)])
            }
            #expect(key == "LK409")
            let malformed = await Self.sqlState {
                _ = try await Self.append(conn, owner.schema, ["{\"stream\":\"a\"}"])
            }
            #expect(malformed == "23502")
            #expect(try await TestDatabase.storedEventRows(owner) == 1)
            // The id of one stored event and the key of another (the earlier one, same content): a
            // conflict, as the library says, not a retry of either.
            let other = UUID()
            _ = try await Self.append(conn, owner.schema, [Self.line("z", id: other)])
            let twoEvents = await Self.sqlState {
                _ = try await Self.append(conn, owner.schema, [Self.line("a", key: "k-1", id: other)])
            }
            #expect(twoEvents == "LK409")
            #expect(try await TestDatabase.storedEventRows(owner) == 2)
        }
    }

    /// Another writer's claim on the same stream version commits while append_events waits on it:
    /// the claim finds the conflict, seals the other event and decides again on the next version.
    @Test func aClaimLostToACommittingWriterIsDecidedAgain() async throws {
        try await TestDatabase.withSchema("sqlclaimrace") { owner in
            let writer = owner.connecting(as: .writer)
            let other = try await PostgresConnection.connect(writer.connectionString, applicationName: "test-sql-other")
            defer { Task { await other.close() } }
            let conn = try await PostgresConnection.connect(writer.connectionString, applicationName: "test-sql-writer")
            defer { Task { await conn.close() } }
            // The other writer claims version 0 of "s" and keeps its transaction open.
            try await other.execute("BEGIN")
            try await TestDatabase.claimPending(on: other, schema: owner.schema, stream: "s", version: 0)
            let appending = Task { try await Self.append(conn, owner.schema, [Self.line("s")]) }
            // append_events waits on the other writer's claim (its own session shows it waiting).
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            var polls = 0
            while try await admin.query(
                """
                SELECT count(*) FROM pg_stat_activity WHERE application_name = 'test-sql-writer' AND wait_event_type = 'Lock'
                """
            ).int64(0, 0) != 1 && polls < 6000 {
                try await Task.sleep(for: .milliseconds(10))
                polls += 1
            }
            // Had it not waited, it would have sealed the other event first: no conflict tested.
            #expect(polls < 6000, "append_events never waited on the other writer's claim")
            try await other.execute("COMMIT")
            let appended = try await appending.value
            #expect(appended.map(\.version) == [1], "append_events did not decide again after losing version 0")
            #expect(appended.map(\.position) == [2])
            #expect(try await TestDatabase.storedEventRows(owner) == 2)
            let store = try await EventStore.open(writer)
            defer { Task { await store.close() } }
            #expect(try await store.readStream("s", limit: 10).map(\.version) == [0, 1])
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// append_events claims events without a subtransaction each: a row written in a
    /// subtransaction carries the subtransaction's id, not the transaction's. (A batch of more than
    /// 64 subtransactions overflows the session's cache and slows every other session's snapshots.)
    @Test func eventsAreClaimedWithoutSubtransactions() async throws {
        try await TestDatabase.withSchema("sqlnosubxact") { owner in
            let conn = try await PostgresConnection.connect(
                owner.connecting(as: .writer).connectionString, applicationName: "test-sql-writer")
            defer { Task { await conn.close() } }
            try await conn.execute("BEGIN")
            let appended = try await Self.append(conn, owner.schema, (0..<70).map { Self.line("s-\($0)") })
            let rows = try await conn.query(
                """
                SELECT count(*) FILTER (WHERE c.xmin = pg_current_xact_id()::xid), count(*) FROM \(quoteIdentifier(owner.schema)).event_claims c
                """)
            try await conn.execute("COMMIT")
            #expect(appended.count == 70)
            #expect(rows.int64(0, 1) == 70)
            #expect(rows.int64(0, 0) == 70, "claims were written by subtransactions")
        }
    }

    @Test func concurrentSQLAndLibraryAppendsStayGapFreeOnOneChain() async throws {
        try await TestDatabase.withSchema("sqlconcurrent") { owner in
            let writer = owner.connecting(as: .writer)
            let store = try await EventStore.open(writer)
            defer { Task { await store.close() } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<3 {
                    group.addTask {
                        let conn = try await PostgresConnection.connect(
                            writer.connectionString, applicationName: "test-sql-\(w)")
                        for i in 0..<20 {
                            _ = try await Self.append(
                                conn, owner.schema, [Self.line("sql-\(w)", amount: i), Self.line("shared", amount: i)])
                        }
                        await conn.close()
                    }
                }
                group.addTask {
                    for i in 0..<20 {
                        _ = try await store.append([
                            testEvent(stream: "lib", payload: .makeObject([("i", .int(Int64(i)))])),
                            testEvent(stream: "shared"),
                        ])
                    }
                }
                try await group.waitForAll()
            }
            let positions = try await store.readAll(after: 0, limit: 1000).map(\.position)
            #expect(positions == Array(1...160))
            #expect(try await store.readStream("shared", limit: 1000).map(\.version) == Array(0..<80))
            #expect(try await store.verifyChain().isIntact)
        }
    }
}
