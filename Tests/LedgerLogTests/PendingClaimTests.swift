import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// A pending event is its claim, with its content: where the sealer looks for it (the writers'
/// transaction ids, `seal_state`), what the database refuses, and the pending events of a log
/// migrated from the layout with a table of them.
@Suite("Pending claims", .timeLimit(.minutes(2)))
struct PendingClaimTests {
    /// A writer whose transaction had its id when a seal ran, and committed after it, is sealed
    /// by the next seal: the seal recorded it as running.
    @Test func aClaimCommittedAfterASealThatSawItsWriterRunningIsSealedNext() async throws {
        try await TestDatabase.withSchema("runningclaim") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let s = quoteIdentifier(owner.schema)
            try await writer.execute("BEGIN")
            // The writer's transaction takes its id, then a later one commits, so a seal's snapshot
            // lists the writer among its running transactions (not above them all).
            _ = try await writer.query("SELECT pg_current_xact_id()")
            _ = try await store.append([testEvent(stream: "t")])
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            #expect(try await admin.query("SELECT \(s).seal_pending()").int64(0, 0) == 0)
            try await TestDatabase.claimPending(on: writer, schema: owner.schema, stream: "s", version: 1)
            try await writer.execute("COMMIT")
            #expect(try await store.pendingCount() == 1)
            let next = try await store.append([testEvent(stream: "s")])
            #expect(next.map(\.position) == [4] && next.map(\.version) == [2])
            #expect(try await store.pendingCount() == 0)
            let log = try await store.readAll(after: 0)
            #expect(log.map(\.stream) == ["s", "t", "s", "s"] && log.map(\.version) == [0, 0, 1, 2])
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// A pending claim names its own writer's transaction: one with another id (which the sealer
    /// would not look at) is refused at commit, and so is one without an id. The writer may not name
    /// the column at all; the owner, whom the grants do not stop, meets the check at commit.
    @Test func aPendingClaimWithAnotherTransactionsIdIsRefused() async throws {
        try await TestDatabase.withSchema("forgedxid") { owner in
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let ownerSession = try await PostgresConnection.connect(
                owner.connectionString, applicationName: "ledger-test-owner")
            defer { Task { await ownerSession.close() } }
            let s = quoteIdentifier(owner.schema)
            for (conn, xid) in [(writer, "0"), (writer, "NULL"), (ownerSession, "0"), (ownerSession, "NULL")] {
                await #expect(throws: PostgresError.self) {
                    _ = try await conn.query(
                        """
                        INSERT INTO \(s).event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload,
                                                       metadata, occurred_at, writer_xid)
                        VALUES (gen_random_uuid(), 'f', 0, 'PaymentVerified', 1, '{"n": 1}', '{}', '2026-03-31T08:15:00Z', \(xid))
                        """)
                }
            }
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            #expect(try await admin.query("SELECT count(*) FROM \(s).event_claims").int64(0, 0) == 0)
        }
    }

