import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

/// Appends answered at commit under ``Sealing/sealer`` in one round trip: no snapshot read; the
/// insert reads each stream's last committed version, gives the next ones, and fails when a
/// stream's first event expects another.
@Suite("Appends in one round trip", .timeLimit(.minutes(3)))
struct OneRoundTripTests {
    /// The one-round-trip path alone, `events` as one request, on a writer session of the schema.
    static func direct(
        _ owner: LedgerConfiguration, _ events: [NewEvent]
    ) async throws -> [Result<[AppendedEvent], LedgerError>]? {
        let writer = try await TestDatabase.writer(owner)
        defer { Task { await writer.close() } }
        let requests = [events.map(PreparedEvent.init)]
        let presumption = try #require(AppendTransaction.Presumption(requests))
        return try await writer.withIsolation { conn in
            try AppendTransaction.appendInOneRoundTrip(
                requests, presumption, schema: quoteIdentifier(owner.schema), on: conn)
        }
    }

    /// The claimed versions of `stream`, in claim order.
    static func claimedVersions(_ conn: PostgresConnection, _ schema: String, _ stream: String) async throws -> [Int64]
    {
        let rows = try await conn.query(
            "SELECT stream_version FROM \(quoteIdentifier(schema)).event_claims WHERE stream_id = $1 ORDER BY seq",
            [.text(stream)])
        return (0..<rows.count).compactMap { rows.int64($0, 0) }
    }

