import Foundation
import LedgerCore
@testable import LedgerLog
import Testing

/// The decisions of an append, with no database: a snapshot of the log and the requests in,
/// outcomes and the transaction's step out.
@Suite("Append plan")
struct AppendPlanTests {
    /// What a request should come to.
    enum Outcome: Equatable, Sendable {
        /// (version, position, alreadyStored) per event.
        case appended([Placed])
        case versionConflict(stream: String, actual: Int64?)
        case idempotencyConflict(storedPosition: Int64, reason: String)
    }

    struct Placed: Equatable, Sendable {
        var version: Int64
        var position: Int64
        var alreadyStored: Bool
        init(_ version: Int64, _ position: Int64, _ alreadyStored: Bool = false) {
            self.version = version
            self.position = position
            self.alreadyStored = alreadyStored
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var versions: [String: Int64] = [:]
        /// nil: the fast path (stored events not looked up).
        var stored: [StoredEvent]? = []
        var requests: [[NewEvent]]
        /// nil: the plan must ask for the stored events to be looked up.
        var expected: [Outcome]?
        var testDescription: String { name }
    }

    static let lastPosition: Int64 = 10

    static func id(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))! }

    static func event(
        _ n: Int, _ stream: String = "a", _ expected: ExpectedVersion = .any, key: String? = nil,
        type: String = "PaymentVerified", payload: JSONValue = .makeObject([("n", .int(1))])
    ) -> NewEvent {
        NewEvent(
            eventId: id(n), stream: stream, type: type, payload: payload, metadata: EventMetadata(source: "test"),
            occurredAt: Timestamp("2026-03-31T08:15:00Z")!, idempotencyKey: key, expectedVersion: expected)
    }

    /// Event `n` as stored at `position` with version 3 (the content of ``event(_:_:_:key:type:payload:)``'s defaults).
    static func stored(
        _ n: Int, at position: Int64, key: String? = nil, payload: JSONValue = .makeObject([("n", .int(1))])
    ) -> StoredEvent {
        StoredEvent(
            position: position, eventId: id(n), key: key, stream: "a", version: 3, type: "PaymentVerified",
            schemaVersion: 1, payloadText: payload.canonicalText)
    }

    static let cases: [Case] = [
        Case(
            name: "a new stream gets versions 0, 1 and the positions after the head",
            requests: [[event(1, "a", .noStream), event(2, "a", .exact(0))]],
            expected: [.appended([Placed(0, 11), Placed(1, 12)])]),
        Case(
            name: "the expected version holds", versions: ["a": 4],
            requests: [[event(1, "a", .exact(4))]], expected: [.appended([Placed(5, 11)])]),
        Case(
            name: "a failed check on the fast path asks for the stored events", versions: ["a": 4], stored: nil,
            requests: [[event(1, "a", .exact(3))]], expected: nil),
        Case(
            name: "a wrong expected version is a version conflict", versions: ["a": 4],
            requests: [[event(1, "a", .exact(3))]], expected: [.versionConflict(stream: "a", actual: 4)]),
        Case(
            name: "no stream expected, but it exists", versions: ["a": 0],
            requests: [[event(1, "a", .noStream)]], expected: [.versionConflict(stream: "a", actual: 0)]),
        Case(
            name: "an exact version on a missing stream", requests: [[event(1, "b", .exact(0))]],
            expected: [.versionConflict(stream: "b", actual: nil)]),
        Case(
            name: "a retry of a stored event returns the original, whatever its expected version", versions: ["a": 3],
            stored: [stored(1, at: 7, key: "k1")], requests: [[event(1, "a", .noStream, key: "k1")]],
            expected: [.appended([Placed(3, 7, true)])]),
        Case(
            name: "a retry under a new id is found by its key", versions: ["a": 3],
            stored: [stored(1, at: 7, key: "k1")], requests: [[event(2, "a", key: "k1")]],
            expected: [.appended([Placed(3, 7, true)])]),
        Case(
            name: "a retry with another payload is refused", versions: ["a": 3],
            stored: [stored(1, at: 7)], requests: [[event(1, payload: .makeObject([("n", .int(2))]))]],
            expected: [.idempotencyConflict(storedPosition: 7, reason: "the payload differs")]),
        Case(
            name: "payloads are compared as bytes, not as canonically equivalent text", versions: ["a": 3],
            stored: [stored(1, at: 7, payload: .makeObject([("s", .string("\u{E9}"))]))],
            requests: [[event(1, payload: .makeObject([("s", .string("e\u{301}"))]))]],
            expected: [.idempotencyConflict(storedPosition: 7, reason: "the payload differs")]),
        Case(
            name: "a retry on another stream is refused", versions: ["a": 3],
            stored: [stored(1, at: 7)], requests: [[event(1, "b")]],
            expected: [.idempotencyConflict(storedPosition: 7, reason: "stored on stream \"a\", retried on \"b\"")]),
        Case(
            name: "a retry as another type is refused", versions: ["a": 3],
            stored: [stored(1, at: 7)], requests: [[event(1, type: "Refunded")]],
            expected: [
                .idempotencyConflict(storedPosition: 7, reason: "stored as PaymentVerified v1, retried as Refunded v1")
            ]),
        Case(
            name: "a retry with another key is refused", versions: ["a": 3],
            stored: [stored(1, at: 7, key: "k1")], requests: [[event(1, key: "k2")]],
            expected: [
                .idempotencyConflict(
                    storedPosition: 7, reason: "stored with idempotency key \"k1\", retried with \"k2\"")
            ]),
        Case(
            name: "an id and a key of two stored events are refused", versions: ["a": 3],
            stored: [stored(1, at: 7, key: "k1"), stored(2, at: 8, key: "k2")], requests: [[event(1, key: "k2")]],
            expected: [
                .idempotencyConflict(
                    storedPosition: 7,
                    reason: "the event id and the idempotency key belong to two different stored events")
            ]),
        Case(
            name: "a refused request changes nothing for the next ones",
            requests: [[event(1, "a", .noStream)], [event(2, "a", .noStream)], [event(3, "b")]],
            expected: [
                .appended([Placed(0, 11)]), .versionConflict(stream: "a", actual: 0), .appended([Placed(0, 12)]),
            ]),
        Case(
            name: "a refused request's new rows are forgotten",
            requests: [[event(1, "a"), event(2, "b", .exact(5))], [event(1, "a", .noStream)]],
            expected: [.versionConflict(stream: "b", actual: nil), .appended([Placed(0, 11)])]),
        Case(
            name: "the same event twice in a group is written once, and the second is reported already stored",
            stored: nil,
            requests: [[event(1, "a", key: "k")], [event(1, "a", key: "k")]],
            expected: [.appended([Placed(0, 11)]), .appended([Placed(0, 11, true)])]),
        Case(
            name: "two identical lines of one batch: stored once, the second reported already stored", stored: nil,
            requests: [[event(1, "a", key: "k"), event(1, "a", key: "k")]],
            expected: [.appended([Placed(0, 11), Placed(0, 11, true)])]),
        Case(
            name:
                "a retry of an event another request of this group appends, that differs, is refused naming its position",
            requests: [[event(1, "a")], [event(1, "a", payload: .makeObject([("n", .int(2))]))]],
            expected: [
                .appended([Placed(0, 11)]), .idempotencyConflict(storedPosition: 11, reason: "the payload differs"),
            ]),
        Case(
            name: "one batch repeating a key with different content is refused with no position (nothing is stored)",
            requests: [[event(1, "a", key: "k"), event(2, "a", key: "k", payload: .makeObject([("n", .int(2))]))]],
            expected: [.idempotencyConflict(storedPosition: 0, reason: "the payload differs")]),
    ]

    static func snapshot(_ c: Case, clock: Timestamp = Timestamp("2026-04-01T00:00:00Z")!) -> AppendSnapshot {
        AppendSnapshot(
            lastPosition: lastPosition, lastHash: [UInt8](repeating: 7, count: 32),
            lastRecordedAt: Timestamp("2026-03-31T12:00:00Z")!, clock: clock, streamVersions: c.versions,
            stored: c.stored)
    }

    static func outcome(_ r: Result<[AppendedEvent], LedgerError>) -> Outcome? {
        switch r {
        case .success(let events): return .appended(events.map { Placed($0.version, $0.position, $0.alreadyStored) })
        case .failure(.versionConflict(let stream, _, let actual, _)):
            return .versionConflict(stream: stream, actual: actual)
        case .failure(.idempotencyConflict(_, _, let position, let reason)):
            return .idempotencyConflict(storedPosition: position, reason: reason)
        case .failure: return nil
        }
    }

    @Test(arguments: cases)
    func decides(_ c: Case) {
        let plan = AppendPlan(requests: c.requests.map { $0.map(PreparedEvent.init) }, snapshot: Self.snapshot(c))
        guard let expected = c.expected else {
            guard case .lookUpStored = plan.step else {
                Issue.record("expected a look-up of stored events, got \(plan.step)")
                return
            }
            return
        }
        #expect(plan.outcomes.map(Self.outcome) == expected)
        let newPositions = Set(
            expected.flatMap { o -> [Int64] in
                guard case .appended(let placed) = o else { return [] }
                return placed.filter { !$0.alreadyStored }.map(\.position)
            })
        switch plan.step {
        case .lookUpStored: Issue.record("the plan asked for a look-up it had already")
        case .rollBack: #expect(newPositions.isEmpty)
        case .write(let rows, let head, _):
            #expect(rows.map(\.position) == newPositions.sorted())
            #expect(head.position == rows.last?.position)
        }
    }

    /// Rows chain from the head's hash, recorded at the later of the database clock and the head's
    /// time (the log's time never goes back).
    @Test(arguments: ["2026-04-01T00:00:00Z", "2026-03-30T00:00:00Z"])
    func rowsChainFromTheHead(clock: String) throws {
        let c = Case(name: "", requests: [[Self.event(1, "a", key: "k\t1")], [Self.event(2, "b")]], expected: [])
        let snapshot = Self.snapshot(c, clock: Timestamp(clock)!)
        let plan = AppendPlan(requests: c.requests.map { $0.map(PreparedEvent.init) }, snapshot: snapshot)
        guard case .write(let rows, let head, let recordedAt) = plan.step else {
            Issue.record("expected a write, got \(plan.step)")
            return
        }
        #expect(recordedAt == max(snapshot.clock, snapshot.lastRecordedAt))
        var previous = snapshot.lastHash
        for (row, version) in zip(rows, [Int64(0), 0]) {
            let e = row.prepared.event
            previous = EventChain.hash(
                previous: previous,
                canonical: EventChain.canonicalBytes(
                    position: row.position, eventId: e.eventId.lowercased, stream: e.stream, version: version,
                    type: e.type,
                    schemaVersion: e.schemaVersion, occurredAt: e.occurredAt, recordedAt: recordedAt,
                    idempotencyKey: e.idempotencyKey,
                    payloadText: e.payload.canonicalText, metadataText: e.metadata.json.canonicalText))
            #expect(row.hash == previous)
        }
        #expect(rows.map(\.position) == [11, 12])
        #expect(head == LogHead(position: 12, hash: previous, recordedAt: recordedAt))
    }
}

