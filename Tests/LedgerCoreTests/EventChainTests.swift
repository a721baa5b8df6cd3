import Foundation
import Testing
@testable import LedgerCore

private func eventId(_ n: Int) -> UUID {
    let digits = String(n)
    return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)!
}

private let t0 = Timestamp("2026-03-31T08:15:00Z")!

/// A correctly hashed chain of `count` events at positions 1...count.
private func makeChain(_ count: Int) -> [RecordedEvent] {
    var previous = EventChain.genesis
    var events: [RecordedEvent] = []
    var versions: [String: Int64] = [:]
    for p in 1...count {
        let stream = p.isMultiple(of: 2) ? "order-o-2" : "order-o-1"
        let version = versions[stream, default: -1] + 1
        versions[stream] = version
        var e = RecordedEvent(
            position: Int64(p), eventId: eventId(p), stream: stream, version: version,
            type: p == 1 ? "OrderCreated" : "PaymentVerified", schemaVersion: 1,
            payloadText: JSONValue.makeObject([("n", .int(Int64(p))), ("note", .string("é \"\(p)\""))]).canonicalText,
            metadataText: EventMetadata(source: "test", actor: "user:\(p)").json.canonicalText,
            occurredAt: Timestamp(microsecondsSince1970: t0.microseconds + Int64(p) * 1_000),
            recordedAt: Timestamp(microsecondsSince1970: t0.microseconds + Int64(p) * 1_000_000 + 7),
            idempotencyKey: p.isMultiple(of: 3) ? "key:\(p)" : nil,
            hash: [])
        e.hash = EventChain.expectedHash(of: e, previous: previous)
        previous = e.hash
        events.append(e)
    }
    return events
}

private func verify(_ events: [RecordedEvent]) -> ChainVerifier {
    var verifier = ChainVerifier()
    for e in events { verifier.consume(e) }
    return verifier
}

@Suite("EventChain and ChainVerifier")
struct EventChainTests {
    static let chainLength = 8

    @Test("genesis is 32 zero bytes; a new verifier starts from it")
    func genesis() {
        #expect(EventChain.genesis == [UInt8](repeating: 0, count: 32))
        let v = ChainVerifier()
        #expect(v.previous == EventChain.genesis)
        #expect(v.lastPosition == 0)
        #expect(v.verified == 0)
        #expect(v.firstProblem == nil)
    }

    @Test("an intact chain verifies")
    func intact() {
        let chain = makeChain(Self.chainLength)
        let v = verify(chain)
        #expect(v.firstProblem == nil)
        #expect(v.verified == Int64(Self.chainLength))
        #expect(v.lastPosition == Int64(Self.chainLength))
        #expect(v.previous == chain.last!.hash)
        #expect(Set(chain.map(\.hash)).count == Self.chainLength)
        #expect(chain.allSatisfy { $0.hash.count == 32 })
    }

    @Test("hash = SHA-256(previous hash || canonical bytes)")
    func hashDefinition() {
        let chain = makeChain(3)
        var previous = EventChain.genesis
        for e in chain {
            let canonical = EventChain.canonicalBytes(
                position: e.position, eventId: e.eventId.lowercased, stream: e.stream, version: e.version, type: e.type,
                schemaVersion: e.schemaVersion, occurredAt: e.occurredAt, recordedAt: e.recordedAt,
                idempotencyKey: e.idempotencyKey, payloadText: e.payloadText, metadataText: e.metadataText)
            #expect(e.hash == SHA256.hash(previous + canonical))
            #expect(e.hash == EventChain.hash(previous: previous, canonical: canonical))
            previous = e.hash
        }
        // The same event after a different predecessor hashes differently.
        #expect(EventChain.expectedHash(of: chain[1], previous: EventChain.genesis) != chain[1].hash)
    }

