import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Logging
import Synchronization
import Testing

/// Appends while another session holds the append lock: the writer commits its events as pending
/// (claimed, not yet in the log), and they get their positions when the lock is free again.
@Suite("Sealed appends", .timeLimit(.minutes(2)))
struct SealerTests {
    /// Holds the append lock of `schema` on `admin` until `release` (as a writer in the middle of
    /// its commit, or a sealer, would).
    static func holdAppendLock(_ admin: PostgresConnection, schema: String) async throws {
        try await admin.execute("BEGIN")
        _ = try await admin.query(
            "SELECT pg_advisory_xact_lock(4243, hashtext($1))", [.text("ledger-append:" + schema)])
    }

    /// A fresh schema with one event appended (stream "s", position 1) and what a test of a contended
    /// append needs: two writer stores, an admin session to hold the append lock, one to watch.
    struct Contended {
        let owner: LedgerConfiguration
        let store: EventStore
        let other: EventStore
        let holder: PostgresConnection
        let watcher: PostgresConnection
        /// The schema, quoted for SQL.
        var s: String { quoteIdentifier(owner.schema) }
    }

    static func withContendedLog(_ label: String, _ body: (Contended) async throws -> Void) async throws {
        try await TestDatabase.withSchema(label) { owner in
            let config = owner.connecting(as: .writer)
            let store = try await EventStore.open(config)
            let other = try await EventStore.open(config)
            let holder = try await TestDatabase.admin(owner)
            let watcher = try await TestDatabase.admin(owner)
            // Closed before the schema is dropped, whatever the body did: a store may still be
            // sealing what it left pending, and a seal beside DROP SCHEMA can deadlock with it.
            // The sessions first: a store's close waits for its seal, which waits for the append
            // lock while `holder` holds it.
            func closeAll() async {
                await holder.close()
                await watcher.close()
                await store.close()
                await other.close()
            }
            do {
                _ = try await store.append([testEvent(stream: "s")])
                try await body(Contended(owner: owner, store: store, other: other, holder: holder, watcher: watcher))
            } catch {
                await closeAll()
                throw error
            }
            await closeAll()
        }
    }

    @Test func aWriterThatFindsTheLockTakenCommitsPendingAndIsSealedWhenItIsFree() async throws {
        try await Self.withContendedLog("sealer") { c in
            let (store, other, holder, watcher, s) = (c.store, c.other, c.holder, c.watcher, c.s)
            try await Self.holdAppendLock(holder, schema: c.owner.schema)
            let event = testEvent(stream: "s", key: "pending-1")
            let first = Task { try await store.append([event]) }
            // The same event again, from another writer, while it is still pending: a retry.
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 1)
            let retry = Task { try await other.append([event]) }
            // Committed and claimed, but not in the log: readers do not see it, the head has not moved.
            #expect(
                try await watcher.query(
                    "SELECT count(*) FROM \(s).event_claims WHERE event_id = $1::uuid",
                    [.text(event.eventId.lowercased)]
                ).int64(0, 0) == 1)
            #expect(try await store.headPosition() == 1)
            #expect(try await store.readAll(after: 0).count == 1)

