import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
import LedgerTesting
import Testing

/// `append_events_at_commit(jsonb)`: a writer in SQL that finds the append lock taken commits its
/// events pending and is answered without positions; the next writer to take the lock seals them.
/// Every guarantee of `append_events` holds, pending or not.
@Suite("append_events_at_commit", .timeLimit(.minutes(2)))
struct AppendAtCommitFunctionTests {
    typealias Answer = (position: Int64?, version: Int64, stored: Bool)

    static func append(_ conn: PostgresConnection, _ schema: String, _ lines: [String]) async throws -> [Answer] {
        let r = try await conn.query(
            "SELECT position, stream_version, already_stored FROM \(quoteIdentifier(schema)).append_events_at_commit($1::jsonb)",
            [.jsonb("[" + lines.joined(separator: ",") + "]")])
        // A null version (never expected) reads as -1: a failed expectation, not a crash of the run.
        return (0..<r.count).map { (r.int64($0, 0), r.int64($0, 1) ?? -1, r.string($0, 2) == "t") }
    }

    static func line(
        _ stream: String, key: String? = nil, expected: String = "\"any\"", amount: Int = 1, id: UUID? = nil
    ) -> String {
        AppendFunctionTests.line(stream, key: key, expected: expected, amount: amount, id: id)
    }

    static func count(_ conn: PostgresConnection, _ sql: String) async throws -> Int64? {
        try await conn.query(sql).int64(0, 0)
    }

    @Test func aWriterThatFindsTheLockFreeGetsItsPositions() async throws {
        try await TestDatabase.withSchema("sqlatcommitfree") { owner in
            let conn = try await PostgresConnection.connect(
                owner.connecting(as: .writer).connectionString, applicationName: "test-sql-at-commit")
            defer { Task { await conn.close() } }
            let id = UUID()
            let first = try await Self.append(conn, owner.schema, [Self.line("a", key: "k-1"), Self.line("a", id: id)])
            #expect(first.map(\.position) == [1, 2] && first.map(\.version) == [0, 1])
            #expect(first.allSatisfy { !$0.stored })
            let again = try await Self.append(conn, owner.schema, [Self.line("a", id: id)])
            #expect(again.map(\.position) == [2] && again.allSatisfy { $0.stored })
        }
    }

