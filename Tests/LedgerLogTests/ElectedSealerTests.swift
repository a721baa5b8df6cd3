import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// Stores opened with ``Sealing/sealer``: appends answered at commit never take the append lock;
/// one store per log, elected, seals what every writer left pending.
@Suite("A sealer elected among the stores", .timeLimit(.minutes(3)))
struct ElectedSealerTests {
    static func sealing(_ owner: LedgerConfiguration) -> LedgerConfiguration {
        var config = owner.connecting(as: .writer)
        config.sealing = .sealer
        return config
    }

    /// The server process of the session elected sealer for `schema`, if one is.
    static func sealerPID(_ conn: PostgresConnection, schema: String) async throws -> Int64? {
        try await conn.query(TestDatabase.electedSealerPID(schema: schema)).int64(0, 0)
    }

    /// A store opened with ``Sealing/sealer`` and a watcher connection on a schema of its own, both
    /// closed (the store's sealer stopped) before the schema is dropped: a sealer still running
    /// would hold the schema's tables while the drop waits for them.
    static func withSealingStore(
        _ label: String, _ body: (EventStore, PostgresConnection, LedgerConfiguration) async throws -> Void
    ) async throws {
        try await TestDatabase.withSchema(label) { owner in try await withSealingStore(on: owner, body) }
    }

    /// The same on the schema of `owner`.
    static func withSealingStore(
        on owner: LedgerConfiguration,
        _ body: (EventStore, PostgresConnection, LedgerConfiguration) async throws -> Void
    ) async throws {
        let store = try await EventStore.open(Self.sealing(owner))
        let watcher = try await TestDatabase.admin(owner)
        do {
            try await body(store, watcher, owner)
        } catch {
            await store.close()
            await watcher.close()
            throw error
        }
        await store.close()
        await watcher.close()
    }