    /// A log restored on another cluster keeps the seal state its first cluster recorded, whose
    /// transaction ids this one does not continue: its pending claims are still found and sealed.
    @Test func aSealStateFromAClusterAheadOfThisOneFindsEveryClaim() async throws {
        try await TestDatabase.withSchema("restored") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(owner.schema)
            _ = try await admin.query(
                "UPDATE \(s).seal_state SET next_xid = (pg_current_xact_id()::text)::bigint + 5000000, running = '{}'")
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            try await TestDatabase.claimPending(on: writer, schema: owner.schema, stream: "s", version: 1)
            #expect(try await store.pendingCount() == 1)
            let next = try await store.append([testEvent(stream: "s")])
            #expect(next.map(\.position) == [3] && next.map(\.version) == [2])
            #expect(try await store.pendingCount() == 0)
            // A writer may not name a claim's order: it cannot place a pending event before others.
            await #expect(throws: PostgresError.self) {
                _ = try await writer.query(
                    """
                    INSERT INTO \(s).event_claims (event_id, stream_id, stream_version, event_type, schema_version, payload,
                                                   metadata, occurred_at, seq)
                    VALUES (gen_random_uuid(), 's', 3, 'PaymentVerified', 1, '{"n": 1}', '{}', '2026-03-31T08:15:00Z', -5)
                    """)
            }
        }
    }

    /// A log whose writers left events pending in the table of pending events (the layout before
    /// pending events were their claims) keeps them: after the migration they are pending claims,
    /// sealed by the next append in the order they were committed, before its own.
    @Test func pendingEventsOfTheFormerLayoutAreSealedAfterTheMigration() async throws {
        try await TestDatabase.withSchema("pendingupgrade", migrate: false) { owner in
            let all = try Migration.eventLogAndReadModels()
            _ = try await EventStore.migrate(owner, migrations: all.filter { $0.version < 20 })
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(owner.schema)
            let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
            // As a writer of that layout committed them: claims without content, rows in the
            // table (triggers off: this build's functions expect the new layout).
            try await admin.execute("BEGIN")
            try await admin.execute("SET LOCAL session_replication_role = replica")
            for (n, (id, stream)) in zip(ids, ["a", "b", "a"]).enumerated() {
                let version = Int64(n == 2 ? 1 : 0)
                _ = try await admin.query(
                    "INSERT INTO \(s).event_claims (event_id, stream_id, stream_version) VALUES ($1::uuid, $2, $3)",
                    [.text(id), .text(stream), .int8(version)])
                _ = try await admin.query(
                    """
                    INSERT INTO \(s).pending_events (event_id, stream_id, stream_version, event_type, schema_version, payload, occurred_at)
                    VALUES ($1::uuid, $2, $3, 'PaymentVerified', 1, '{"n": 1}', '2026-03-31T08:15:00Z')
                    """, [.text(id), .text(stream), .int8(version)])
            }
            try await admin.execute("COMMIT")
            _ = try await EventStore.migrate(owner, migrations: all)
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            #expect(try await store.pendingCount() == 3)
            let next = try await store.append([testEvent(stream: "a")])
            #expect(next.map(\.position) == [4] && next.map(\.version) == [2])
            #expect(try await store.pendingCount() == 0)
            let log = try await store.readAll(after: 0)
            #expect(log.map { $0.eventId.uuidString.lowercased() }.prefix(3) == ids[...])
            #expect(log.map(\.version) == [0, 0, 1, 2])
            #expect(try await store.verifyChain().isIntact)
            // Claims made after it come after them.
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            try await TestDatabase.claimPending(on: writer, schema: owner.schema, stream: "c", version: 0)
            #expect(
                try await admin.query("SELECT min(seq) > 3 FROM \(s).event_claims WHERE stream_id = 'c'").bool(0, 0)
                    == true)
        }
    }

    /// A sealer's round, `seal_pending_passes(1)`, seals one pass of 5,000 in claim order and
    /// commits; the claims its snapshot saw beyond those are found by the next round, and
    /// `seal_pending()` seals every pass.
    @Test func aRoundSealsOnePassAndTheNextFindsTheRest() async throws {
        try await TestDatabase.withSchema("sealround") { owner in
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let s = quoteIdentifier(owner.schema)
            try await claimPending(5_050, prefix: "round-", on: writer, schema: owner.schema)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(1)").int64(0, 0) == 5_000)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 50)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(1)").int64(0, 0) == 50)
            try await claimPending(5_010, prefix: "all-", on: writer, schema: owner.schema)
            #expect(try await writer.query("SELECT \(s).seal_pending()").int64(0, 0) == 5_010)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            #expect(try await store.headPosition() == 10_060)
            #expect(
                try await outOfClaimOrder(on: writer, schema: owner.schema) == 0, "positions follow the claims' order")
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// A round its bound stops moves the seal state to its snapshot all the same, naming the
    /// writers of what it left pending among the running: the next round reads from there (not
    /// from the last round that left nothing), and still finds the rest, in claim order.
    @Test func aRoundItsBoundStopsNamesTheWritersOfWhatItLeft() async throws {
        try await TestDatabase.withSchema("sealleft") { owner in
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(owner.schema)
            // Three transactions of 3,000 claims each: a round of one pass seals the first and
            // two thirds of the second.
            var writers: [Int64] = []
            for prefix in ["a-", "b-", "c-"] {
                try await claimPending(3_000, prefix: prefix, on: writer, schema: owner.schema)
                let xid = try await admin.query(
                    "SELECT min(writer_xid), max(writer_xid) FROM \(s).event_claims WHERE stream_id LIKE $1 || '%'",
                    [.text(prefix)])
                #expect(xid.int64(0, 0) == xid.int64(0, 1), "one transaction's claims")
                writers.append(try #require(xid.int64(0, 0)))
            }
            let before = try await admin.query("SELECT next_xid FROM \(s).seal_state").int64(0, 0)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(1)").int64(0, 0) == 5_000)
            let state = try await admin.query(
                "SELECT next_xid, running @> $1::bigint[], running && $2::bigint[] FROM \(s).seal_state",
                [.int8Array(Array(writers[1...])), .int8Array([writers[0]])])
            #expect(
                try #require(state.int64(0, 0)) > writers[2], "the state moved on from \(String(describing: before))")
            #expect(state.bool(0, 1) == true, "the writers of what is left are named")
            #expect(state.bool(0, 2) == false, "the writer sealed whole is not")
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 4_000)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(1)").int64(0, 0) == 4_000)
            #expect(
                try await admin.query("SELECT running && $1::bigint[] FROM \(s).seal_state", [.int8Array(writers)])
                    .bool(0, 0) == false)
            // Two passes from one read: 10,000 of 12,000, then the rest.
            try await claimPending(12_000, prefix: "d-", on: writer, schema: owner.schema)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(2)").int64(0, 0) == 10_000)
            #expect(try await writer.query("SELECT \(s).seal_pending_passes(2)").int64(0, 0) == 2_000)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
            #expect(
                try await outOfClaimOrder(on: writer, schema: owner.schema) == 0, "positions follow the claims' order")
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            #expect(try await store.headPosition() == 21_000)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// `try_seal_pending_passes(n)`, a candidate's stand-in: nothing while another session holds the
    /// append lock, and at most n passes once it is free.
    @Test func aStandInSealsWithinItsBoundWhenTheLockIsFree() async throws {
        try await TestDatabase.withSchema("standinbound") { owner in
            let writer = try await TestDatabase.writer(owner)
            defer { Task { await writer.close() } }
            let admin = try await TestDatabase.admin(owner)
            defer { Task { await admin.close() } }
            let s = quoteIdentifier(owner.schema)
            try await claimPending(5_050, prefix: "e-", on: writer, schema: owner.schema)
            try await SealerTests.holdAppendLock(admin, schema: owner.schema)
            #expect(try await writer.query("SELECT \(s).try_seal_pending_passes(1)").bool(0, 0) == false)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 5_050)
            try await admin.execute("COMMIT")
            #expect(try await writer.query("SELECT \(s).try_seal_pending_passes(1)").bool(0, 0) == true)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 50)
            #expect(try await writer.query("SELECT \(s).try_seal_pending_passes(1)").bool(0, 0) == true)
            #expect(try await writer.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
        }
    }
}

/// `n` pending claims with content, committed in one transaction on `conn` (a writer's session),
/// streams `prefix` then 1...n.
private func claimPending(_ n: Int, prefix: String, on conn: PostgresConnection, schema: String) async throws {
    _ = try await conn.query(
        """
        INSERT INTO \(quoteIdentifier(schema)).event_claims (event_id, stream_id, stream_version, event_type,
                                                  schema_version, payload, metadata, occurred_at)
        SELECT gen_random_uuid(), $1 || g, 0, 'PaymentVerified', 1, '{"n": 1}', '{}', now()
        FROM generate_series(1, $2::int) AS g
        """, [.text(prefix), .int8(Int64(n))])
}

/// How many events of the log do not sit at the position their claim's order gives them (the
/// first claim at position 1).
private func outOfClaimOrder(on conn: PostgresConnection, schema: String) async throws -> Int64? {
    let s = quoteIdentifier(schema)
    return try await conn.query(
        """
        SELECT count(*) FROM \(s).events e JOIN \(s).event_claims c USING (event_id)
        WHERE c.seq <> (SELECT min(seq) FROM \(s).event_claims) + e.position - 1
        """
    ).int64(0, 0)
}