            try await holder.execute("COMMIT")
            let appended = try await first.value
            let again = try await retry.value
            #expect(appended.map(\.position) == [2] && appended.map(\.version) == [1])
            #expect(again.map(\.position) == [2] && again.allSatisfy(\.alreadyStored))
            #expect(try await watcher.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
            #expect(try await store.readAll(after: 0).map(\.eventId).last == event.eventId)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// A batch too large for one INSERT goes to pending by COPY, claims first, and is sealed whole,
    /// in the batch's order.
    @Test func aLargeBatchCommittedWhileTheLockIsTakenIsSealedInOrder() async throws {
        try await TestDatabase.withSchema("sealcopy") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            let holder = try await TestDatabase.admin(owner)
            defer { Task { await holder.close() } }
            let batch = (0..<(AppendTransaction.insertThreshold + 8)).map { i in
                testEvent(stream: "s\(i % 3)", key: "copy-\(i)")
            }
            try await Self.holdAppendLock(holder, schema: owner.schema)
            let appending = Task { try await store.append(batch) }
            try await TestDatabase.waitUntil(
                holder, "SELECT count(*) FROM \(quoteIdentifier(owner.schema)).pending_events",
                equals: Int64(batch.count))
            try await holder.execute("COMMIT")
            let appended = try await appending.value
            #expect(appended.map(\.position) == Array(1...Int64(batch.count)))
            #expect(appended.map(\.eventId) == batch.map(\.eventId))
            #expect(try await store.readAll(after: 0).map(\.eventId) == batch.map(\.eventId))
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// A pending event whose writer never asked for its position (it crashed after its commit) is
    /// sealed by the next append of any writer, before that append's own events.
    @Test func anAbandonedPendingEventIsSealedByTheNextAppend() async throws {
        try await TestDatabase.withSchema("abandoned") { owner in
            let config = owner.connecting(as: .writer)
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "a")])
            let writer = try await PostgresConnection.connect(
                config.connectionString, applicationName: "ledger-test-writer")
            defer { Task { await writer.close() } }
            let s = quoteIdentifier(owner.schema)
            let id = UUID().uuidString.lowercased()
            try await TestDatabase.claimPending(on: writer, schema: owner.schema, stream: "a", version: 1, id: id)
            // The writer may not remove or change what it committed.
            for sql in [
                "DELETE FROM \(s).pending_events", "UPDATE \(s).pending_events SET stream_version = 5",
                "DELETE FROM \(s).event_claims", "UPDATE \(s).event_claims SET stream_version = 5",
                "UPDATE \(s).event_claims SET payload = '{\"n\": 2}'", "DELETE FROM \(s).seal_state",
                "UPDATE \(s).seal_state SET next_xid = 0",
            ] {
                await #expect(throws: PostgresError.self) { try await writer.execute(sql) }
            }
            #expect(try await store.pendingCount() == 1)
            // Version 1 of "a" is claimed: the next event of "a" is version 2, after it in the log.
            let next = try await store.append([testEvent(stream: "a")])
            #expect(try await store.pendingCount() == 0)
            #expect(next.map(\.position) == [3] && next.map(\.version) == [2])
            let log = try await store.readAll(after: 0)
            #expect(log.map(\.position) == [1, 2, 3])
            #expect(log[1].eventId.uuidString.lowercased() == id && log[1].version == 1)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// Version races between writers that do not hold the lock: an expected version that still
    /// holds succeeds once; the loser gets a typed conflict, and nothing is written twice.
    @Test func twoPendingWritersExpectingTheSameVersionOneWins() async throws {
        try await TestDatabase.withSchema("sealrace") { owner in
            let config = owner.connecting(as: .writer)
            let a = try await EventStore.open(config)
            let b = try await EventStore.open(config)
            defer {
                Task {
                    await a.close()
                    await b.close()
                }
            }
            _ = try await a.append([testEvent(stream: "s")])
            let holder = try await TestDatabase.admin(owner)
            defer { Task { await holder.close() } }
            try await Self.holdAppendLock(holder, schema: owner.schema)
            let first = Task { try await a.append([testEvent(stream: "s", expected: .exact(0))]) }
            let second = Task { try await b.append([testEvent(stream: "s", expected: .exact(0))]) }
            try await TestDatabase.waitUntil(
                holder, "SELECT count(*) FROM \(quoteIdentifier(owner.schema)).pending_events", equals: 1)
            try await holder.execute("COMMIT")
            let results = [await first.result, await second.result]
            let won = results.compactMap { try? $0.get() }
            #expect(won.count == 1 && won.first?.map(\.position) == [2])
            let lost = results.compactMap { r -> LedgerError? in
                if case .failure(let e) = r { return e as? LedgerError } else { return nil }
            }
            #expect(lost.count == 1)
            if case .versionConflict(let stream, _, let actual, _)? = lost.first {
                #expect(stream == "s" && actual == 1)
            } else {
                Issue.record("expected a version conflict, got \(String(describing: lost.first))")
            }
            #expect(try await a.headPosition() == 2)
            #expect(try await a.verifyChain().isIntact)
        }
    }

