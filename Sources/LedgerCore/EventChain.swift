/// The log's hash chain: `hash(n) = SHA-256(hash(n-1) || canonicalBytes(n))`, with 32 zero bytes
/// before the first event. Any later change to a stored event changes its canonical bytes, so
/// re-hashing the log finds the first position that no longer verifies.
public enum EventChain {
    public static let genesis = [UInt8](repeating: 0, count: 32)
    /// The first field of every event's canonical bytes.
    public static let tag = Array("ledger-event-v1".utf8)

    /// Appends one field to canonical bytes: its 4-byte big-endian length, then the bytes. A reader
    /// that has the stored fields as text builds ``canonicalBytes`` with this, in the same order.
    @inlinable
    public static func appendField<S: Collection>(_ bytes: S, to out: inout [UInt8]) where S.Element == UInt8 {
        let n = UInt32(bytes.count)
        out.append(UInt8(truncatingIfNeeded: n >> 24))
        out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8))
        out.append(UInt8(truncatingIfNeeded: n))
        out.append(contentsOf: bytes)
    }

    /// Appends an integer as one field, in decimal (what `String(value)` spells).
    @inlinable
    public static func appendField(decimal value: Int64, to out: inout [UInt8]) {
        let lengthAt = out.count
        out.append(0)
        out.append(0)
        out.append(0)
        out.append(0)
        DecimalText.append(value, to: &out)
        // At most 20 characters: the length's three high bytes stay 0.
        out[lengthAt + 3] = UInt8(truncatingIfNeeded: out.count - lengthAt - 4)
    }

    /// The canonical layout of an event, written once: every field length-prefixed (4-byte big-endian
    /// length, then its bytes), so no two events share bytes. The tag; the position, the event id
    /// (lowercase 8-4-4-4-12 text), the stream, the stream version, the type, the schema version, the
    /// occurred and recorded times (microseconds since 1970, in decimal); the idempotency key (a 0
    /// byte for none, else a 1 byte and the key); the payload and metadata (jsonb's canonical text).
    /// The writer (``canonicalBytes``) and the log's binary scanner both call it, each with the
    /// bytes it has; SQL's `chain_hash` (Functions/chain_hash.sql) is checked against it by a test.
    @inlinable
    public static func appendCanonical<
        Id: Collection, Stream: Collection, Kind: Collection, Key: Collection, Payload: Collection, Metadata: Collection
    >(
        to out: inout [UInt8], position: Int64, eventId: Id, stream: Stream, version: Int64, type: Kind,
        schemaVersion: Int64,
        occurredAt: Int64, recordedAt: Int64, idempotencyKey: Key?, payload: Payload, metadata: Metadata
    )
    where
        Id.Element == UInt8, Stream.Element == UInt8, Kind.Element == UInt8, Key.Element == UInt8,
        Payload.Element == UInt8, Metadata.Element == UInt8
    {
        appendField(tag, to: &out)
        appendField(decimal: position, to: &out)
        appendField(eventId, to: &out)
        appendField(stream, to: &out)
        appendField(decimal: version, to: &out)
        appendField(type, to: &out)
        appendField(decimal: schemaVersion, to: &out)
        appendField(decimal: occurredAt, to: &out)
        appendField(decimal: recordedAt, to: &out)
        if let idempotencyKey {
            out.append(1)
            appendField(idempotencyKey, to: &out)
        } else {
            out.append(0)
        }
        appendField(payload, to: &out)
        appendField(metadata, to: &out)
    }

    /// An event's canonical bytes from its typed values (``appendCanonical``'s layout).
    public static func canonicalBytes(
        position: Int64, eventId: String, stream: String, version: Int64, type: String, schemaVersion: Int32,
        occurredAt: Timestamp, recordedAt: Timestamp, idempotencyKey: String?, payloadText: String, metadataText: String
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + payloadText.utf8.count + metadataText.utf8.count)
        appendCanonical(
            to: &out, position: position, eventId: eventId.utf8, stream: stream.utf8, version: version, type: type.utf8,
            schemaVersion: Int64(schemaVersion), occurredAt: occurredAt.microseconds,
            recordedAt: recordedAt.microseconds,
            idempotencyKey: idempotencyKey?.utf8, payload: payloadText.utf8, metadata: metadataText.utf8)
        return out
    }

    public static func hash(previous: [UInt8], canonical: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(previous)
        h.update(canonical)
        return h.finalize()
    }

    /// The hash `event` should carry given the previous event's hash.
    public static func expectedHash(of event: RecordedEvent, previous: [UInt8]) -> [UInt8] {
        hash(
            previous: previous,
            canonical: canonicalBytes(
                position: event.position, eventId: event.eventId.lowercased, stream: event.stream,
                version: event.version,
                type: event.type, schemaVersion: event.schemaVersion, occurredAt: event.occurredAt,
                recordedAt: event.recordedAt, idempotencyKey: event.idempotencyKey,
                payloadText: event.payloadText, metadataText: event.metadataText))
    }
}