    /// A stream whose first event here expects nothing continues from its last committed version,
    /// read by the insert itself (each event one more, in the group's order); one expecting a
    /// version, or no stream, that holds takes the next; a new stream starts at 0.
    @Test func versionsAreReadByTheInsertOrPresumedFromWhatIsExpected() async throws {
        try await TestDatabase.withSchema("oneroundtrip") { owner in
            let store = try await EventStore.open(owner)
            _ = try await store.append([testEvent(stream: "s"), testEvent(stream: "s"), testEvent(stream: "e")])
            await store.close()
            let events = [
                testEvent(stream: "s"), testEvent(stream: "t", expected: .noStream), testEvent(stream: "s"),
                testEvent(stream: "e", expected: .exact(0)), testEvent(stream: "t", expected: .exact(0)),
                testEvent(stream: "new"),
            ]
            let outcome = try #require(try await Self.direct(owner, events))
            let appended = try #require(try outcome.first?.get())
            #expect(appended.map(\.version) == [2, 0, 3, 1, 1, 0])
            #expect(appended.map(\.eventId) == events.map(\.eventId))
            #expect(appended.allSatisfy { $0.position == 0 && !$0.alreadyStored })
            let admin = try await TestDatabase.admin(owner)
            #expect(try await Self.claimedVersions(admin, owner.schema, "s") == [0, 1, 2, 3])
            #expect(try await Self.claimedVersions(admin, owner.schema, "t") == [0, 1])
            #expect(try await Self.claimedVersions(admin, owner.schema, "new") == [0])
            #expect(
                try await admin.query("SELECT count(*) FROM \(quoteIdentifier(owner.schema)).pending_events").int64(
                    0, 0) == 6)
            await admin.close()
        }
    }

    /// An expected version that is not the stream's last committed one (the stream exists, is
    /// shorter, or is longer) writes nothing and sends the group to the path that reads what is
    /// stored; so does a later event of a stream expecting a version its group's first event did
    /// not leave.
    @Test(arguments: [ExpectedVersion.noStream, .exact(0), .exact(5)])
    func aPresumedVersionThatDoesNotHoldWritesNothing(_ expected: ExpectedVersion) async throws {
        try await TestDatabase.withSchema("presumedwrong") { owner in
            let store = try await EventStore.open(owner)
            _ = try await store.append([testEvent(stream: "s"), testEvent(stream: "s")])
            await store.close()
            await #expect(throws: AppendTransaction.LookUpStoredAndRetry.self) {
                _ = try await Self.direct(
                    owner, [testEvent(stream: "other"), testEvent(stream: "s", expected: expected)])
            }
            await #expect(throws: AppendTransaction.LookUpStoredAndRetry.self) {
                _ = try await Self.direct(
                    owner, [testEvent(stream: "u", expected: .noStream), testEvent(stream: "u", expected: .exact(3))])
            }
            let admin = try await TestDatabase.admin(owner)
            #expect(
                try await admin.query("SELECT count(*) FROM \(quoteIdentifier(owner.schema)).event_claims").int64(0, 0)
                    == 2)
            await admin.close()
        }
    }

    /// A version expected of a stream is the one committed when the insert begins, as a reading
    /// append sees it. A predecessor claimed and committed while the insert runs (after its claim
    /// took its place in claim order, before its foreign key was checked) would satisfy the
    /// foreign key and leave the successor before its predecessor in claim order, which the
    /// sealer gives positions in. A trigger of the test's own holds the successor's insert at that
    /// moment (whatever version it computed) while the predecessor is committed.
    @Test func aPredecessorCommittedDuringTheInsertIsNotTakenAsTheStreams() async throws {
        try await ElectedSealerTests.withSealingStore("roundtripmidway") { store, watcher, owner in
            let s = quoteIdentifier(owner.schema)
            try await watcher.execute(
                """
                CREATE FUNCTION \(s).hold_successor() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.stream_id = 'midway' AND NEW.stream_version <> 0 THEN
                        PERFORM pg_advisory_lock(4249, 1);
                        PERFORM pg_advisory_unlock(4249, 1);
                    END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER hold_successor BEFORE INSERT ON \(s).event_claims
                    FOR EACH ROW EXECUTE FUNCTION \(s).hold_successor();
                """)
            let holder = try await TestDatabase.admin(owner)
            _ = try await holder.query("SELECT pg_advisory_lock(4249, 1)")
            let successor = Task { try await store.appendAtCommit([testEvent(stream: "midway", expected: .exact(0))]) }
            // Bounded by count: the successor's first insert is held (whatever version it
            // computed: the one after the predecessor, or the refused -1).
            var polls = 0
            while try await watcher.query(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 4249 AND objid = 1 AND NOT granted"
            ).int64(0, 0) != 1 {
                polls += 1
                if polls > 3000 {
                    Issue.record("the successor's insert was never held")
                    break
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            // The sealer waits (the append lock held) until both are committed: it then seals in
            // claim order, whatever it had sealed before.
            let appendLock = try await TestDatabase.admin(owner)
            try await SealerTests.holdAppendLock(appendLock, schema: owner.schema)
            try await TestDatabase.leavePending(owner, stream: "midway", version: 0)
            _ = try await holder.query("SELECT pg_advisory_unlock(4249, 1)")
            await holder.close()
            let appended = try await successor.value
            try await appendLock.execute("COMMIT")
            await appendLock.close()
            #expect(appended.map(\.version) == [1])
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
            let log = try await store.readAll(after: 0).filter { $0.stream == "midway" }
            #expect(log.map(\.version) == [0, 1], "the stream's versions out of log order")
        }
    }

    /// A group whose version must be read to be decided (a stream's first event expects nothing,
    /// a later one a version) is not presumed.
    @Test func aGroupThatNeedsAStreamsVersionIsNotPresumed() {
        let requests = [[testEvent(stream: "s"), testEvent(stream: "s", expected: .exact(0))].map(PreparedEvent.init)]
        #expect(AppendTransaction.Presumption(requests) == nil)
        let fine = [
            [testEvent(stream: "s", expected: .exact(4)), testEvent(stream: "s", expected: .exact(5))].map(
                PreparedEvent.init)
        ]
        #expect(AppendTransaction.Presumption(fine)?.snapshot.streamVersions == ["s": 4])
    }

    /// An expected version too near the largest is not presumed (the versions after it would
    /// overflow): the reading path refuses it as the conflict it is.
    @Test func anExpectedVersionWithNoRoomAfterItIsNotPresumed() async throws {
        #expect(AppendTransaction.Presumption([[PreparedEvent(testEvent(stream: "s", expected: .exact(.max)))]]) == nil)
        let two = [testEvent(stream: "s", expected: .exact(.max - 2)), testEvent(stream: "s")].map(PreparedEvent.init)
        #expect(AppendTransaction.Presumption([two]) == nil)
        try await ElectedSealerTests.withSealingStore("roundtripmax") { store, _, _ in
            do {
                _ = try await store.appendAtCommit([testEvent(stream: "s", expected: .exact(.max))])
                Issue.record("a stream at the largest version was accepted")
            } catch LedgerError.versionConflict(_, _, let actual, _) {
                #expect(actual == nil)
            }
        }
    }

    /// Requests of one group (concurrent callers) decided together: one whose presumed version does
    /// not hold sends the whole group to the reading path, which refuses that request alone and
    /// appends the others.
    @Test func aGroupWithOneWrongPresumptionIsDecidedRequestByRequest() async throws {
        try await TestDatabase.withSchema("roundtripgroup") { owner in
            let store = try await EventStore.open(owner)
            _ = try await store.append([testEvent(stream: "s"), testEvent(stream: "s")])
            await store.close()
            let requests = [
                [testEvent(stream: "s", expected: .exact(0))], [testEvent(stream: "t", expected: .noStream)],
            ].map { $0.map(PreparedEvent.init) }
            let writer = try await TestDatabase.writer(owner)
            let schema = owner.schema
            let outcomes = try await writer.withIsolation { conn in
                do {
                    _ = try AppendTransaction.run(
                        requests: requests, waits: [false, false], schema: schema, channel: "c", lookUpStored: false,
                        sealing: .sealer, on: conn)
                    Issue.record("a wrong presumption was written")
                } catch is AppendTransaction.LookUpStoredAndRetry {}
                return try AppendTransaction.run(
                    requests: requests, waits: [false, false], schema: schema, channel: "c", lookUpStored: true,
                    sealing: .sealer, on: conn)
            }
            await writer.close()
            guard case .failure(.versionConflict(_, _, let actual, _)) = outcomes[0] else {
                Issue.record("the request expecting a version the stream has passed was not refused: \(outcomes[0])")
                return
            }
            #expect(actual == 1)
            #expect(try outcomes[1].get().map(\.version) == [0])
        }
    }

    /// Through a store: the same answers as the path that reads first, typed conflicts when an
    /// expected version does not hold, a retry answered with its original, and every event sealed
    /// once by the sealer.
    @Test func aSealingStoreAnswersAsTheReadingPathDoes() async throws {
        try await ElectedSealerTests.withSealingStore("roundtripstore") { store, watcher, owner in
            let s = quoteIdentifier(owner.schema)
            let first = [testEvent(stream: "a"), testEvent(stream: "a", key: "k1"), testEvent(stream: "b")]
            #expect(try await store.appendAtCommit(first).map(\.version) == [0, 1, 0])
            let second = [testEvent(stream: "a"), testEvent(stream: "b", expected: .exact(0))]
            #expect(try await store.appendAtCommit(second).map(\.version) == [2, 1])
            do {
                _ = try await store.appendAtCommit([testEvent(stream: "a", expected: .exact(1))])
                Issue.record("a version conflict was accepted")
            } catch LedgerError.versionConflict(let stream, _, let actual, _) {
                #expect(stream == "a" && actual == 2)
            }
            do {
                _ = try await store.appendAtCommit([testEvent(stream: "b", expected: .noStream)])
                Issue.record("a stream that exists was taken for new")
            } catch LedgerError.versionConflict(_, _, let actual, _) {
                #expect(actual == 1)
            }
            let again = try await store.appendAtCommit(first)
            #expect(again.map(\.version) == [0, 1, 0] && again.allSatisfy(\.alreadyStored))
            try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
            let log = try await store.readAll(after: 0)
            #expect(log.map(\.eventId) == (first + second).map(\.eventId))
            #expect(log.filter { $0.stream == "a" }.map(\.version) == [0, 1, 2])
            #expect(try await store.verifyChain().isIntact)
        }
    }

    /// Writers racing for one stream's versions, each expecting nothing: every event is claimed
    /// once, the stream's versions follow without a gap, and the sealer seals them all.
    @Test func writersRacingForOneStreamLoseNothingAndDoubleNothing() async throws {
        try await TestDatabase.withSchema("roundtriprace") { owner in
            var stores: [EventStore] = []
            for _ in 0..<4 { stores.append(try await EventStore.open(ElectedSealerTests.sealing(owner))) }
            let watcher = try await TestDatabase.admin(owner)
            do {
                try await Self.race(stores, watcher, owner)
            } catch {
                for store in stores { await store.close() }
                await watcher.close()
                throw error
            }
            for store in stores { await store.close() }
            await watcher.close()
        }
    }

    /// Four stores append ten events each to one stream, each expecting nothing.
    static func race(_ stores: [EventStore], _ watcher: PostgresConnection, _ owner: LedgerConfiguration) async throws {
        let answers = try await withThrowingTaskGroup(of: [CommittedEvent].self) { group in
            for store in stores {
                group.addTask {
                    var mine: [CommittedEvent] = []
                    for _ in 0..<10 { mine += try await store.appendAtCommit([testEvent(stream: "shared")]) }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(answers.map(\.version).sorted() == Array(0..<40))
        let s = quoteIdentifier(owner.schema)
        try await TestDatabase.waitUntil(watcher, "SELECT count(*) FROM \(s).pending_events", equals: 0)
        let log = try await stores[0].readAll(after: 0)
        #expect(Set(log.map(\.eventId)) == Set(answers.map(\.eventId)) && log.count == 40)
        #expect(log.map(\.version) == Array(0..<40), "the stream's versions out of log order")
        #expect(try await stores[0].verifyChain().isIntact)
    }
}

/// The COMMIT's answer lost in one round trip: the transaction's id came back in the pipeline's
/// first segment, so the append asks how it ended and reports its events as its own.
@Suite("Appends in one round trip, the commit's answer lost", .timeLimit(.minutes(3)))
struct OneRoundTripLostCommitTests {
    @Test func anAppendWhoseCommitAnswerIsLostReportsItsEventsAsItsOwn() async throws {
        try await TestDatabase.withSchema("roundtriplost") { config in
            let admin = try await TestDatabase.admin(config)
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            var through = ElectedSealerTests.sealing(config)
            through.connectionString = proxy.connectionString(through.connectionString)
            let store = try await EventStore.open(through)
            _ = try await store.appendAtCommit([testEvent(stream: "before")])
            try await TestDatabase.waitUntil(
                admin, "SELECT count(*) FROM \(quoteIdentifier(config.schema)).pending_events", equals: 0)
            // The append's claims wait behind a claim of the same event another session has not
            // committed: the server has answered the pipeline's first segment long before the
            // COMMIT, whose answer the proxy drops.
            let events = [testEvent(stream: "s", key: "k0"), testEvent(stream: "s", key: "k1")]
            let blocker = try await TestDatabase.writer(config)
            _ = try await blocker.query("BEGIN")
            try await TestDatabase.claimPending(
                on: blocker, schema: config.schema, stream: "s", version: 0, id: events[0].eventId.lowercased)
            proxy.arm()
            let append = Task { try await store.appendAtCommit(events) }
            try await TestDatabase.waitUntil(
                admin,
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name <> 'ledger-test-writer' AND datname = current_database() AND query LIKE '%INSERT INTO%event_claims%'",
                equals: 1)
            _ = try await blocker.query("ROLLBACK")
            await blocker.close()
            let appended = try await append.value
            #expect(proxy.dropped == 1, "no COMMIT answer was dropped")
            #expect(appended.map(\.version) == [0, 1])
            #expect(appended.allSatisfy { !$0.alreadyStored }, "the append reported its own events as stored before it")
            #expect(
                try await admin.query("SELECT count(*) FROM \(quoteIdentifier(config.schema)).event_claims").int64(0, 0)
                    == 3)
            await store.close()
            proxy.close()
            await admin.close()
        }
    }
}
