import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Synchronization
import Testing

@Suite("Concurrency", .timeLimit(.minutes(2)))
struct ConcurrencyTests {
    /// 8 writers (on four stores, i.e. four writer connections competing for the append lock, each
    /// with group commit; a store that finds the lock taken commits as pending and is sealed) append a fixed number of batches to overlapping streams while a subscriber
    /// tails the log. Bounded by count: a slow machine takes longer, it does not test less.
    @Test func concurrentWritersAndATailingReader() async throws {
        try await TestDatabase.withSchema("concurrency") { owner in
            let config = owner.connecting(as: .writer)
            var stores: [EventStore] = []
            for _ in 0..<4 { stores.append(try await EventStore.open(config)) }
            let reader = try await EventStore.open(owner.connecting(as: .reader))
            let acknowledged = Locked<[UUID: AppendedEvent]>([:])
            let batchesPerWriter = 40
            let streams = (0..<6).map { "order:\($0)" }

            // The tail runs until it reads a last event appended once the writers stop. It stops on
            // that event's id, known before the append: stopping on its position, published only
            // after the append returned, raced with a tail that read the event first and then
            // waited forever for one more.
            let sentinel = testEvent(stream: "sentinel")
            let tail = Task { () throws -> [RecordedEvent] in
                var seen: [RecordedEvent] = []
                for try await event in reader.subscribe(after: 0, pageSize: 200, pollInterval: .milliseconds(200)) {
                    seen.append(event)
                    if event.eventId == sentinel.eventId { break }
                }
                return seen
            }
            // An unstructured task is not cancelled with the test: cancel it when the test ends or
            // is cancelled (time limit), or a failure would leave it tailing forever.
            defer { tail.cancel() }

            let written = try await Self.runWriters(
                stores: stores, streams: streams, batches: batchesPerWriter, acknowledged: acknowledged)
            // A last event tells the tail where to stop.
            let last = try await stores[0].append([sentinel])
            acknowledged.withLock { $0[last[0].eventId] = last[0] }
            let acks = acknowledged.withLock { $0 }
            let head = try await reader.headPosition()
            let seen = try await withTaskCancellationHandler {
                try await tail.value
            } onCancel: {
                tail.cancel()
            }

            #expect(written >= 8 * batchesPerWriter)
            #expect(acks.count == written + 1, "every event written was acknowledged once (and the sentinel)")
            // Every acknowledged event is stored exactly once, at the acknowledged position.
            #expect(head == Int64(acks.count))
            let admin = try await TestDatabase.admin(owner)
            let s = quoteIdentifier(owner.schema)
            let stored = try await admin.query(
                "SELECT event_id, position, stream_id, stream_version FROM \(s).events ORDER BY position")
            #expect(stored.count == acks.count)
            var versions: [String: [Int64]] = [:]
            for r in 0..<stored.count {
                let id = UUID(uuidString: stored.string(r, 0)!)!
                #expect(acks[id]?.position == stored.int64(r, 1))
                versions[stored.string(r, 2)!, default: []].append(stored.int64(r, 3)!)
            }
            // Versions per stream are contiguous from 0, and in the log's order (a sealer that
            // gave a later version an earlier position would break this).
            for (stream, v) in versions {
                #expect(v == Array(0..<Int64(v.count)), "stream \(stream)")
            }
            #expect(try await admin.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
            // The reader saw every event exactly once, in global order.
            #expect(seen.map(\.position) == Array(1...head))
            #expect(Set(seen.map(\.eventId)) == Set(acks.keys))
            #expect(try await reader.verifyChain().isIntact)
            await admin.close()
            for store in stores { await store.close() }
            await reader.close()
        }
    }

    /// verify-chain on a live log checks the log as it stood when it began: appends committed while
    /// it reads are neither a head beyond its last event nor events past its head. (Bounded by the
    /// writers' count of batches; every check made meanwhile must find the chain intact.)
    @Test func verifyChainWhileWritersAppend() async throws {
        try await TestDatabase.withSchema("verify-live") { owner in
            var stores: [EventStore] = []
            for _ in 0..<2 { stores.append(try await EventStore.open(owner.connecting(as: .writer))) }
            let reader = try await EventStore.open(owner.connecting(as: .reader))
            // A log to read while the writers go on.
            _ = try await stores[0].append((0..<2_000).map { testEvent(stream: "seed:\($0 % 50)") })
            let writing = Locked(true)
            let reports = try await withThrowingTaskGroup(of: [ChainReport].self) { group in
                let stores = stores
                group.addTask {
                    defer { writing.withLock { $0 = false } }
                    _ = try await Self.runWriters(
                        stores: stores, streams: (0..<6).map { "order:\($0)" }, batches: 60,
                        acknowledged: Locked([:]))
                    return []
                }
                group.addTask {
                    var reports: [ChainReport] = []
                    while writing.withLock({ $0 }) { reports.append(try await reader.verifyChain()) }
                    return reports
                }
                return try await group.reduce([], +)
            }
            #expect(!reports.isEmpty)
            #expect(reports.allSatisfy { $0.isIntact }, "\(reports.compactMap { $0.problem }.prefix(3))")
            #expect(try await reader.verifyChain().isIntact)
            for store in stores { await store.close() }
            await reader.close()
        }
    }