@Suite("Conflict messages")
struct ConflictMessageTests {
    @Test func aKeyRepeatedInOneBatchIsNotSaidToBeStoredAtPositionZero() {
        let e = LedgerError.idempotencyConflict(
            key: "k", eventId: UUID(), storedPosition: 0, reason: "the payload differs")
        #expect(!e.description.contains("position 0"))
        #expect(e.description.contains("twice in this batch"))
        let stored = LedgerError.idempotencyConflict(
            key: "k", eventId: UUID(), storedPosition: 7, reason: "the payload differs")
        #expect(stored.description.contains("already stored at position 7"))
    }

    @Test func keysAndStreamsAreEscapedAndCut() {
        let key = "\u{1B}[31m\nledger: appended 999 events" + String(repeating: "k", count: 1_000_000)
        let e = LedgerError.idempotencyConflict(key: key, eventId: UUID(), storedPosition: 3, reason: "r")
        #expect(!e.description.contains("\u{1B}") && !e.description.contains("\n"))
        #expect(e.description.count < 1_000)
        let v = LedgerError.versionConflict(stream: "s\u{1B}]0;x\u{7}", expected: .noStream, actual: 1, eventId: UUID())
        #expect(!v.description.contains("\u{1B}") && !v.description.contains("\u{7}"))
    }
}
