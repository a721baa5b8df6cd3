import Foundation
import Testing
@testable import LedgerCore

private let sampleId = "6f1c2a9e-4b7d-4c1e-9a2b-3c4d5e6f7a8b"

/// The members of a valid input line; `line(_:)` replaces (or, with nil, removes) some of them.
private let baseMembers: [(String, JSONValue)] = [
    ("eventId", .string(sampleId)),
    ("stream", .string("order-o-1")),
    ("type", .string("OrderCreated")),
    ("payload", .makeObject([("orderId", .string("o-1")), ("amountMinor", .int(499))])),
    ("occurredAt", .string("2026-03-31T08:15:00Z")),
]

private func line(_ changes: [(String, JSONValue?)] = []) -> String {
    var members = baseMembers
    for (key, value) in changes {
        members.removeAll { $0.0 == key }
        if let value { members.append((key, value)) }
    }
    return JSONValue.makeObject(members).compactText
}

/// Validation that knows two fact types, as the domain's catalogue supplies them all.
private let typed = EventValidation(knownTypes: ["OrderCreated", "PaymentVerified"])

private func decodeError(_ text: String, lineNumber: Int, validation: EventValidation = typed) -> EventInputError? {
    do {
        _ = try EventLineDecoder(validation: validation).decode(text, lineNumber: lineNumber)
        return nil
    } catch {
        return error
    }
}

private func decode(_ text: String, validation: EventValidation = typed) throws -> NewEvent {
    try EventLineDecoder(validation: validation).decode(text, lineNumber: 1)
}