    @Test("canonical bytes: tag and length-prefixed fields")
    func canonicalLayout() {
        func field(_ s: String) -> [UInt8] {
            let n = UInt32(s.utf8.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(s.utf8)
        }
        let bytes = EventChain.canonicalBytes(
            position: 12, eventId: "id", stream: "s-é", version: 0, type: "T", schemaVersion: 2,
            occurredAt: Timestamp(microsecondsSince1970: -5), recordedAt: Timestamp(microsecondsSince1970: 1_000),
            idempotencyKey: "k", payloadText: "{}", metadataText: #"{"a": 1}"#)
        var expected: [UInt8] = []
        expected +=
            field("ledger-event-v1") + field("12") + field("id") + field("s-é") + field("0") + field("T") + field("2")
        expected += field("-5") + field("1000") + [1] + field("k") + field("{}") + field(#"{"a": 1}"#)
        #expect(bytes == expected)

        let withoutKey = EventChain.canonicalBytes(
            position: 12, eventId: "id", stream: "s-é", version: 0, type: "T", schemaVersion: 2,
            occurredAt: Timestamp(microsecondsSince1970: -5), recordedAt: Timestamp(microsecondsSince1970: 1_000),
            idempotencyKey: nil, payloadText: "{}", metadataText: #"{"a": 1}"#)
        var expectedWithoutKey: [UInt8] = []
        expectedWithoutKey +=
            field("ledger-event-v1") + field("12") + field("id") + field("s-é") + field("0") + field("T") + field("2")
        expectedWithoutKey += field("-5") + field("1000") + [0] + field("{}") + field(#"{"a": 1}"#)
        #expect(withoutKey == expectedWithoutKey)
    }

    @Test("no two different events share canonical bytes")
    func fieldBoundaries() {
        func bytes(stream: String, type: String, key: String?) -> [UInt8] {
            EventChain.canonicalBytes(
                position: 1, eventId: "e", stream: stream, version: 0, type: type, schemaVersion: 1,
                occurredAt: t0, recordedAt: t0, idempotencyKey: key, payloadText: "{}", metadataText: "{}")
        }
        #expect(bytes(stream: "ab", type: "C", key: nil) != bytes(stream: "a", type: "bC", key: nil))
        #expect(bytes(stream: "a", type: "B", key: nil) != bytes(stream: "a", type: "B", key: ""))
    }

    @Test("a changed payloadText is reported as a hash mismatch at its position", arguments: 1...chainLength)
    func changedPayload(position: Int) throws {
        var chain = makeChain(Self.chainLength)
        let original = chain[position - 1]
        chain[position - 1].payloadText = #"{"n": 999999, "note": "tampered"}"#
        let v = verify(chain)
        let problem = try #require(v.firstProblem)
        let expected = EventChain.expectedHash(
            of: chain[position - 1], previous: position == 1 ? EventChain.genesis : chain[position - 2].hash)
        #expect(
            problem
                == .hashMismatch(
                    position: Int64(position), stored: original.hash.hexString, expected: expected.hexString))
        #expect(problem.position == Int64(position))
        #expect(
            problem.description
                == "position \(position): stored hash \(original.hash.hexString) but the event's content hashes to \(expected.hexString)"
        )
        // Verification continues from the stored hash, so every event is still consumed.
        #expect(v.verified == Int64(Self.chainLength))
        #expect(v.lastPosition == Int64(Self.chainLength))
    }

    @Test("re-formatting the payload (same JSON, non-canonical text) breaks the chain")
    func nonCanonicalPayload() throws {
        var chain = makeChain(4)
        let value = try JSONValue.parse(chain[2].payloadText)
        chain[2].payloadText = value.compactText
        #expect(try JSONValue.parse(chain[2].payloadText) == value)
        #expect(verify(chain).firstProblem?.position == 3)
    }

    static let tamperings: [(String, @Sendable (inout RecordedEvent) -> Void)] = [
        ("stream", { $0.stream += "x" }),
        ("type", { $0.type = "Refunded" }),
        ("version", { $0.version += 1 }),
        ("schemaVersion", { $0.schemaVersion = 2 }),
        ("eventId", { $0.eventId = eventId(999) }),
        ("metadataText", { $0.metadataText = "{}" }),
        ("occurredAt", { $0.occurredAt.microseconds += 1 }),
        ("recordedAt", { $0.recordedAt.microseconds -= 1 }),
        ("idempotencyKey added", { $0.idempotencyKey = "new-key" }),
        ("stored hash", { $0.hash[0] ^= 0x01 }),
    ]

    @Test("any changed field is reported at its position", arguments: 0..<tamperings.count)
    func changedField(index: Int) throws {
        var chain = makeChain(Self.chainLength)
        Self.tamperings[index].1(&chain[4])
        let problem = try #require(
            verify(chain).firstProblem, "tampering with \(Self.tamperings[index].0) went unnoticed")
        guard case .hashMismatch(let position, _, _) = problem else {
            Issue.record("expected a hash mismatch, got \(problem)")
            return
        }
        #expect(position == 5)
    }

    @Test("a removed idempotencyKey is reported")
    func removedKey() throws {
        var chain = makeChain(Self.chainLength)
        #expect(chain[5].idempotencyKey == "key:6")
        chain[5].idempotencyKey = nil
        #expect(verify(chain).firstProblem?.position == 6)
    }

    @Test("a removed event is reported as a gap", arguments: 1..<chainLength)
    func removedEvent(position: Int) throws {
        var chain = makeChain(Self.chainLength)
        chain.remove(at: position - 1)
        let v = verify(chain)
        let problem = try #require(v.firstProblem)
        #expect(problem == .gap(expected: Int64(position), found: Int64(position + 1)))
        #expect(problem.position == Int64(position))
        #expect(problem.description == "position \(position) is missing (next stored position is \(position + 1))")
        #expect(v.verified == Int64(Self.chainLength - 1))
    }

    @Test("a removed and renumbered event is reported as a hash mismatch")
    func removedAndRenumbered() throws {
        var chain = makeChain(Self.chainLength)
        chain.remove(at: 2)
        for i in 2..<chain.count { chain[i].position -= 1 }
        let problem = try #require(verify(chain).firstProblem)
        guard case .hashMismatch(let position, _, _) = problem else {
            Issue.record("expected a hash mismatch, got \(problem)")
            return
        }
        #expect(position == 3)
    }

    @Test("swapped and duplicated events are reported as gaps")
    func reordered() throws {
        var swapped = makeChain(Self.chainLength)
        swapped.swapAt(3, 4)
        #expect(verify(swapped).firstProblem == .gap(expected: 4, found: 5))

        var duplicated = makeChain(Self.chainLength)
        duplicated.insert(duplicated[2], at: 3)
        #expect(verify(duplicated).firstProblem == .gap(expected: 4, found: 3))
    }

    @Test("only the first problem is kept")
    func firstProblemOnly() {
        var chain = makeChain(Self.chainLength)
        chain[1].payloadText = "{}"
        chain.remove(at: 5)
        #expect(verify(chain).firstProblem?.position == 2)
    }

    @Test("RecordedEvent.jsonLine is one JSON object with every field")
    func recordedJSONLine() throws {
        var chain = makeChain(3)
        chain[2].idempotencyKey = "key \"quoted\" \\ é"
        for e in chain {
            let line = e.jsonLine
            #expect(!line.contains("\n"))
            let v = try JSONValue.parse(line)
            #expect(v["position"] == .int(e.position))
            #expect(v["eventId"] == .string(e.eventId.lowercased))
            #expect(v["stream"] == .string(e.stream))
            #expect(v["version"] == .int(e.version))
            #expect(v["type"] == .string(e.type))
            #expect(v["schemaVersion"] == .int(Int64(e.schemaVersion)))
            #expect(v["occurredAt"] == .string(e.occurredAt.iso8601))
            #expect(v["recordedAt"] == .string(e.recordedAt.iso8601))
            #expect(v["idempotencyKey"] == (e.idempotencyKey.map { JSONValue.string($0) } ?? .null))
            #expect(v["metadata"]?.canonicalText == e.metadataText)
            #expect(v["payload"]?.canonicalText == e.payloadText)
            #expect(v["hash"] == .string(e.hash.hexString))
        }
    }

    @Test("EventMetadata.json holds only the fields that are set")
    func metadataJSON() {
        #expect(EventMetadata().json.canonicalText == "{}")
        #expect(EventMetadata(source: "s").json.canonicalText == #"{"source": "s"}"#)
        #expect(
            EventMetadata(correlationId: "c", causationId: "k", source: "s", actor: "a").json.canonicalText
                == #"{"actor": "a", "source": "s", "causationId": "k", "correlationId": "c"}"#)
    }

    @Test("ExpectedVersion descriptions")
    func expectedVersionDescriptions() {
        #expect(ExpectedVersion.any.description == "any")
        #expect(ExpectedVersion.noStream.description == "no-stream")
        #expect(ExpectedVersion.exact(3).description == "3")
    }
}