    static func waitForElection(_ conn: PostgresConnection, schema: String) async throws -> Int64 {
        while true {
            if let pid = try await sealerPID(conn, schema: schema) { return pid }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// With the lock free, an append answered at commit still leaves its events pending (a writer
    /// alone under ``Sealing/writers`` gets its positions), and the sealer seals them with nothing
    /// more appended. An append that waits for its positions gets them.
    @Test func appendsAnsweredAtCommitLeaveTheirEventsToTheSealer() async throws {
        try await Self.withSealingStore("electedseal") { store, watcher, owner in
            let s = quoteIdentifier(owner.schema)
            let events = [testEvent(stream: "a", expected: .noStream), testEvent(stream: "b", key: "k-1")]
            let committed = try await store.appendAtCommit(events)
            #expect(committed.map(\.position) == [nil, nil])
            #expect(committed.map(\.version) == [0, 0])
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
            #expect(await store.isSealer())
            #expect(try await store.readAll(after: 0).map(\.eventId) == events.map(\.eventId))
            // A retry gets the positions the sealer gave.
            #expect(try await store.appendAtCommit(events).map(\.position) == [1, 2])
            // An append that waits is answered with its position, as under Sealing.writers.
            let waited = try await store.append([testEvent(stream: "a", expected: .exact(0))])
            #expect(waited.map(\.position) == [3] && waited.map(\.version) == [1])
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// Two candidates: one is elected; the other's appends are sealed by it (it looks for pending
    /// events of other processes, unasked); when the elected one stops, the other takes over.
    @Test func anotherCandidateTakesOverWhenTheSealerStops() async throws {
        try await TestDatabase.withSchema("electedtwo") { owner in
            let watcher = try await TestDatabase.admin(owner)
            let s = quoteIdentifier(owner.schema)
            let first = try await EventStore.open(Self.sealing(owner))
            var second: EventStore?
            // Every store closed before the schema is dropped (closing one twice is harmless).
            func closeAll() async {
                await first.close()
                await second?.close()
                await watcher.close()
            }
            do {
                _ = try await Self.waitForElection(watcher, schema: owner.schema)
                let other = try await EventStore.open(Self.sealing(owner))
                second = other
                #expect(await first.isSealer())
                #expect(await !other.isSealer())

                // The second store's events, sealed by the first.
                let a = try await other.appendAtCommit([testEvent(stream: "x", key: "two-1")])
                #expect(a.map(\.position) == [nil])
                try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
                #expect(await !other.isSealer())

                await first.close()
                _ = try await Self.waitForElection(watcher, schema: owner.schema)
                while await !other.isSealer() { try await Task.sleep(for: .milliseconds(20)) }
                let b = try await other.appendAtCommit([testEvent(stream: "x", key: "two-2")])
                #expect(b.map(\.position) == [nil])
                try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
                #expect(try await other.readAll(after: 0).map(\.stream) == ["x", "x"])
                #expect(try await other.verifyChain().isIntact)
            } catch {
                await closeAll()
                throw error
            }
            await closeAll()
        }
    }

    /// The sealer's session cut off: it reconnects, is elected again and seals what came since.
    @Test func aSealerWhoseSessionIsCutOffStandsAgain() async throws {
        try await Self.withSealingStore("electedcut") { store, watcher, owner in
            let s = quoteIdentifier(owner.schema)
            let pid = try await Self.waitForElection(watcher, schema: owner.schema)
            _ = try await watcher.query("SELECT pg_terminate_backend($1::int)", [.text(String(pid))])
            let committed = try await store.appendAtCommit([testEvent(stream: "c", expected: .noStream)])
            #expect(committed.map(\.position) == [nil])
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
            let again = try await Self.waitForElection(watcher, schema: owner.schema)
            #expect(again != pid)
            #expect(try await store.readAll(after: 0).map(\.eventId) == committed.map(\.eventId))
        }
    }

    /// A candidate that holds the election and seals nothing (a frozen process, or one cut off by a
    /// network that has not ended its session; here a session that took the election lock): the
    /// other candidates seal in its stead once an event has stayed pending long enough.
    @Test func aFrozenSealerIsStoodInFor() async throws {
        try await TestDatabase.withSchema("electedfrozen") { owner in
            let frozen = try await TestDatabase.admin(owner)
            #expect(
                try await frozen.query(Sealer.electionLock, [.text(owner.schema)]).bool(0, 0) == true,
                "the election lock, taken before any candidate")
            try await Self.withSealingStore(on: owner) { store, watcher, _ in
                let s = quoteIdentifier(owner.schema)
                let committed = try await store.appendAtCommit([testEvent(stream: "f", expected: .noStream)])
                #expect(committed.map(\.position) == [nil])
                try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
                #expect(await !store.isSealer())
                #expect(try await store.readAll(after: 0).map(\.eventId) == committed.map(\.eventId))
            }
            await frozen.close()
        }
    }

    /// A store that could not seal is refused when it opens, rather than elected to fail: a role
    /// without the sealer's privileges, a schema not migrated.
    @Test func aStoreThatCannotSealIsRefusedAtOpen() async throws {
        try await TestDatabase.withSchema("electedrefused") { owner in
            var reader = owner.connecting(as: .reader)
            reader.sealing = .sealer
            do {
                let store = try await EventStore.open(reader)
                await store.close()
                Issue.record("a reader opened a store that seals")
            } catch let LedgerError.database(error) {
                #expect(error.sqlState == .insufficientPrivilege && error.message.contains("seal"), "\(error)")
            }
            var elsewhere = Self.sealing(owner)
            elsewhere.schema = owner.schema + "_not_migrated"
            do {
                let store = try await EventStore.open(elsewhere)
                await store.close()
                Issue.record("a store that seals opened on a schema that does not exist")
            } catch let LedgerError.migration(message) {
                #expect(message.contains("ledger migrate"), "\(message)")
            }
        }
    }
}
