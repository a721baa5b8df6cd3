import Foundation

/// Why a fact was refused before anything was written: which line, column, field or event.
public struct EventInputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line of the input (JSON lines), when the fact came from a file.
    public var line: Int?
    public var column: Int?
    /// Dotted path of the offending field (`payload`, `expectedVersion`, `metadata.source`).
    public var field: String?
    public var eventId: String?
    public var message: String

    public init(line: Int? = nil, column: Int? = nil, field: String? = nil, eventId: String? = nil, message: String) {
        self.line = line
        self.column = column
        self.field = field
        self.eventId = eventId
        self.message = message
    }

    public var description: String {
        var place: [String] = []
        if let line { place.append(column.map { "line \(line), column \($0)" } ?? "line \(line)") }
        if let eventId { place.append("event \(eventId)") }
        if let field { place.append("field \(field)") }
        return place.isEmpty ? message : place.joined(separator: ", ") + ": " + message
    }
}

/// Limits and policies applied to every fact before it is appended.
public struct EventValidation: Sendable {
    /// Largest canonical payload accepted, in bytes.
    public var maximumPayloadBytes: Int
    /// The fact types of the catalogue (the domain module's supplies them); nil: any well-formed
    /// type name.
    public var knownTypes: Set<String>?
    /// When false, a `type` outside ``knownTypes`` is refused (catches typos).
    public var allowUnknownTypes: Bool
    /// Checks a payload against its fact's schema (the domain module's catalogue supplies one);
    /// returns the problem, naming the field, or nil.
    public var payloadCheck: (@Sendable (NewEvent) -> EventInputError?)?

    public static let defaultMaximumPayloadBytes = 64 * 1024

    public init(
        maximumPayloadBytes: Int = EventValidation.defaultMaximumPayloadBytes, knownTypes: Set<String>? = nil,
        allowUnknownTypes: Bool = false
    ) {
        self.maximumPayloadBytes = maximumPayloadBytes
        self.knownTypes = knownTypes
        self.allowUnknownTypes = allowUnknownTypes
    }

    /// Checks the envelope; throws the first problem, naming the field. Pass the payload's canonical
    /// size when it is already known, to avoid encoding it again.
    public func validate(_ e: NewEvent, canonicalPayloadBytes: Int? = nil) throws(EventInputError) {
        func fail(_ field: String, _ message: String) -> EventInputError {
            EventInputError(field: field, eventId: e.eventId.lowercased, message: message)
        }
        if !Self.isValidStream(e.stream) {
            throw fail(
                "stream",
                "must be 1-200 characters of letters, digits and _ . : @ / + = - (got \(Echo.quoted(e.stream, limit: 60)))"
            )
        }
        if !Self.isValidTypeName(e.type) {
            throw fail(
                "type",
                "must be an UpperCamelCase name of at most 100 characters (got \(Echo.quoted(e.type, limit: 60)))")
        }
        if !allowUnknownTypes, let knownTypes, !knownTypes.contains(e.type) {
            throw fail(
                "type",
                "unknown fact type \(Echo.quoted(e.type)); known types: \(knownTypes.sorted().joined(separator: ", ")) (pass --allow-unknown-types to store it anyway)"
            )
        }
        if !(1...1000).contains(e.schemaVersion) {
            throw fail("schemaVersion", "must be between 1 and 1000 (got \(e.schemaVersion))")
        }
        guard case .object = e.payload else {
            throw fail("payload", "must be a JSON object (got \(e.payload.typeName))")
        }
        let size: Int
        if let canonicalPayloadBytes {
            size = canonicalPayloadBytes
        } else {
            var bytes: [UInt8] = []
            e.payload.writeCanonical(into: &bytes)
            size = bytes.count
        }
        if size > maximumPayloadBytes {
            throw fail(
                "payload",
                "is \(size) bytes, over the limit of \(maximumPayloadBytes) bytes (store large raw store payloads as a digest, or raise LEDGER_MAX_PAYLOAD_BYTES)"
            )
        }
        if let key = e.idempotencyKey,
            key.isEmpty || key.utf8.count > 300
                || key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        {
            throw fail("idempotencyKey", "must be 1-300 characters with no control characters")
        }
        if case .exact(let v) = e.expectedVersion, v < 0 {
            throw fail("expectedVersion", "must be \"any\", \"no-stream\" or a version >= 0 (got \(v))")
        }
        if e.occurredAt < Self.earliest || e.occurredAt > Self.latest {
            throw fail("occurredAt", "\(e.occurredAt.iso8601) is outside 2000-01-01 .. 2100-01-01")
        }
        for (name, value) in [
            ("correlationId", e.metadata.correlationId), ("causationId", e.metadata.causationId),
            ("source", e.metadata.source), ("actor", e.metadata.actor),
        ] {
            if let value, value.isEmpty || value.utf8.count > 200 {
                throw fail("metadata.\(name)", "must be 1-200 characters")
            }
        }
        if let payloadCheck, let problem = payloadCheck(e) { throw problem }
    }