    /// A writer whose `seal_events` runs out of lock_timeout after its commit does not report an
    /// error for events that are stored: it asks again, and returns their position once sealed,
    /// reported as written by this append.
    @Test func aSealThatRunsOutOfLockTimeoutAsksAgainAndReturnsThePosition() async throws {
        try await TestDatabase.withSchema("sealtimeout") { owner in
            var config = owner.connecting(as: .writer)
            config.connectionString = ConnectionString.setting(
                "options", to: "-c lock_timeout=100ms", in: config.connectionString)
            let log = CapturedLog()
            let store = try await EventStore.open(config, logger: Logger(label: "test", factory: { _ in log }))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let holder = try await TestDatabase.admin(owner)
            defer { Task { await holder.close() } }
            try await Self.holdAppendLock(holder, schema: owner.schema)
            let event = testEvent(stream: "s", key: "timeout-1")
            let finished = Mutex(false)
            let appending = Task {
                defer { finished.withLock { $0 = true } }
                return try await store.append([event])
            }
            // Until the writer has committed its event as pending, then timed out in `seal_events`
            // at least once more (or given up, which fails below). Counted from the pending
            // commit: under load, a 100 ms lock_timeout also runs out on the lock NOTIFY takes at
            // commit, so a timeout logged before it says nothing about the seal.
            try await TestDatabase.waitUntil(
                holder, "SELECT count(*) FROM \(quoteIdentifier(owner.schema)).pending_events", equals: 1)
            let timeouts = log.count("lock_timeout")
            while log.count("lock_timeout") == timeouts && !finished.withLock({ $0 }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await holder.execute("COMMIT")
            let appended = try await appending.value
            #expect(appended.map(\.position) == [2] && appended.map(\.eventId) == [event.eventId])
            // Its own write, not a retry of a stored event (the service answers 201, not 200).
            #expect(appended.allSatisfy { !$0.alreadyStored })
            // Sealed and committed (the retry that finds the lock free seals it in its snapshot,
            // and keeps that seal although it has nothing of its own to write).
            let stored = try await store.readAll(after: 0)
            let pending = try await store.pendingCount()
            #expect(
                stored.map(\.position) == [1, 2] && stored.last?.eventId == event.eventId,
                "stored positions \(stored.map(\.position)), pending \(pending); the store's log:\n\(log.text)")
            #expect(pending == 0)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// `seal_events` returns the positions it sealed before its transaction commits (at the
    /// pipeline's sync point). When that commit fails (here a deferred trigger refuses it once, as
    /// lock_timeout on the lock NOTIFY takes at commit did on a loaded machine), the positions were
    /// never sealed: the writer asks again instead of answering them, and its event is its own.
    @Test func aSealWhoseCommitFailsIsAskedAgain() async throws {
        try await TestDatabase.withSchema("sealcommit") { owner in
            let s = quoteIdentifier(owner.schema)
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "s")])
            let holder = try await TestDatabase.admin(owner)
            defer { Task { await holder.close() } }
            try await holder.execute(
                """
                CREATE SEQUENCE \(s).commits;
                CREATE FUNCTION \(s).refuse_first_commit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
                BEGIN
                    IF nextval('\(s).commits') = 1 THEN
                        RAISE EXCEPTION 'injected: the commit of the first seal fails' USING ERRCODE = 'lock_not_available';
                    END IF;
                    RETURN NULL;
                END $$;
                CREATE CONSTRAINT TRIGGER refuse_first_commit AFTER INSERT ON \(s).events
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION \(s).refuse_first_commit();
                """)
            try await Self.holdAppendLock(holder, schema: owner.schema)
            let event = testEvent(stream: "s", key: "commit-1")
            let appending = Task { try await store.append([event]) }
            // Committed as pending; its `seal_events` waits for the lock, then seals once it is free.
            try await TestDatabase.waitUntil(holder, "SELECT count(*) FROM \(s).pending_events", equals: 1)
            try await holder.execute("COMMIT")
            let appended = try await appending.value
            #expect(appended.map(\.position) == [2] && appended.map(\.eventId) == [event.eventId])
            #expect(appended.allSatisfy { !$0.alreadyStored })
            // The first seal's commit was refused, and a later one kept.
            #expect(try await holder.query("SELECT last_value FROM \(s).commits").int64(0, 0) == 2)
            #expect(try await store.readAll(after: 0).map(\.position) == [1, 2])
            #expect(try await store.pendingCount() == 0)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// `sealPending` seals what a writer committed and never sealed, without waiting for an append.
    @Test func sealPendingSealsWhatAWriterLeftBehind() async throws {
        try await TestDatabase.withSchema("sealleft") { owner in
            let config = owner.connecting(as: .writer)
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "a")])
            #expect(try await store.sealPending() == 0)
            var ids: [String] = []
            for version in [1, 2] as [Int64] {
                ids.append(try await TestDatabase.leavePending(owner, stream: "a", version: version))
            }
            #expect(try await store.pendingCount() == 2)
            #expect(try await store.sealPending() == 2)
            #expect(try await store.pendingCount() == 0)
            let sealed = try await store.readAll(after: 0)
            #expect(sealed.map(\.position) == [1, 2, 3])
            #expect(sealed.dropFirst().map { $0.eventId.uuidString.lowercased() } == ids)
            #expect(try await store.verifyChain().isIntact)
        }
    }
}

/// Keeps every message logged (for tests that wait for a warning).
final class CapturedLog: LogHandler, Sendable {
    private let messages = Mutex<[String]>([])
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    subscript(metadataKey _: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
            separator: " ")
        messages.withLock { $0.append(event.message.description + (metadata.isEmpty ? "" : " [\(metadata)]")) }
    }

    func contains(_ text: String) -> Bool { messages.withLock { $0.contains { $0.contains(text) } } }

    /// How many messages contain `text`.
    func count(_ text: String) -> Int { messages.withLock { $0.filter { $0.contains(text) }.count } }

    /// Every message, with its metadata, a line each: for a failure to say what the store did.
    var text: String { messages.withLock { $0.joined(separator: "\n") } }
}
