import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// The application's roles (migration 0004): what each may do to the log and its head.
@Suite("Roles", .timeLimit(.minutes(2)))
struct RolesTests {
    /// A row for position `head + 1` as a writer could insert it by hand: chained onto the head
    /// (or not), recorded at `recordedAt`.
    struct HandRow {
        var sql: String
        var parameters: [PostgresValue]

        init(schema: String, head: (position: Int64, hash: [UInt8]), recordedAt: Timestamp, chained: Bool) {
            let position = head.position + 1
            let id = UUID().uuidString.lowercased()
            let occurred = Timestamp("2026-03-31T08:15:00Z")!
            let payload = "{\"n\": 1}", metadata = "{}"
            let canonical = EventChain.canonicalBytes(
                position: position, eventId: id, stream: "by-hand", version: 0, type: "PaymentVerified",
                schemaVersion: 1, occurredAt: occurred, recordedAt: recordedAt, idempotencyKey: nil,
                payloadText: payload, metadataText: metadata)
            let hash =
                chained ? EventChain.hash(previous: head.hash, canonical: canonical) : [UInt8](repeating: 7, count: 32)
            // Claimed first, as every event must be (foreign key `events_claimed`).
            sql = """
                WITH claim AS (INSERT INTO \(quoteIdentifier(schema)).event_claims (event_id, stream_id, stream_version)
                               VALUES ($2::uuid, 'by-hand', 0) RETURNING event_id)
                INSERT INTO \(quoteIdentifier(schema)).events (position, event_id, stream_id, stream_version, event_type, schema_version,
                                                               payload, metadata, occurred_at, recorded_at, hash)
                SELECT $1, claim.event_id, 'by-hand', 0, 'PaymentVerified', 1, $3::jsonb, $4::jsonb, $5, $6, $7 FROM claim
                """
            parameters = [
                .int8(position), .text(id), .text(payload), .text(metadata),
                .timestamptz(microsecondsSince1970: occurred.microseconds),
                .timestamptz(microsecondsSince1970: recordedAt.microseconds), .bytea(hash),
            ]
        }
    }

    static func head(
        _ conn: PostgresConnection, _ schema: String
    ) async throws -> (position: Int64, hash: [UInt8], recordedAt: Timestamp) {
        let r = try await conn.query(
            "SELECT last_position, last_hash, last_recorded_at FROM \(quoteIdentifier(schema)).log_head")
        return (r.int64(0, 0)!, r.bytea(0, 1)!, Timestamp(r.string(0, 2)!)!)
    }

    static func refused(
        _ conn: PostgresConnection, _ sql: String, _ parameters: [PostgresValue] = [], _ states: Set<SQLState>
    ) async -> Bool {
        do {
            _ = try await conn.query(sql, parameters)
            return false
        } catch let e as PostgresError {
            return e.sqlState.map { states.contains($0) } ?? false
        } catch {
            return false
        }
    }