    /// 8 writers on `stores` append `batches` batches each, of 1-3 events, to `streams`, now and
    /// then retrying a batch, and record what was acknowledged. Returns the number of distinct events.
    static func runWriters(
        stores: [EventStore], streams: [String], batches: Int,
        acknowledged: Locked<[UUID: AppendedEvent]>
    ) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<8 {
                let store = stores[writer % stores.count]
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(writer) + 1)
                    var events = 0
                    for n in 1...batches {
                        let size = 1 + rng.below(3)
                        let batch = (0..<size).map { _ in
                            testEvent(
                                stream: streams[rng.below(streams.count)],
                                payload: .makeObject([("writer", .int(Int64(writer))), ("n", .int(Int64(n)))]))
                        }
                        let result = try await store.append(batch)
                        events += batch.count
                        acknowledged.withLock { acks in for a in result { acks[a.eventId] = a } }
                        // Now and then, retry the same batch: it must come back with the same positions.
                        if rng.below(10) == 0 {
                            let again = try await store.append(batch)
                            #expect(again.map(\.position) == result.map(\.position))
                            #expect(again.allSatisfy { $0.alreadyStored })
                        }
                    }
                    return events
                }
            }
            return try await group.reduce(0, +)
        }
    }

    @Test func appendReconnectsAfterTheServerDropsTheConnection() async throws {
        try await TestDatabase.withSchema("reconnect") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let first = try await store.append([testEvent(stream: "s", key: "k1")])
            // Kill the writer's backend, as a server restart would.
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let before = await store.writerBackendPID()
            let killed = try await admin.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name = 'ledger-writer' AND pid <> pg_backend_pid()
                  AND pid = $1
                """, [.int4(before)])
            // The kill must really happen, or this test would pass without a reconnect.
            #expect(killed.count == 1 && killed.bool(0, 0) == true, "the writer's backend was not terminated")
            let second = try await store.append([testEvent(stream: "s", key: "k2")])
            #expect(await store.writerBackendPID() != before, "the append did not reconnect")
            #expect(first[0].position == 1)
            #expect(second[0].position == 2 && second[0].version == 1)
            #expect(try await store.headPosition() == 2)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// A store whose connections go through a ``CommitDroppingProxy`` (not armed yet), with one
    /// event appended, and an admin connection.
    static func behindACommitDroppingProxy(
        _ label: String,
        _ body: (LedgerConfiguration, EventStore, CommitDroppingProxy, PostgresConnection) async throws -> Void
    ) async throws {
        try await TestDatabase.withSchema(label) { config in
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            defer { proxy.close() }
            var through = config
            through.connectionString = proxy.connectionString(config.connectionString)
            let store = try await EventStore.open(through)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "before")])
            try await body(config, store, proxy, admin)
        }
    }

    /// The server commits, and the connection breaks before the client reads the answer. The
    /// append reconnects and runs again; it must report the events as its own write (the caller
    /// acts on `alreadyStored`), written once. One event goes through INSERT, 40 through COPY.
    @Test(arguments: [1, 40])
    func anAppendWhoseCommitAnswerIsLostReportsItsEventsAsItsOwn(events count: Int) async throws {
        try await Self.behindACommitDroppingProxy("lostcommit") { config, store, proxy, _ in
            proxy.arm()
            let events = (0..<count).map { testEvent(stream: "s", key: "k\($0)") }
            let appended = try await store.append(events)
            // The answer must really have been lost, or this test would pass without the fault.
            #expect(proxy.dropped == 1, "no COMMIT answer was dropped")
            #expect(appended.map(\.position) == Array(2...Int64(count + 1)))
            #expect(appended.allSatisfy { !$0.alreadyStored }, "the append reported its own events as stored before it")
            #expect(try await TestDatabase.storedEventRows(config) == Int64(count + 1))
            let again = try await store.append(events)
            #expect(again.map(\.position) == appended.map(\.position) && again.allSatisfy(\.alreadyStored))
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// The same when another session holds the append lock: the events commit as pending, and
    /// the answers to that COMMIT and to `seal_events` are lost. Asked again, the append finds them
    /// sealed and reports them as its own.
    @Test func anAppendWhosePendingCommitAnswerIsLostReportsItsEventsAsItsOwn() async throws {
        try await Self.behindACommitDroppingProxy("lostpending") { config, store, proxy, admin in
            let lock = "4243, hashtext('ledger-append:' || $1)"
            _ = try await admin.query("SELECT pg_advisory_lock(\(lock))", [.text(config.schema)])
            proxy.arm()
            let events = (0..<3).map { testEvent(stream: "s", key: "k\($0)") }
            let append = Task { try await store.append(events) }
            // Committed as pending; the answer waits behind seal_events, which waits for the lock.
            var polls = 0
            while try await admin.query("SELECT count(*) FROM \(quoteIdentifier(config.schema)).pending_events").int64(
                0, 0) != 3 && polls < 6000
            {
                try await Task.sleep(for: .milliseconds(10))
                polls += 1
            }
            _ = try await admin.query("SELECT pg_advisory_unlock(\(lock))", [.text(config.schema)])
            let appended = try await append.value
            #expect(proxy.dropped == 1, "no COMMIT answer was dropped")
            #expect(appended.map(\.position) == [2, 3, 4])
            #expect(appended.allSatisfy { !$0.alreadyStored }, "the append reported its own events as stored before it")
            #expect(try await TestDatabase.storedEventRows(config) == 4)
            #expect(try await store.verifyChain().isIntact)
        }
    }

    @Test func subscriptionResumesFromAGivenPosition() async throws {
        try await TestDatabase.withSchema("resume") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append((0..<5).map { _ in testEvent(stream: "s") })
            var iterator = store.subscribe(after: 3, pollInterval: .milliseconds(100)).makeAsyncIterator()
            #expect(try await iterator.next()?.position == 4)
            #expect(try await iterator.next()?.position == 5)
            // Appended after the subscriber caught up: NOTIFY (or the poll) wakes it.
            Task { _ = try await store.append([testEvent(stream: "s")]) }
            #expect(try await iterator.next()?.position == 6)
        }
    }
}