    @Test func withTheLockTakenItAnswersAtCommitAndTheNextWriterSeals() async throws {
        try await SealerTests.withContendedLog("sqlatcommit") { c in
            let (store, holder, watcher, s) = (c.store, c.holder, c.watcher, c.s)
            let schema = c.owner.schema
            let conn = try await PostgresConnection.connect(
                c.owner.connecting(as: .writer).connectionString, applicationName: "test-sql-at-commit")
            defer { Task { await conn.close() } }
            try await SealerTests.holdAppendLock(holder, schema: schema)
            let id = UUID()
            // Stream "s" holds version 0 (position 1); a new stream; the same event twice in a batch.
            let answered = try await Self.append(
                conn, schema,
                [Self.line("s", key: "p-1", expected: "0"), Self.line("t", id: id), Self.line("t", id: id)])
            #expect(answered.map(\.position) == [nil, nil, nil])
            #expect(answered.map(\.version) == [1, 0, 0])
            #expect(answered.map(\.stored) == [false, false, true])
            #expect(try await Self.count(watcher, "SELECT count(*) FROM \(s).pending_events") == 2)
            // Committed and claimed, not in the log: readers do not see them, the head has not moved.
            #expect(try await store.headPosition() == 1)
            #expect(try await store.readAll(after: 0).count == 1)

            // A retry while pending (the same request, its expected version now passed); a version
            // that counts the pending event; a key reused with other content. The failures write
            // nothing.
            let retry = try await Self.append(conn, schema, [Self.line("s", key: "p-1", expected: "0")])
            #expect(retry.map(\.position) == [nil] && retry.map(\.version) == [1] && retry.allSatisfy { $0.stored })
            let version = await AppendFunctionTests.sqlState {
                _ = try await Self.append(conn, schema, [Self.line("u"), Self.line("s", expected: "0")])
            }
            #expect(version == "LV409")
            let key = await AppendFunctionTests.sqlState {
                _ = try await Self.append(conn, schema, [Self.line("u"), Self.line("x", key: "p-1")])
            }
            #expect(key == "LK409")
            let payload = await AppendFunctionTests.sqlState {
                _ = try await Self.append(conn, schema, [Self.line("t", amount: 2, id: id)])
            }
            #expect(payload == "LK409")
            #expect(try await Self.count(watcher, "SELECT count(*) FROM \(s).pending_events") == 2)
            #expect(try await Self.count(watcher, "SELECT count(*) FROM \(s).event_claims") == 3)
            // The version the pending event gave the stream is the one to expect.
            let onPending = try await Self.append(conn, schema, [Self.line("s", key: "p-2", expected: "1")])
            #expect(onPending.map(\.position) == [nil] && onPending.map(\.version) == [2])

            // The lock is free again: the next writer seals what is pending, in commit order,
            // before its own event.
            try await holder.execute("COMMIT")
            let next = try await Self.append(conn, schema, [Self.line("u")])
            #expect(next.map(\.position) == [5])
            #expect(try await Self.count(watcher, "SELECT count(*) FROM \(s).pending_events") == 0)
            let log = try await store.readAll(after: 0)
            #expect(log.map(\.stream) == ["s", "s", "t", "s", "u"] && log.map(\.version) == [0, 1, 0, 2, 0])
            #expect(log[2].eventId == id)
            let sealed = try await Self.append(conn, schema, [Self.line("s", key: "p-1"), Self.line("t", id: id)])
            #expect(sealed.map(\.position) == [2, 3] && sealed.allSatisfy { $0.stored })
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// Writers in SQL answered at commit, the library's store beside them, on their own streams and
    /// one shared stream: every event sealed once, gap-free, each stream's versions in log order.
    @Test func concurrentWritersAnsweredAtCommitStayGapFreeOnOneChain() async throws {
        try await TestDatabase.withSchema("sqlatcommitrace") { owner in
            let writer = owner.connecting(as: .writer)
            let store = try await EventStore.open(writer)
            defer { Task { await store.close() } }
            let answers = try await withThrowingTaskGroup(of: [Answer].self) { group in
                for w in 0..<4 {
                    group.addTask {
                        let conn = try await PostgresConnection.connect(
                            writer.connectionString, applicationName: "test-sql-at-commit-\(w)")
                        var answers: [Answer] = []
                        for i in 0..<15 {
                            answers += try await Self.append(
                                conn, owner.schema,
                                [Self.line("sql-\(w)", amount: i), Self.line("shared", key: "w\(w)-\(i)", amount: i)])
                            // A retry of the call before, as a client that lost the answer would.
                            if i % 5 == 4 {
                                let again = try await Self.append(
                                    conn, owner.schema, [Self.line("shared", key: "w\(w)-\(i)", amount: i)])
                                #expect(again.allSatisfy { $0.stored })
                            }
                        }
                        await conn.close()
                        return answers
                    }
                }
                group.addTask {
                    for i in 0..<15 {
                        _ = try await store.append([
                            testEvent(stream: "lib", payload: .makeObject([("i", .int(Int64(i)))])),
                            testEvent(stream: "shared"),
                        ])
                    }
                    return []
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(answers.count == 120 && answers.allSatisfy { !$0.stored })
            // What the last writers left pending waits for the next one: here, the owner's seal.
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            _ = try await admin.query("SELECT \(quoteIdentifier(owner.schema)).seal_pending()")
            let log = try await store.readAll(after: 0, limit: 1000)
            #expect(log.map(\.position) == Array(1...150))
            #expect(Set(log.map(\.eventId)).count == 150)
            for stream in ["shared", "lib", "sql-0", "sql-3"] {
                #expect(
                    log.filter { $0.stream == stream }.map(\.version) == Array(0..<Int64(stream == "shared" ? 75 : 15)))
            }
            #expect(try await store.verifyChain().isIntact)
        }
    }
}