    @Test func theWriterCannotAlterTheLogOrItsHead() async throws {
        try await TestDatabase.withSchema("writerrole") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s"), testEvent(stream: "s")])
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            #expect(try await writer.query("SELECT current_user").string(0, 0) == "ledger_writer")
            let s = quoteIdentifier(owner.schema)
            let denied: Set<SQLState> = [.insufficientPrivilege]
            for sql in [
                "ALTER TABLE \(s).events DISABLE TRIGGER events_append_only",
                "ALTER TABLE \(s).events DISABLE TRIGGER USER",
                "ALTER TABLE \(s).events DISABLE TRIGGER events_advance_head",
                "DROP TRIGGER events_advance_head ON \(s).events",
                "UPDATE \(s).log_head SET last_recorded_at = '2099-12-31'",
                "UPDATE \(s).log_head SET last_position = last_position",
                "UPDATE \(s).events SET event_type = 'Refunded'",
                "DELETE FROM \(s).events", "TRUNCATE \(s).events",
                "SET session_replication_role = replica",
                // The seal's mark, under which the head trigger does not check rows again.
                "UPDATE \(s).seal_state SET sealing_xid = (pg_current_xact_id()::text)::bigint",
            ] {
                #expect(await Self.refused(writer, sql, [], denied), "\(sql) was not refused to the writer")
            }
            // Rows by hand at head + 1: one that does not chain, one from the future (2099).
            let head = try await Self.head(writer, owner.schema)
            let unchained = HandRow(
                schema: owner.schema, head: (head.position, head.hash), recordedAt: head.recordedAt, chained: false)
            #expect(await Self.refused(writer, unchained.sql, unchained.parameters, [.checkViolation]))
            let future = HandRow(
                schema: owner.schema, head: (head.position, head.hash), recordedAt: Timestamp("2099-12-31T00:00:00Z")!,
                chained: true)
            #expect(await Self.refused(writer, future.sql, future.parameters, [.checkViolation]))
            let past = HandRow(
                schema: owner.schema, head: (head.position, head.hash), recordedAt: Timestamp("2001-01-01T00:00:00Z")!,
                chained: true)
            #expect(await Self.refused(writer, past.sql, past.parameters, [.checkViolation]))
            #expect(try await Self.head(writer, owner.schema).position == 2)
            // Nothing jammed: appends go on, the chain verifies, the head names the last row.
            let more = try await store.append([testEvent(stream: "s")])
            #expect(more.map(\.position) == [3])
            #expect(try await store.verifyChain().isIntact)
        }
    }

    @Test func aRowInsertedByHandAtTheHeadMovesTheHeadInsteadOfJammingTheLog() async throws {
        try await TestDatabase.withSchema("handrow") { owner in
            let writerConfig = owner.connecting(as: .writer)
            let store = try await EventStore.open(writerConfig)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let writer = try await PostgresConnection.connect(
                writerConfig.connectionString, applicationName: "ledger-test-writer")
            defer { Task { await writer.close() } }
            try await writer.execute("BEGIN")
            let head = try await Self.head(writer, owner.schema)
            let clock = Timestamp(try await writer.query("SELECT clock_timestamp()").string(0, 0)!)!
            let row = HandRow(
                schema: owner.schema, head: (head.position, head.hash), recordedAt: max(clock, head.recordedAt),
                chained: true)
            _ = try await writer.query(row.sql, row.parameters)
            try await writer.execute("COMMIT")
            #expect(try await store.headPosition() == 2)
            let next = try await store.append([testEvent(stream: "s")])
            #expect(next.map(\.position) == [3])
            let report = try await store.verifyChain()
            #expect(report.isIntact, "\(report.problem ?? "")")
        }
    }

    /// The head trigger does not check again the rows a seal wrote (it hashed them from their
    /// claims), and only those: a writer that seals in its transaction, then inserts a row of its
    /// own that does not chain, is refused as any writer is.
    @Test func aRowByHandAfterASealInTheSameTransactionIsStillChecked() async throws {
        try await TestDatabase.withSchema("sealmark") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let s = quoteIdentifier(owner.schema)
            // A pending event for the seal to write, so that it inserts rows of its own.
            try await TestDatabase.claimPending(on: writer, schema: owner.schema, stream: "pending", version: 0)
            try await writer.execute("BEGIN")
            #expect(try await writer.query("SELECT \(s).seal_pending()").int64(0, 0) == 1)
            let head = try await Self.head(writer, owner.schema)
            let unchained = HandRow(
                schema: owner.schema, head: (head.position, head.hash), recordedAt: head.recordedAt, chained: false)
            #expect(await Self.refused(writer, unchained.sql, unchained.parameters, [.checkViolation]))
            try await writer.execute("ROLLBACK")
            #expect(try await Self.head(writer, owner.schema).position == 1)
            // The seal itself, committed, wrote a row that chains.
            #expect(try await writer.query("SELECT \(s).seal_pending()").int64(0, 0) == 1)
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            #expect(try await admin.query("SELECT sealing_xid IS NULL FROM \(s).seal_state").bool(0, 0) == true)
            let report = try await store.verifyChain()
            #expect(report.isIntact && report.verified == 2, "\(report.problem ?? "")")
        }
    }

    @Test func recordedTimeIsTheServerClockAndNeverGoesBack() async throws {
        try await TestDatabase.withSchema("clock") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            let before = Timestamp(try await admin.query("SELECT clock_timestamp()").string(0, 0)!)!
            for i in 0..<5 { _ = try await store.append([testEvent(stream: "s\(i)")]) }
            let after = Timestamp(try await admin.query("SELECT clock_timestamp()").string(0, 0)!)!
            let times = try await store.readAll(after: 0).map(\.recordedAt)
            #expect(times.count == 5)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(times.allSatisfy { before <= $0 && $0 <= after })
        }
    }

    @Test func readOnlyRolesCannotWriteAndTheProjectorOnlyWritesTheReadModels() async throws {
        try await TestDatabase.withSchema("readroles") { owner in
            let s = quoteIdentifier(owner.schema)
            for role in [LedgerRole.reader, .auditor, .projector] {
                let conn = try await PostgresConnection.connect(
                    owner.connecting(as: role).connectionString, applicationName: "ledger-test-role")
                #expect(try await conn.query("SELECT current_user").string(0, 0) == role.roleName)
                #expect(try await conn.query("SELECT count(*) FROM \(s).events").int64(0, 0) == 0)
                for sql in [
                    "INSERT INTO \(s).events (position, event_id, stream_id, stream_version, event_type, schema_version, payload, occurred_at, recorded_at, hash) VALUES (1, gen_random_uuid(), 's', 0, 'X', 1, '{}', now(), now(), decode(repeat('00', 32), 'hex'))",
                    "UPDATE \(s).log_head SET last_position = 0", "ALTER TABLE \(s).events DISABLE TRIGGER USER",
                ] {
                    #expect(await Self.refused(conn, sql, [], [.insufficientPrivilege]), "\(role): \(sql)")
                }
                let writesReadModels =
                    !(await Self.refused(conn, "DELETE FROM \(s).rm_orders", [], [.insufficientPrivilege]))
                #expect(writesReadModels == (role == .projector), "\(role)")
                await conn.close()
            }
        }
    }
}