    static let earliest = Timestamp("2000-01-01T00:00:00Z")!
    static let latest = Timestamp("2100-01-01T00:00:00Z")!

    public static func isValidStream(_ s: String) -> Bool {
        let u = s.utf8
        guard !u.isEmpty, u.count <= 200 else { return false }
        return u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || "_.:@/+=-".utf8.contains(c)
        }
    }

    public static func isValidTypeName(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard let first = u.first, first >= 0x41, first <= 0x5A, u.count <= 100 else { return false }
        return u.allSatisfy { c in (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
    }
}

/// Decodes one JSON line into a ``NewEvent``: the shape published in `schema/event-line.schema.json`.
public struct EventLineDecoder: Sendable {
    public var validation: EventValidation

    public init(validation: EventValidation = EventValidation()) { self.validation = validation }

    static let allowedFields: Set<String> = [
        "eventId", "stream", "type", "schemaVersion", "payload", "metadata", "occurredAt", "idempotencyKey",
        "expectedVersion",
    ]

    /// Decodes and validates `text` (one line); errors carry `lineNumber`. A line without an
    /// `eventId` gets `defaultEventId()` when given, else a random one.
    public func decode(
        _ text: String, lineNumber: Int, defaultEventId: (() -> UUID)? = nil
    ) throws(EventInputError) -> NewEvent {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw EventInputError(line: lineNumber, column: error.column, message: "malformed JSON: \(error.message)")
        }
        do {
            let event = try decode(value, defaultEventId: defaultEventId ?? UUID.systemRandom)
            try validation.validate(event)
            return event
        } catch {
            var error = error
            error.line = lineNumber
            throw error
        }
    }

    /// Decodes an already parsed JSON object (no line number); without an `eventId`, a random one.
    public func decode(_ value: JSONValue) throws(EventInputError) -> NewEvent {
        try decode(value, defaultEventId: UUID.systemRandom)
    }

    /// `defaultEventId()`: the id of an object without one (called only then).
    func decode(_ value: JSONValue, defaultEventId: () -> UUID) throws(EventInputError) -> NewEvent {
        guard case .object(let members) = value else {
            throw EventInputError(message: "each line must be a JSON object (got \(value.typeName))")
        }
        for m in members where !Self.allowedFields.contains(where: { $0.utf8.elementsEqual(m.key.utf8) }) {
            throw EventInputError(
                field: Echo.shown(m.key, limit: 60),
                message: "unknown field; allowed: \(Self.allowedFields.sorted().joined(separator: ", "))")
        }
        func string(_ key: String, required: Bool) throws(EventInputError) -> String? {
            guard let v = value[key], !v.isNull else {
                if required { throw EventInputError(field: key, message: "is required") }
                return nil
            }
            guard let s = v.stringValue else {
                throw EventInputError(field: key, message: "must be a string (got \(v.typeName))")
            }
            return s
        }
        var eventId: UUID?
        if let idText = try string("eventId", required: false) {
            guard let id = UUID(uuidString: idText) else {
                throw EventInputError(field: "eventId", message: "\(Echo.quoted(idText, limit: 60)) is not a UUID")
            }
            eventId = id
        }
        let stream = try string("stream", required: true)!
        let type = try string("type", required: true)!
        var schemaVersion: Int32 = 1
        if let v = value["schemaVersion"], !v.isNull {
            guard let i = v.intValue else {
                throw EventInputError(field: "schemaVersion", message: "must be an integer (got \(v.typeName))")
            }
            guard let i32 = Int32(exactly: i) else {
                throw EventInputError(field: "schemaVersion", message: "must be between 1 and 1000 (got \(i))")
            }
            schemaVersion = i32
        }
        guard let payload = value["payload"], !payload.isNull else {
            throw EventInputError(field: "payload", message: "is required")
        }
        var metadata = EventMetadata()
        if let m = value["metadata"], !m.isNull {
            guard case .object(let fields) = m else {
                throw EventInputError(field: "metadata", message: "must be an object (got \(m.typeName))")
            }
            for f in fields {
                guard EventMetadata.fields.contains(where: { $0.utf8.elementsEqual(f.key.utf8) }) else {
                    throw EventInputError(
                        field: "metadata." + Echo.shown(f.key, limit: 60),
                        message: "unknown metadata field; allowed: \(EventMetadata.fields.joined(separator: ", "))")
                }
                guard let s = f.value.stringValue else {
                    throw EventInputError(
                        field: "metadata." + Echo.shown(f.key, limit: 60),
                        message: "must be a string (got \(f.value.typeName))")
                }
                switch f.key {
                case "correlationId": metadata.correlationId = s
                case "causationId": metadata.causationId = s
                case "source": metadata.source = s
                default: metadata.actor = s
                }
            }
        }
        let occurredText = try string("occurredAt", required: true)!
        guard let occurredAt = Timestamp(occurredText) else {
            throw EventInputError(
                field: "occurredAt",
                message:
                    "\(Echo.quoted(occurredText, limit: 60)) is not an RFC 3339 time with a zone (e.g. 2026-03-31T08:15:00Z), at most microsecond precision"
            )
        }
        let key = try string("idempotencyKey", required: false)
        var expected = ExpectedVersion.any
        if let v = value["expectedVersion"], !v.isNull {
            switch v {
            case .string("any"): expected = .any
            case .string("no-stream"): expected = .noStream
            case .int(let n) where n >= 0: expected = .exact(n)
            default:
                throw EventInputError(
                    field: "expectedVersion",
                    message:
                        "must be \"any\", \"no-stream\" or an integer >= 0 (got \(Echo.shown(v.compactText, limit: 60)))"
                )
            }
        }
        return NewEvent(
            eventId: eventId ?? defaultEventId(), stream: stream, type: type, schemaVersion: schemaVersion,
            payload: payload, metadata: metadata, occurredAt: occurredAt, idempotencyKey: key,
            expectedVersion: expected)
    }
}

extension NewEvent {
    /// This event as one JSON line of the input format (what ``EventLineDecoder`` reads).
    public var jsonLine: String {
        var members: [(String, JSONValue)] = [
            ("eventId", .string(eventId.lowercased)), ("stream", .string(stream)), ("type", .string(type)),
            ("schemaVersion", .int(Int64(schemaVersion))), ("payload", payload),
            ("occurredAt", .string(occurredAt.iso8601)),
        ]
        if metadata != EventMetadata() { members.append(("metadata", metadata.json)) }
        if let idempotencyKey { members.append(("idempotencyKey", .string(idempotencyKey))) }
        switch expectedVersion {
        case .any: break
        case .noStream: members.append(("expectedVersion", .string("no-stream")))
        case .exact(let v): members.append(("expectedVersion", .int(v)))
        }
        return JSONValue.makeObject(members).compactText
    }
}