@Suite("EventLineDecoder: valid lines")
struct EventLineDecoderValidTests {
    @Test("a complete line decodes every field")
    func completeLine() throws {
        let text = """
            {"eventId":"\(sampleId)","stream":"order-o-1","type":"OrderCreated","schemaVersion":2,\
            "payload":{"orderId":"o-1","amountMinor":499},\
            "metadata":{"source":"order-service","actor":"user:42","correlationId":"c-1","causationId":"c-0"},\
            "occurredAt":"2026-03-31T16:15:00.25+08:00","idempotencyKey":"order:o-1:created","expectedVersion":"no-stream"}
            """
        let e = try decode(text)
        #expect(e.eventId == UUID(uuidString: sampleId))
        #expect(e.eventId.lowercased == sampleId)
        #expect(e.stream == "order-o-1")
        #expect(e.type == "OrderCreated")
        #expect(e.schemaVersion == 2)
        #expect(e.payload == .makeObject([("orderId", .string("o-1")), ("amountMinor", .int(499))]))
        #expect(e.payload.canonicalText == #"{"orderId": "o-1", "amountMinor": 499}"#)
        #expect(
            e.metadata
                == EventMetadata(correlationId: "c-1", causationId: "c-0", source: "order-service", actor: "user:42"))
        #expect(e.occurredAt == Timestamp("2026-03-31T08:15:00.250Z"))
        #expect(e.idempotencyKey == "order:o-1:created")
        #expect(e.expectedVersion == .noStream)
    }

    @Test("defaults: schemaVersion 1, no metadata, no key, expectedVersion any")
    func defaults() throws {
        let e = try decode(line())
        #expect(e.schemaVersion == 1)
        #expect(e.metadata == EventMetadata())
        #expect(e.idempotencyKey == nil)
        #expect(e.expectedVersion == .any)
    }

    @Test("explicit nulls count as absent for optional fields")
    func nulls() throws {
        let e = try decode(
            line([("schemaVersion", .null), ("metadata", .null), ("idempotencyKey", .null), ("expectedVersion", .null)])
        )
        #expect(e.schemaVersion == 1)
        #expect(e.metadata == EventMetadata())
        #expect(e.idempotencyKey == nil)
        #expect(e.expectedVersion == .any)
    }

    @Test("a missing eventId gets a fresh one")
    func freshEventId() throws {
        let a = try decode(line([("eventId", nil)]))
        let b = try decode(line([("eventId", .null)]))
        #expect(a.eventId != b.eventId)
        #expect(a.eventId.lowercased != sampleId)
    }

    @Test("a line's default eventId is made only for a line without one, and only once")
    func defaultEventIdOnlyWhenMissing() throws {
        let given = UUID(uuidString: "a03bbb47-0000-4000-8000-00000000ffff")!
        for (members, expected, calls) in [
            ([("eventId", JSONValue?.none)], given, 1), ([("eventId", .null)], given, 1),
            ([], UUID(uuidString: sampleId)!, 0),
        ] {
            var made = 0
            let e = try EventLineDecoder(validation: typed).decode(line(members), lineNumber: 1) {
                made += 1
                return given
            }
            #expect(e.eventId == expected && made == calls, "\(members): \(made)")
        }
    }

    @Test("an uppercase eventId is accepted")
    func uppercaseEventId() throws {
        let e = try decode(line([("eventId", .string(sampleId.uppercased()))]))
        #expect(e.eventId.lowercased == sampleId)
    }

    @Test(
        "expectedVersion forms",
        arguments: [
            (JSONValue.string("any"), ExpectedVersion.any),
            (.string("no-stream"), .noStream),
            (.int(0), .exact(0)),
            (.int(41), .exact(41)),
            (.int(.max), .exact(.max)),
        ])
    func expectedVersions(json: JSONValue, expected: ExpectedVersion) throws {
        #expect(try decode(line([("expectedVersion", json)])).expectedVersion == expected)
    }

    @Test("schemaVersion bounds 1 and 1000 are accepted", arguments: [Int64(1), 1000])
    func schemaVersionBounds(version: Int64) throws {
        #expect(try decode(line([("schemaVersion", .int(version))])).schemaVersion == Int32(version))
    }

    @Test(
        "occurredAt bounds 2000-01-01 and 2100-01-01 are accepted",
        arguments: [
            "2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z", "2000-01-01T08:00:00+08:00",
        ])
    func occurredAtBounds(text: String) throws {
        #expect(try decode(line([("occurredAt", .string(text))])).occurredAt == Timestamp(text))
    }

    @Test("a payload exactly at maximumPayloadBytes is accepted; one byte more is not")
    func payloadLimit() throws {
        // Canonical `{"a": "` + n + `"}` is n + 9 bytes.
        let validation = EventValidation(maximumPayloadBytes: 20)
        let atLimit = line([("payload", .makeObject([("a", .string(String(repeating: "x", count: 11)))]))])
        #expect(try decode(atLimit, validation: validation).payload.canonicalText.utf8.count == 20)
        let over = line([("payload", .makeObject([("a", .string(String(repeating: "x", count: 12)))]))])
        let error = try #require(decodeError(over, lineNumber: 3, validation: validation))
        #expect(error.line == 3)
        #expect(error.field == "payload")
        #expect(error.message.contains("21 bytes"))
        #expect(error.message.contains("limit of 20 bytes"))
    }

    @Test("the payload limit counts bytes of the canonical form, not characters")
    func payloadLimitBytes() throws {
        let validation = EventValidation(maximumPayloadBytes: 20)
        // 6 × "é" = 12 bytes → 21 bytes, although only 15 characters.
        let text = line([("payload", .makeObject([("a", .string(String(repeating: "é", count: 6)))]))])
        #expect(decodeError(text, lineNumber: 1, validation: validation)?.field == "payload")
        // Whitespace in the input does not count: canonical text is what is measured.
        let spaced = line([("payload", .makeObject([("a", .string(String(repeating: "x", count: 11)))]))])
            .replacingOccurrences(of: "{\"a\":", with: "{   \"a\"   :   ")
        #expect(
            try decode(spaced, validation: validation).payload
                == .makeObject([("a", .string(String(repeating: "x", count: 11)))]))
    }

    @Test("default payload limit is 64 KiB")
    func defaultLimit() throws {
        #expect(EventValidation().maximumPayloadBytes == 65_536)
        let atLimit = line([("payload", .makeObject([("a", .string(String(repeating: "x", count: 65_536 - 9)))]))])
        #expect(try decode(atLimit).payload.canonicalText.utf8.count == 65_536)
        let over = line([("payload", .makeObject([("a", .string(String(repeating: "x", count: 65_536 - 8)))]))])
        #expect(decodeError(over, lineNumber: 1)?.field == "payload")
    }

    @Test("unknown types pass when allowed")
    func unknownTypeAllowed() throws {
        let text = line([("type", .string("PaymentVerifed"))])
        #expect(try decode(text, validation: EventValidation(allowUnknownTypes: true)).type == "PaymentVerifed")
    }

    @Test("decode(_ value:) decodes a parsed object")
    func decodeValue() throws {
        let e = try EventLineDecoder().decode(try JSONValue.parse(line()))
        #expect(e.stream == "order-o-1")
    }
}