/// Streams events in position order and reports the first place the chain does not verify.
public struct ChainVerifier: Sendable {
    public enum Problem: Hashable, Sendable, CustomStringConvertible {
        /// The stored hash differs from the recomputed one: this event (or the one before) was changed.
        case hashMismatch(position: Int64, stored: String, expected: String)
        /// A position is missing or out of order (an event was deleted or inserted).
        case gap(expected: Int64, found: Int64)

        public var position: Int64 {
            switch self {
            case .hashMismatch(let p, _, _): return p
            case .gap(let expected, _): return expected
            }
        }

        public var description: String {
            switch self {
            case .hashMismatch(let p, let stored, let expected):
                return "position \(p): stored hash \(stored) but the event's content hashes to \(expected)"
            case .gap(let expected, let found) where found > expected:
                return "position \(expected) is missing (next stored position is \(found))"
            case .gap(let expected, let found):
                return "position \(found) appears again or out of order where \(expected) was expected"
            }
        }
    }

    public private(set) var previous: [UInt8] = EventChain.genesis
    public private(set) var lastPosition: Int64 = 0
    public private(set) var verified: Int64 = 0
    public private(set) var firstProblem: Problem?

    public init() {}

    /// A verifier that starts after `position`, whose event's hash is `hash`: it checks that what
    /// follows chains onto that event, trusting what comes before it (an anchor proven earlier).
    public init(after position: Int64, hash: [UInt8]) {
        precondition(position >= 0 && hash.count == EventChain.genesis.count, "a start needs a position and a hash")
        previous = hash
        lastPosition = position
    }

    /// Checks one event; after the first problem the chain continues from the stored hash, so later
    /// events are still checked against their own predecessor.
    public mutating func consume(_ event: RecordedEvent) {
        consume(
            position: event.position, expected: EventChain.expectedHash(of: event, previous: previous),
            stored: event.hash)
    }

    /// Checks one event whose hash was computed by the caller from ``previous`` and the event's
    /// canonical bytes (a reader that builds them straight from the stored row).
    public mutating func consume(position: Int64, expected: [UInt8], stored: [UInt8]) {
        expected.withUnsafeBytes { expected in
            stored.withUnsafeBytes { consume(position: position, expected: expected, stored: $0) }
        }
    }

    /// ``consume(position:expected:stored:)`` with both hashes lent where they lie: no array is
    /// made or freed per event (two of each, allocated and freed under `perf` on the reading
    /// thread of an audit).
    public mutating func consume(position: Int64, expected: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer) {
        if position != lastPosition + 1, firstProblem == nil {
            firstProblem = .gap(expected: lastPosition + 1, found: position)
        }
        if firstProblem == nil, !expected.elementsEqual(stored) {
            firstProblem = .hashMismatch(position: position, stored: stored.hexString, expected: expected.hexString)
        }
        if previous.count == stored.count {
            previous.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
        } else {
            previous = Array(stored)
        }
        lastPosition = position
        verified += 1
    }
}
