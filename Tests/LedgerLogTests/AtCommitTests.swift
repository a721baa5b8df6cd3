import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// Appends answered at their commit (`appendAtCommit`): stored, claimed and idempotent when they
/// return, their positions given when they are sealed, by the next writer to take the append lock
/// or by their own store once it has nothing more to append.
@Suite("Appends answered at commit", .timeLimit(.minutes(3)))
struct AtCommitTests {
    @Test func aWriterAloneIsAnsweredWithItsPositions() async throws {
        try await TestDatabase.withSchema("atcommitalone") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await store.close() } }
            let events = [testEvent(stream: "a"), testEvent(stream: "a"), testEvent(stream: "b", key: "k-1")]
            let committed = try await store.appendAtCommit(events)
            #expect(committed.map(\.position) == [1, 2, 3])
            #expect(committed.map(\.version) == [0, 1, 0])
            #expect(committed.map(\.eventId) == events.map(\.eventId))
            #expect(committed.allSatisfy { !$0.alreadyStored })
            // A retry, answered either way, returns the originals.
            let again = try await store.appendAtCommit(events)
            #expect(again.map(\.position) == [1, 2, 3] && again.allSatisfy(\.alreadyStored))
            #expect(try await store.append(events).map(\.position) == [1, 2, 3])
        }
    }

    /// While another session holds the append lock: committed pending (claimed, durable, not seen
    /// by readers), answered without a position; a retry is recognized; sealed once the lock is free,
    /// by the store itself, with nothing more appended.
    @Test func aWriterThatFindsTheLockTakenIsAnsweredAtCommitAndSealsItsEventsItself() async throws {
        try await SealerTests.withContendedLog("atcommitlock") { c in
            let (store, other, holder, watcher, s) = (c.store, c.other, c.holder, c.watcher, c.s)
            try await SealerTests.holdAppendLock(holder, schema: c.owner.schema)
            let events = [testEvent(stream: "s", key: "ac-1"), testEvent(stream: "s", expected: .exact(1))]
            // Answered while the lock is still held: it did not wait for it.
            let committed = try await store.appendAtCommit(events)
            #expect(committed.map(\.position) == [nil, nil])
            #expect(committed.map(\.version) == [1, 2])
            #expect(committed.allSatisfy { !$0.alreadyStored })
            #expect(try await watcher.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 2)
            #expect(try await store.readAll(after: 0).count == 1)
            #expect(try await store.headPosition() == 1)

            // A retry from another writer, answered at commit too: the originals, still pending.
            let retry = try await other.appendAtCommit(events)
            #expect(retry.map(\.position) == [nil, nil] && retry.allSatisfy(\.alreadyStored))
            #expect(retry.map(\.version) == [1, 2])
            // An expected version counts the pending events: the stream is at 2.
            await #expect(throws: LedgerError.self) {
                _ = try await other.appendAtCommit([testEvent(stream: "s", expected: .exact(1))])
            }
            // The same key with other content is a conflict, pending or not.
            await #expect(throws: LedgerError.self) {
                let changed = testEvent(stream: "s", payload: .makeObject([("other", .int(1))]), key: "ac-1")
                _ = try await other.appendAtCommit([changed])
            }

            // Nothing more is appended: the store seals what it left once the lock is free.
            try await holder.execute("COMMIT")
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
            let log = try await store.readAll(after: 0)
            #expect(log.map(\.position) == [1, 2, 3])
            #expect(log.dropFirst().map(\.eventId) == events.map(\.eventId))
            #expect(try await store.verifyChain().isIntact)
            // Now a retry gets the positions.
            let sealed = try await other.appendAtCommit(events)
            #expect(sealed.map(\.position) == [2, 3] && sealed.allSatisfy(\.alreadyStored))
        }
    }

    /// A store closed right after an append answered at commit, the lock taken by another session
    /// meanwhile, seals what it left pending before it closes (waiting for the lock).
    @Test func closingAStoreSealsWhatItLeftPending() async throws {
        try await TestDatabase.withSchema("atcommitclose") { owner in
            let store = try await EventStore.open(owner.connecting(as: .writer))
            let holder = try await TestDatabase.admin(owner)
            defer { Task { await holder.close() } }
            try await SealerTests.holdAppendLock(holder, schema: owner.schema)
            let committed = try await store.appendAtCommit([testEvent(stream: "c")])
            #expect(committed.map(\.position) == [nil])
            let closing = Task { await store.close() }
            // Released only once the store waits for it in its close (a count, not a time: the
            // store's own attempts that found the lock taken come first). This schema's append lock
            // only: other tests wait for their own.
            let name = "'ledger-append:" + owner.schema.replacingOccurrences(of: "'", with: "''") + "'"
            try await TestDatabase.waitUntil(
                holder,
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = 4243"
                    + " AND objid = (hashtext(\(name))::bigint & 4294967295)::oid",
                equals: 1)
            try await holder.execute("COMMIT")
            await closing.value
            let reader = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await reader.close() } }
            #expect(try await reader.pendingCount() == 0)
            #expect(try await reader.readAll(after: 0).map(\.eventId) == committed.map(\.eventId))
        }
    }

    /// Independent writers answered at commit, racing for shared streams: every event is sealed
    /// once, at gap-free positions, each stream's versions in log order, the chain intact; whether
    /// the writers seal or a sealer elected among them does.
    @Test(arguments: Sealing.allCases)
    func independentWritersAnsweredAtCommitLoseNothingAndDoubleNothing(_ sealing: Sealing) async throws {
        try await TestDatabase.withSchema("atcommitmany" + (sealing == .sealer ? "s" : "")) { owner in
            var config = owner.connecting(as: .writer)
            config.sealing = sealing
            let writers = 6
            let appends = 25
            var stores: [EventStore] = []
            for _ in 0..<writers { stores.append(try await EventStore.open(config)) }
            let answers = try await withThrowingTaskGroup(of: [CommittedEvent].self) { group in
                for (w, store) in stores.enumerated() {
                    group.addTask {
                        var out: [CommittedEvent] = []
                        for i in 0..<appends {
                            // Half on a stream of the writer's own, half on streams all share.
                            let stream = i % 2 == 0 ? "own-\(w)" : "shared-\(i % 3)"
                            let event = testEvent(stream: stream, key: "w\(w)-\(i)")
                            out += try await store.appendAtCommit([event])
                            // Every tenth append sent again: the original comes back.
                            if i % 10 == 0 {
                                let again = try await store.appendAtCommit([event])
                                #expect(again.count == 1 && again[0].alreadyStored)
                                #expect(again[0].version == out.last?.version)
                            }
                        }
                        return out
                    }
                }
                var all: [CommittedEvent] = []
                for try await a in group { all += a }
                return all
            }
            for store in stores { await store.close() }
            #expect(answers.count == writers * appends)
            #expect(Set(answers.map(\.eventId)).count == writers * appends)

            // A reader with no sealer of its own (one left running would hold the schema's tables
            // while the test's end drops them).
            let reader = try await EventStore.open(owner.connecting(as: .writer))
            defer { Task { await reader.close() } }
            #expect(try await reader.pendingCount() == 0)
            let log = try await reader.readAll(after: 0, limit: 10_000)
            #expect(log.map(\.position) == Array(1...Int64(writers * appends)))
            #expect(Set(log.map(\.eventId)) == Set(answers.map(\.eventId)))
            // Each answer's version is the one stored, and a position given matches the log's.
            let stored = Dictionary(uniqueKeysWithValues: log.map { ($0.eventId, $0) })
            for a in answers {
                #expect(stored[a.eventId]?.version == a.version && stored[a.eventId]?.stream == a.stream)
                if let p = a.position { #expect(stored[a.eventId]?.position == p) }
            }
            var versions: [String: Int64] = [:]
            for e in log {
                #expect(e.version == (versions[e.stream] ?? -1) + 1, "stream \(e.stream) in log order")
                versions[e.stream] = e.version
            }
            #expect(try await reader.verifyChain().isIntact)
        }
    }
}
