import Foundation

/// What the writer expects a stream's current version to be when appending to it.
public enum ExpectedVersion: Hashable, Sendable, CustomStringConvertible {
    /// No check.
    case any
    /// The stream must have no events yet.
    case noStream
    /// The stream's last event must have exactly this version (versions start at 0).
    case exact(Int64)

    public var description: String {
        switch self {
        case .any: return "any"
        case .noStream: return "no-stream"
        case .exact(let v): return String(v)
        }
    }
}

/// Who and what caused a fact, carried beside its payload.
public struct EventMetadata: Hashable, Sendable {
    public var correlationId: String?
    public var causationId: String?
    /// Which service or store reported the fact (e.g. `order-service`, `appstore`).
    public var source: String?
    /// Which person or process acted (e.g. `user:42`, `support:alice`).
    public var actor: String?

    public init(correlationId: String? = nil, causationId: String? = nil, source: String? = nil, actor: String? = nil) {
        self.correlationId = correlationId
        self.causationId = causationId
        self.source = source
        self.actor = actor
    }

    static let fields = ["correlationId", "causationId", "source", "actor"]

    public var json: JSONValue {
        var members: [(String, JSONValue)] = []
        if let correlationId { members.append(("correlationId", .string(correlationId))) }
        if let causationId { members.append(("causationId", .string(causationId))) }
        if let source { members.append(("source", .string(source))) }
        if let actor { members.append(("actor", .string(actor))) }
        return .makeObject(members)
    }
}

/// A fact to append.
public struct NewEvent: Hashable, Sendable {
    /// Unique forever; a retry with the same id and content returns the original position.
    public var eventId: UUID
    public var stream: String
    public var type: String
    public var schemaVersion: Int32
    /// A JSON object. Stored as `jsonb`; hashed in its canonical form.
    public var payload: JSONValue
    public var metadata: EventMetadata
    /// When the fact happened, by the source's clock.
    public var occurredAt: Timestamp
    /// A business key unique across the log (e.g. `appstore:tx:2000000123:verified`).
    public var idempotencyKey: String?
    public var expectedVersion: ExpectedVersion

    public init(
        eventId: UUID = .systemRandom(), stream: String, type: String, schemaVersion: Int32 = 1, payload: JSONValue,
        metadata: EventMetadata = EventMetadata(), occurredAt: Timestamp, idempotencyKey: String? = nil,
        expectedVersion: ExpectedVersion = .any
    ) {
        self.eventId = eventId
        self.stream = stream
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.metadata = metadata
        self.occurredAt = occurredAt
        self.idempotencyKey = idempotencyKey
        self.expectedVersion = expectedVersion
    }
}

/// A fact as stored in the log.
public struct RecordedEvent: Hashable, Sendable {
    /// Gapless global position, starting at 1, in commit order.
    public var position: Int64
    public var eventId: UUID
    public var stream: String
    /// Version within the stream, starting at 0.
    public var version: Int64
    public var type: String
    public var schemaVersion: Int32
    /// The payload as PostgreSQL prints the stored `jsonb` (equal to ``JSONValue/canonicalText``).
    public var payloadText: String
    public var metadataText: String
    public var occurredAt: Timestamp
    /// The database clock at append (never earlier than the previous event's).
    public var recordedAt: Timestamp
    public var idempotencyKey: String?
    /// SHA-256 over the previous event's hash and this event's canonical bytes.
    public var hash: [UInt8]

    public init(
        position: Int64, eventId: UUID, stream: String, version: Int64, type: String, schemaVersion: Int32,
        payloadText: String, metadataText: String, occurredAt: Timestamp, recordedAt: Timestamp,
        idempotencyKey: String?, hash: [UInt8]
    ) {
        self.position = position
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.type = type
        self.schemaVersion = schemaVersion
        self.payloadText = payloadText
        self.metadataText = metadataText
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        self.idempotencyKey = idempotencyKey
        self.hash = hash
    }

    /// One JSON line, as `ledger read` prints it.
    public var jsonLine: String {
        var s = "{\"position\":\(position),\"eventId\":\"\(eventId.lowercased)\","
        var out: [UInt8] = []
        JSONValue.writeString(stream, into: &out)
        s += "\"stream\":" + String(decoding: out, as: UTF8.self)
        s += ",\"version\":\(version),\"type\":\"\(type)\",\"schemaVersion\":\(schemaVersion)"
        s += ",\"occurredAt\":\"\(occurredAt.iso8601)\",\"recordedAt\":\"\(recordedAt.iso8601)\""
        if let idempotencyKey {
            out.removeAll(keepingCapacity: true)
            JSONValue.writeString(idempotencyKey, into: &out)
            s += ",\"idempotencyKey\":" + String(decoding: out, as: UTF8.self)
        } else {
            s += ",\"idempotencyKey\":null"
        }
        s += ",\"metadata\":\(metadataText),\"payload\":\(payloadText),\"hash\":\"\(hash.hexString)\"}"
        return s
    }
}

extension UUID {
    /// The canonical lowercase form, as PostgreSQL prints a `uuid` (8-4-4-4-12 hexadecimal digits).
    /// Written digit by digit: `uuidString` formats with `snprintf`, then `lowercased()` makes a
    /// second string. Views whose ids are kept as 16 bytes are spelled out again whenever they are
    /// written, and that was 12 % of the thread that puts a snapshot into tables kept to a memory
    /// limit (`perf`).
    public var lowercased: String { spelled(letters: UInt8(ascii: "a")) }

    /// The uppercase form (`uuidString`'s), spelled the same way.
    public var uppercased: String { spelled(letters: UInt8(ascii: "A")) }

    /// The 8-4-4-4-12 text, digits above 9 from `letters` on.
    private func spelled(letters: UInt8) -> String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var j = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[j] = UInt8(ascii: "-")
                        j += 1
                    }
                    out[j] = Self.hexDigit(bytes[i] >> 4, letters)
                    out[j + 1] = Self.hexDigit(bytes[i] & 0x0F, letters)
                    j += 2
                }
                return j
            }
        }
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8, _ letters: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : letters + v - 10
    }

    /// A random (version 4) UUID from the system's generator: on Linux two `getrandom` calls.
    /// `UUID()` there opens, reads and closes `/dev/urandom` for each one (a file descriptor and
    /// three system calls, about three times the time).
    public static func systemRandom() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next(), low = generator.next()
        return UUID(
            bytes: (0..<16).lazy.map { i in UInt8(truncatingIfNeeded: (i < 8 ? high : low) >> (8 * UInt64(i % 8))) },
            version: 4)
    }

    /// The first 16 of `bytes` (a hash of a name: the same name, the same id) with RFC 4122's
    /// `version` (4 bits) and variant bits set.
    public init(bytes: some Sequence<UInt8>, version: UInt8) {
        var b = Array(bytes.prefix(16))
        precondition(b.count == 16, "a UUID takes 16 bytes")
        b[6] = (b[6] & 0x0F) | (version << 4)
        b[8] = (b[8] & 0x3F) | 0x80
        self.init(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }
}