@Suite("EventLineDecoder: errors name the line and the field")
struct EventLineDecoderErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var text: String
        var field: String?
        var fragment: String
        var validation = typed
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "not an object", text: "[1, 2]", field: nil, fragment: "must be a JSON object (got array)"),
        Case(name: "string line", text: "\"hello\"", field: nil, fragment: "must be a JSON object (got string)"),
        Case(name: "missing stream", text: line([("stream", nil)]), field: "stream", fragment: "is required"),
        Case(name: "null stream", text: line([("stream", .null)]), field: "stream", fragment: "is required"),
        Case(
            name: "numeric stream", text: line([("stream", .int(5))]), field: "stream",
            fragment: "must be a string (got integer)"),
        Case(
            name: "stream with a space", text: line([("stream", .string("order 1"))]), field: "stream",
            fragment: "must be 1-200 characters"),
        Case(
            name: "empty stream", text: line([("stream", .string(""))]), field: "stream",
            fragment: "must be 1-200 characters"),
        Case(
            name: "stream of 201 chars", text: line([("stream", .string(String(repeating: "s", count: 201)))]),
            field: "stream", fragment: "must be 1-200 characters"),
        Case(name: "missing type", text: line([("type", nil)]), field: "type", fragment: "is required"),
        Case(
            name: "type not a string", text: line([("type", .bool(true))]), field: "type",
            fragment: "must be a string (got boolean)"),
        Case(
            name: "type not UpperCamelCase", text: line([("type", .string("order_created"))]), field: "type",
            fragment: "UpperCamelCase"),
        Case(
            name: "unknown type", text: line([("type", .string("PaymentVerifed"))]), field: "type",
            fragment: "unknown fact type \"PaymentVerifed\""),
        Case(name: "missing payload", text: line([("payload", nil)]), field: "payload", fragment: "is required"),
        Case(name: "null payload", text: line([("payload", .null)]), field: "payload", fragment: "is required"),
        Case(
            name: "payload array", text: line([("payload", .array([.int(1)]))]), field: "payload",
            fragment: "must be a JSON object (got array)"),
        Case(
            name: "payload string", text: line([("payload", .string("{}"))]), field: "payload",
            fragment: "must be a JSON object (got string)"),
        Case(
            name: "payload integer", text: line([("payload", .int(1))]), field: "payload",
            fragment: "must be a JSON object (got integer)"),
        Case(
            name: "payload too large", text: line([("payload", .makeObject([("a", .string("0123456789"))]))]),
            field: "payload",
            fragment: "over the limit of 10 bytes", validation: EventValidation(maximumPayloadBytes: 10)),
        Case(
            name: "missing occurredAt", text: line([("occurredAt", nil)]), field: "occurredAt", fragment: "is required"),
        Case(
            name: "occurredAt as a number", text: line([("occurredAt", .int(1_774_944_900))]), field: "occurredAt",
            fragment: "must be a string"),
        Case(
            name: "occurredAt without zone", text: line([("occurredAt", .string("2026-03-31T08:15:00"))]),
            field: "occurredAt", fragment: "is not an RFC 3339 time"),
        Case(
            name: "occurredAt 7 digits", text: line([("occurredAt", .string("2026-03-31T08:15:00.1234567Z"))]),
            field: "occurredAt", fragment: "is not an RFC 3339 time"),
        Case(
            name: "occurredAt before 2000", text: line([("occurredAt", .string("1999-12-31T23:59:59.999999Z"))]),
            field: "occurredAt", fragment: "outside 2000-01-01 .. 2100-01-01"),
        Case(
            name: "occurredAt after 2100", text: line([("occurredAt", .string("2100-01-01T00:00:00.000001Z"))]),
            field: "occurredAt", fragment: "outside 2000-01-01 .. 2100-01-01"),
        Case(
            name: "occurredAt 1970", text: line([("occurredAt", .string("1970-01-01T00:00:00Z"))]), field: "occurredAt",
            fragment: "1970-01-01T00:00:00Z is outside"),
        Case(
            name: "unknown top-level field", text: line([("streem", .string("x"))]), field: "streem",
            fragment: "unknown field"),
        Case(
            name: "unknown top-level field (null)", text: line([("position", .null)]), field: "position",
            fragment: "unknown field"),
        Case(
            name: "metadata not an object", text: line([("metadata", .string("x"))]), field: "metadata",
            fragment: "must be an object (got string)"),
        Case(
            name: "unknown metadata field", text: line([("metadata", .makeObject([("user", .string("x"))]))]),
            field: "metadata.user", fragment: "unknown metadata field"),
        Case(
            name: "metadata value not a string", text: line([("metadata", .makeObject([("source", .int(1))]))]),
            field: "metadata.source", fragment: "must be a string (got integer)"),
        Case(
            name: "metadata value empty", text: line([("metadata", .makeObject([("actor", .string(""))]))]),
            field: "metadata.actor", fragment: "must be 1-200 characters"),
        Case(
            name: "metadata value too long",
            text: line([("metadata", .makeObject([("correlationId", .string(String(repeating: "c", count: 201)))]))]),
            field: "metadata.correlationId", fragment: "must be 1-200 characters"),
        Case(
            name: "bad eventId", text: line([("eventId", .string("not-a-uuid"))]), field: "eventId",
            fragment: "\"not-a-uuid\" is not a UUID"),
        Case(
            name: "eventId without dashes", text: line([("eventId", .string("6f1c2a9e4b7d4c1e9a2b3c4d5e6f7a8b"))]),
            field: "eventId", fragment: "is not a UUID"),
        Case(
            name: "numeric eventId", text: line([("eventId", .int(7))]), field: "eventId",
            fragment: "must be a string (got integer)"),
        Case(
            name: "expectedVersion latest", text: line([("expectedVersion", .string("latest"))]),
            field: "expectedVersion", fragment: "(got \"latest\")"),
        Case(
            name: "expectedVersion -1", text: line([("expectedVersion", .int(-1))]), field: "expectedVersion",
            fragment: "(got -1)"),
        Case(
            name: "expectedVersion true", text: line([("expectedVersion", .bool(true))]), field: "expectedVersion",
            fragment: "(got true)"),
        Case(
            name: "expectedVersion as a string number", text: line([("expectedVersion", .string("3"))]),
            field: "expectedVersion", fragment: "must be \"any\", \"no-stream\" or an integer >= 0"),
        Case(
            name: "schemaVersion 0", text: line([("schemaVersion", .int(0))]), field: "schemaVersion",
            fragment: "between 1 and 1000 (got 0)"),
        Case(
            name: "schemaVersion 1001", text: line([("schemaVersion", .int(1001))]), field: "schemaVersion",
            fragment: "between 1 and 1000 (got 1001)"),
        Case(
            name: "schemaVersion negative", text: line([("schemaVersion", .int(-1))]), field: "schemaVersion",
            fragment: "between 1 and 1000"),
        Case(
            name: "schemaVersion string", text: line([("schemaVersion", .string("2"))]), field: "schemaVersion",
            fragment: "must be an integer (got string)"),
        Case(
            name: "schemaVersion beyond Int32", text: line([("schemaVersion", .int(4_294_967_296))]),
            field: "schemaVersion", fragment: "must be between 1 and 1000 (got 4294967296)"),
        Case(
            name: "empty idempotencyKey", text: line([("idempotencyKey", .string(""))]), field: "idempotencyKey",
            fragment: "1-300 characters"),
        Case(
            name: "idempotencyKey with a control character", text: line([("idempotencyKey", .string("a\tb"))]),
            field: "idempotencyKey", fragment: "no control characters"),
        Case(
            name: "idempotencyKey with DEL", text: line([("idempotencyKey", .string("a\u{7F}b"))]),
            field: "idempotencyKey", fragment: "no control characters"),
        Case(
            name: "idempotencyKey too long",
            text: line([("idempotencyKey", .string(String(repeating: "k", count: 301)))]), field: "idempotencyKey",
            fragment: "1-300 characters"),
        Case(
            name: "idempotencyKey not a string", text: line([("idempotencyKey", .int(1))]), field: "idempotencyKey",
            fragment: "must be a string (got integer)"),
    ]

    @Test("bad input", arguments: cases)
    func badInput(c: Case) throws {
        let lineNumber = 42
        let error = try #require(
            decodeError(c.text, lineNumber: lineNumber, validation: c.validation), "\(c.name) was accepted")
        #expect(error.line == lineNumber)
        #expect(error.column == nil)
        #expect(error.field == c.field)
        #expect(error.message.contains(c.fragment), "message: \(error.message)")
        #expect(error.description.hasPrefix("line 42"), "description: \(error.description)")
        if let field = c.field {
            #expect(error.description.contains("field \(field)"), "description: \(error.description)")
        }
        #expect(error.description.hasSuffix(": " + error.message))
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var text: String
        var column: Int
        var fragment: String
        var testDescription: String { text }
    }

    static let malformed: [Malformed] = [
        Malformed(text: #"{"stream": "s","#, column: 16, fragment: "expected a string key"),
        Malformed(text: #"{"stream": x}"#, column: 12, fragment: "unexpected character 'x'"),
        Malformed(text: #"{"stream":"s","stream":"t"}"#, column: 15, fragment: "duplicate key \"stream\""),
        Malformed(text: #"{"payload":{"amount":12.5}}"#, column: 22, fragment: "only integer numbers"),
        Malformed(text: #"{"expectedVersion":1.5}"#, column: 20, fragment: "only integer numbers"),
        Malformed(text: #"{"type":"OrderCreated"} {}"#, column: 25, fragment: "unexpected data after the JSON value"),
        Malformed(text: "", column: 1, fragment: "unexpected end of input"),
    ]

    @Test("malformed JSON names line and column", arguments: malformed)
    func malformedJSON(c: Malformed) throws {
        let error = try #require(decodeError(c.text, lineNumber: 7))
        #expect(error.line == 7)
        #expect(error.column == c.column)
        #expect(error.field == nil)
        #expect(error.message.hasPrefix("malformed JSON: "))
        #expect(error.message.contains(c.fragment), "message: \(error.message)")
        #expect(error.description == "line 7, column \(c.column): \(error.message)")
    }

    @Test("validation errors name the event")
    func validationNamesEvent() throws {
        let error = try #require(decodeError(line([("schemaVersion", .int(0))]), lineNumber: 9))
        #expect(error.eventId == sampleId)
        #expect(error.description.hasPrefix("line 9, event \(sampleId), field schemaVersion: "))
    }

    @Test("unknown types are refused by default and the message lists the catalogue")
    func unknownTypeMessage() throws {
        let error = try #require(decodeError(line([("type", .string("PaymentVerifed"))]), lineNumber: 1))
        #expect(error.message.contains("PaymentVerified"))
        #expect(error.message.contains("--allow-unknown-types"))
        // Allowing unknown types does not allow malformed type names.
        let badName = line([("type", .string("paymentVerified"))])
        #expect(
            decodeError(badName, lineNumber: 1, validation: EventValidation(allowUnknownTypes: true))?.field == "type")
    }

    @Test("decode(_ value:) errors carry no line")
    func noLine() throws {
        let value = try JSONValue.parse(line([("stream", nil)]))
        do {
            _ = try EventLineDecoder().decode(value)
            Issue.record("accepted")
        } catch {
            #expect(error.line == nil)
            #expect(error.field == "stream")
            #expect(error.description == "field stream: is required")
        }
    }
}

@Suite("EventInputError and EventValidation helpers")
struct EventValidationHelperTests {
    @Test("description formats")
    func descriptions() {
        #expect(EventInputError(message: "m").description == "m")
        #expect(EventInputError(line: 3, message: "m").description == "line 3: m")
        #expect(EventInputError(line: 3, column: 5, message: "m").description == "line 3, column 5: m")
        #expect(EventInputError(field: "payload", message: "m").description == "field payload: m")
        #expect(
            EventInputError(line: 2, field: "metadata.source", eventId: "e", message: "m").description
                == "line 2, event e, field metadata.source: m")
    }

    @Test(
        "stream names",
        arguments: [
            ("order-o-1", true), ("a", true), ("user:42/orders@v2+x=y_z.w", true), ("ABC019", true),
            (String(repeating: "s", count: 200), true), (String(repeating: "s", count: 201), false),
            ("", false), ("has space", false), ("tab\t", false), ("é", false), ("semi;colon", false),
            ("quote\"", false),
        ])
    func streams(name: String, valid: Bool) {
        #expect(EventValidation.isValidStream(name) == valid)
    }

    @Test(
        "type names",
        arguments: [
            ("OrderCreated", true), ("A", true), ("V2Thing", true), (String(repeating: "A", count: 100), true),
            (String(repeating: "A", count: 101), false), ("", false), ("orderCreated", false), ("Order_Created", false),
            ("Order-Created", false), ("1Order", false), ("Ördér", false), ("Order Created", false),
        ])
    func typeNames(name: String, valid: Bool) {
        #expect(EventValidation.isValidTypeName(name) == valid)
    }
}

@Suite("NewEvent.jsonLine")
struct NewEventJSONLineTests {
    static let id = UUID(uuidString: sampleId)!
    static let at = Timestamp("2026-03-31T08:15:00Z")!

    static let events: [NewEvent] = [
        NewEvent(
            eventId: id, stream: "order-o-1", type: "OrderCreated",
            payload: .makeObject([("orderId", .string("o-1")), ("amountMinor", .int(499))]), occurredAt: at),
        NewEvent(
            eventId: id, stream: "user:42/coins", type: "CoinsSpent", schemaVersion: 3,
            payload: .makeObject([
                ("coins", .int(-9_223_372_036_854_775_808)), ("note", .string("é \"q\" \\ \n\t\u{01} 😀 /")),
                ("nested", .makeObject([("list", .array([.null, .bool(false), .object([])]))])),
            ]),
            metadata: EventMetadata(
                correlationId: "corr-1", causationId: "cause-1", source: "appstore", actor: "support:alice"),
            occurredAt: Timestamp(microsecondsSince1970: at.microseconds + 123_456),
            idempotencyKey: "appstore:tx:2000000123:verified", expectedVersion: .exact(7)),
        NewEvent(
            eventId: id, stream: "s", type: "Refunded", payload: .object([]),
            metadata: EventMetadata(source: "order-service"),
            occurredAt: Timestamp(microsecondsSince1970: at.microseconds + 5_000),
            expectedVersion: .noStream),
        NewEvent(
            eventId: id, stream: "s", type: "OrderClosed", payload: .object([]), occurredAt: at,
            expectedVersion: .exact(0)),
        NewEvent(
            eventId: UUID(), stream: "s", type: "PlanChanged", schemaVersion: 1000,
            payload: .makeObject([("k", .string(""))]),
            occurredAt: Timestamp("2000-01-01T00:00:00Z")!, idempotencyKey: "k"),
    ]

    @Test("round-trips through EventLineDecoder", arguments: events)
    func roundTrip(event: NewEvent) throws {
        let text = event.jsonLine
        #expect(!text.contains("\n"))
        let decoded = try EventLineDecoder().decode(text, lineNumber: 1)
        #expect(decoded == event)
        #expect(decoded.jsonLine == text)
    }

    @Test("exact output: compact, jsonb key order, expectedVersion any omitted")
    func exactOutput() {
        #expect(
            Self.events[0].jsonLine == """
                {"type":"OrderCreated","stream":"order-o-1","eventId":"\(sampleId)","payload":{"orderId":"o-1","amountMinor":499},\
                "occurredAt":"2026-03-31T08:15:00Z","schemaVersion":1}
                """)
        #expect(Self.events[2].jsonLine.contains(#""metadata":{"source":"order-service"}"#))
        #expect(Self.events[2].jsonLine.contains(#""occurredAt":"2026-03-31T08:15:00.005Z""#))
        #expect(Self.events[2].jsonLine.contains(#""expectedVersion":"no-stream""#))
        #expect(Self.events[3].jsonLine.contains(#""expectedVersion":0"#))
    }
}
