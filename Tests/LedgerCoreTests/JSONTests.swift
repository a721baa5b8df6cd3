import Testing
@testable import LedgerCore

/// Parses `text`, returning the syntax error (or nil when it parses).
private func syntaxError(_ text: String) -> JSONSyntaxError? {
    do {
        _ = try JSONValue.parse(text)
        return nil
    } catch {
        return error
    }
}

/// Parses raw bytes through the `parse(utf8:)` entry.
private func parseBytes(_ bytes: [UInt8]) -> Result<JSONValue, JSONSyntaxError> {
    bytes.withUnsafeBufferPointer { buffer in
        do throws(JSONSyntaxError) {
            return .success(try JSONValue.parse(utf8: buffer))
        } catch {
            return .failure(error)
        }
    }
}

private func object(_ members: [(String, JSONValue)]) -> JSONValue {
    .object(members.map { JSONMember(key: $0.0, value: $0.1) })
}

// MARK: - Parsing valid values

@Suite("JSON parsing: valid values")
struct JSONParseValidTests {
    static let cases: [(String, JSONValue)] = [
        ("null", .null),
        ("true", .bool(true)),
        ("false", .bool(false)),
        ("0", .int(0)),
        ("-0", .int(0)),
        ("42", .int(42)),
        ("-17", .int(-17)),
        ("9223372036854775807", .int(Int64.max)),
        ("-9223372036854775808", .int(Int64.min)),
        ("\"\"", .string("")),
        ("\"abc\"", .string("abc")),
        (#""\" \\ \/ \b \f \n \r \t""#, .string("\" \\ / \u{08} \u{0C} \n \r \t")),
        (#""\u00e9\u00E9""#, .string("éé")),
        (#""\u20ac""#, .string("€")),
        (#""\u0001\u001F""#, .string("\u{01}\u{1F}")),
        (#""\ud83d\ude00""#, .string("😀")),
        (#""\uD834\uDD1E""#, .string("𝄞")),
        (#""x\uD834\uDD1Ey""#, .string("x𝄞y")),
        ("\"é 😀 ü\"", .string("é 😀 ü")),
        ("\"\u{7F}\"", .string("\u{7F}")),
        ("[]", .array([])),
        ("{}", .object([])),
        (" \t\r\n [ 1 , \"a\" , null ] \n", .array([.int(1), .string("a"), .null])),
        (
            "{\"a\":{\"b\":[1,{\"c\":true}]}}",
            object([("a", object([("b", .array([.int(1), object([("c", .bool(true))])]))]))])
        ),
        ("{\"\": 1}", object([("", .int(1))])),
    ]

    @Test("parses", arguments: cases)
    func parses(text: String, expected: JSONValue) throws {
        #expect(try JSONValue.parse(text) == expected)
    }

    @Test("object members are kept in jsonb order: by byte length, then bytewise")
    func memberOrder() throws {
        let v = try JSONValue.parse(#"{"bb":1,"b":2,"B":3,"é":4,"ab":5,"a":6,"ccc":7}"#)
        guard case .object(let members) = v else {
            Issue.record("not an object: \(v)")
            return
        }
        // "é" is two bytes (0xC3 0xA9), so it sorts with the two-byte keys, after ASCII ones.
        #expect(members.map(\.key) == ["B", "a", "b", "ab", "bb", "é", "ccc"])
        #expect(members.map(\.value) == [3, 6, 2, 5, 1, 4, 7].map { JSONValue.int($0) })
    }

    @Test("64 levels of nesting are accepted", arguments: ["array", "object"])
    func maximumDepth(kind: String) throws {
        let text =
            kind == "array"
            ? String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
            : String(repeating: "{\"a\":", count: 64) + "1" + String(repeating: "}", count: 64)
        var v = try JSONValue.parse(text)
        var depth = 0
        while true {
            if case .array(let items) = v {
                depth += 1
                if let first = items.first { v = first } else { break }
            } else if case .object(let members) = v {
                depth += 1
                v = members[0].value
            } else {
                break
            }
        }
        #expect(depth == 64)
    }

    @Test("valid multi-byte UTF-8 through parse(utf8:)")
    func rawUTF8() throws {
        let bytes: [UInt8] = [0x22, 0xE2, 0x82, 0xAC, 0x20, 0xF0, 0x9F, 0x98, 0x80, 0x22]
        #expect(try parseBytes(bytes).get() == .string("€ 😀"))
    }

    @Test("accessors and typeName")
    func accessors() throws {
        let v = try JSONValue.parse(#"{"s":"x","i":-3,"b":true,"n":null,"a":[],"o":{}}"#)
        #expect(v["s"]?.stringValue == "x")
        #expect(v["i"]?.intValue == -3)
        #expect(v["b"]?.boolValue == true)
        #expect(v["n"]?.isNull == true)
        #expect(v["missing"] == nil)
        #expect(v["s"]?.intValue == nil)
        #expect(v["i"]?.stringValue == nil)
        #expect(v["i"]?.boolValue == nil)
        #expect(v["s"]?.isNull == false)
        #expect(JSONValue.int(1)["s"] == nil)
        #expect(v["s"]?.typeName == "string")
        #expect(v["i"]?.typeName == "integer")
        #expect(v["b"]?.typeName == "boolean")
        #expect(v["n"]?.typeName == "null")
        #expect(v["a"]?.typeName == "array")
        #expect(v["o"]?.typeName == "object")
    }
}

// MARK: - Parsing errors

@Suite("JSON parsing: errors name line and column")
struct JSONParseErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var column: Int
        var fragment: String
        init(_ text: String, _ line: Int, _ column: Int, _ fragment: String) {
            self.text = text
            self.line = line
            self.column = column
            self.fragment = fragment
        }
        var testDescription: String { String(reflecting: text) }
    }

    static let structural: [Case] = [
        Case("", 1, 1, "unexpected end of input"),
        Case("   ", 1, 4, "unexpected end of input"),
        Case("[1,]", 1, 4, "unexpected character ']'"),
        Case("{\"a\":1,}", 1, 8, "expected a string key"),
        Case("{a:1}", 1, 2, "expected a string key"),
        Case("{\"a\" 1}", 1, 6, "expected ':'"),
        Case("tru", 1, 1, "invalid literal"),
        Case("[nul]", 1, 2, "invalid literal"),
        Case("True", 1, 1, "unexpected character 'T'"),
        Case("\"abc", 1, 1, "unterminated string"),
        Case(#""\x""#, 1, 2, "invalid escape"),
        Case(#""\'""#, 1, 2, "invalid escape"),
        Case(#""\u12""#, 1, 4, "truncated"),
        Case(#""\u12G4""#, 1, 6, "invalid hex digit"),
        Case("-", 1, 2, "expected a digit"),
        Case("-a", 1, 2, "expected a digit"),
        Case("+1", 1, 1, "unexpected character '+'"),
        Case("[1 2]", 1, 4, "expected ',' or ']'"),
        Case("{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}'"),
        Case("[1", 1, 3, "unterminated array"),
        Case("{\"a\":1", 1, 7, "unterminated object"),
        // Multi-line input: the error is on line 2, column counted from that line's start.
        Case("{\"a\": 1,\n \"b\": x}", 2, 7, "unexpected character 'x'"),
        Case("{\n  \"a\": 1,\n  \"b\": tru\n}", 3, 8, "invalid literal"),
        Case("[1,\r\n 2,\r\n x]", 3, 2, "unexpected character 'x'"),
        // Columns count characters, not bytes.
        Case("[\"é\", x]", 1, 7, "unexpected character 'x'"),
        Case("[\"😀😀\", x]", 1, 8, "unexpected character 'x'"),
    ]

    static let duplicates: [Case] = [
        Case(#"{"a":1,"a":2}"#, 1, 8, "duplicate key \"a\""),
        Case(#"{"a":1,"\u0061":2}"#, 1, 8, "duplicate key \"a\""),
        Case("{\"o\": {\"k\": 1,\n\"k\": 2}}", 2, 1, "duplicate key \"k\""),
        Case(#"{"a":1,"b":2,"c":3,"b":4}"#, 1, 20, "duplicate key \"b\""),
    ]

    static let numbers: [Case] = [
        Case("1.5", 1, 1, "only integer numbers"),
        Case("1e3", 1, 1, "only integer numbers"),
        Case("1E3", 1, 1, "only integer numbers"),
        Case("1e-3", 1, 1, "only integer numbers"),
        Case("-2.0", 1, 1, "only integer numbers"),
        Case("0.5", 1, 1, "only integer numbers"),
        Case("[1, 1e3]", 1, 5, "only integer numbers"),
        Case("{\"amount\": 12.34}", 1, 12, "only integer numbers"),
        Case("01", 1, 1, "leading zeros"),
        Case("-01", 1, 1, "leading zeros"),
        Case("[00]", 1, 2, "leading zeros"),
        Case("007", 1, 1, "leading zeros"),
        Case("9223372036854775808", 1, 1, "out of the 64-bit integer range"),
        Case("-9223372036854775809", 1, 1, "out of the 64-bit integer range"),
        Case("18446744073709551616", 1, 1, "out of the 64-bit integer range"),
        Case("99999999999999999999999", 1, 1, "out of the 64-bit integer range"),
        Case("[0, 9223372036854775808]", 1, 5, "out of the 64-bit integer range"),
    ]

    static let strings: [Case] = [
        Case(#""\u0000""#, 1, 8, "\\u0000"),
        Case(#"{"k": "a\u0000b"}"#, 1, 15, "\\u0000"),
        Case(#""\ud83d""#, 1, 8, "unpaired UTF-16 surrogate"),
        Case(#""\ude00""#, 1, 8, "unpaired UTF-16 surrogate"),
        Case(#""\ud83dx""#, 1, 8, "unpaired UTF-16 surrogate"),
        Case(#""\ude00\ud83d""#, 1, 8, "unpaired UTF-16 surrogate"),
        Case(#""\ud83d\u0041""#, 1, 14, "invalid UTF-16 low surrogate"),
        Case(#""\ud83d\ud83d""#, 1, 14, "invalid UTF-16 low surrogate"),
        Case("\"a\tb\"", 1, 3, "control character"),
        Case("\"a\nb\"", 1, 3, "control character"),
        Case("\"a\rb\"", 1, 3, "control character"),
        Case("\"\u{01}\"", 1, 2, "control character"),
        Case("\"\u{1F}\"", 1, 2, "control character"),
        Case("\"\u{00}\"", 1, 2, "control character"),
        Case("{\"k\u{08}\": 1}", 1, 4, "control character"),
    ]

    static let trailing: [Case] = [
        Case("{} x", 1, 4, "unexpected data after the JSON value"),
        Case("1 2", 1, 3, "unexpected data after the JSON value"),
        Case("[]]", 1, 3, "unexpected data after the JSON value"),
        Case("\"a\"\"b\"", 1, 4, "unexpected data after the JSON value"),
        Case("truex", 1, 5, "unexpected data after the JSON value"),
        Case("null\n\n x", 3, 2, "unexpected data after the JSON value"),
        Case("{},{}", 1, 3, "unexpected data after the JSON value"),
    ]

    static let depth: [Case] = [
        Case(
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65), 1, 65,
            "nesting deeper than 64 levels"),
        Case(
            String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65), 1, 321,
            "nesting deeper than 64 levels"),
        Case(String(repeating: "[", count: 200), 1, 65, "nesting deeper than 64 levels"),
    ]

    func check(_ c: Case) throws {
        let error = try #require(syntaxError(c.text), "expected \(String(reflecting: c.text)) to be rejected")
        #expect(error.line == c.line)
        #expect(error.column == c.column)
        #expect(error.message.contains(c.fragment), "message: \(error.message)")
        #expect(error.description == "line \(c.line), column \(c.column): \(error.message)")
    }

    @Test("structural errors", arguments: structural)
    func structuralErrors(c: Case) throws { try check(c) }

    @Test("duplicate keys are rejected at the second key", arguments: duplicates)
    func duplicateKeys(c: Case) throws { try check(c) }

    @Test("non-integers, leading zeros and out-of-range integers are rejected", arguments: numbers)
    func numberErrors(c: Case) throws { try check(c) }

    @Test("bad strings: \\u0000, unpaired surrogates, raw control characters", arguments: strings)
    func stringErrors(c: Case) throws { try check(c) }

    @Test("trailing data is rejected", arguments: trailing)
    func trailingData(c: Case) throws { try check(c) }

    @Test("nesting deeper than 64 is rejected", arguments: depth)
    func depthErrors(c: Case) throws { try check(c) }

    @Test("Int64 bounds are exact")
    func int64Bounds() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("[9223372036854775807,-9223372036854775808]") == .array([.int(.max), .int(.min)]))
        #expect(syntaxError("9223372036854775808") != nil)
        #expect(syntaxError("-9223372036854775809") != nil)
    }

    struct ByteCase: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var line: Int
        var column: Int
        var fragment: String
        init(_ bytes: [UInt8], _ line: Int, _ column: Int, _ fragment: String) {
            self.bytes = bytes
            self.line = line
            self.column = column
            self.fragment = fragment
        }
        var testDescription: String { bytes.hexString }
    }

    static let q: UInt8 = 0x22
    static let invalidUTF8: [ByteCase] = [
        ByteCase([q, 0xFF, q], 1, 1, "invalid UTF-8"),
        ByteCase([q, 0xC3, q], 1, 1, "invalid UTF-8"),  // truncated two-byte sequence
        ByteCase([q, 0x80, q], 1, 1, "invalid UTF-8"),  // lone continuation byte
        ByteCase([q, 0xC0, 0xAF, q], 1, 1, "invalid UTF-8"),  // overlong '/'
        ByteCase([q, 0xED, 0xA0, 0x80, q], 1, 1, "invalid UTF-8"),  // encoded surrogate U+D800
        ByteCase([q, 0xF4, 0x90, 0x80, 0x80, q], 1, 1, "invalid UTF-8"),  // above U+10FFFF
        ByteCase([q, 0x61, 0x5C, 0x6E, 0xFF, q], 1, 1, "invalid UTF-8"),  // after an escape
        ByteCase([q, 0xC3, 0x5C, 0x6E, q], 1, 1, "invalid UTF-8"),  // split by an escape
        ByteCase([0x7B, q, 0xFF, q, 0x3A, 0x31, 0x7D], 1, 2, "invalid UTF-8"),  // in a key
        ByteCase([0x5B, 0x31, 0x2C, 0x0A, q, 0xE9, q, 0x5D], 2, 1, "invalid UTF-8"),  // Latin-1 é, line 2
        ByteCase([0xFF], 1, 1, "unexpected character"),
        ByteCase([0x5B, 0xFF, 0x5D], 1, 2, "unexpected character"),
        ByteCase([0xEF, 0xBB, 0xBF, 0x31], 1, 1, "unexpected character"),  // a BOM is not whitespace
    ]

    @Test("invalid UTF-8 is rejected (parse(utf8:))", arguments: invalidUTF8)
    func invalidUTF8Bytes(c: ByteCase) throws {
        let result = parseBytes(c.bytes)
        guard case .failure(let error) = result else {
            Issue.record("expected \(c.bytes.hexString) to be rejected, got \(result)")
            return
        }
        #expect(error.line == c.line)
        #expect(error.column == c.column)
        #expect(error.message.contains(c.fragment), "message: \(error.message)")
    }

    /// The tape, which the replay reads payloads with, judges every byte sequence in a string as the
    /// parser does: each lead byte with each second byte, then the continuations that complete it.
    @Test("the tape accepts exactly the UTF-8 the parser accepts")
    func tapeAgreesOnUTF8() {
        var cases = Self.invalidUTF8.map(\.bytes)
        for lead in 0x20...0xFF where lead != Int(Self.q) && lead != 0x5C {
            for second in 0x00...0xFF {
                for tail: [UInt8] in [[], [0x80], [0x80, 0xBF], [0x41]] {
                    cases.append([Self.q, UInt8(lead), UInt8(second)] + tail + [Self.q])
                }
            }
        }
        var disagreements: [String] = []
        for bytes in cases {
            let parsed = (try? bytes.withUnsafeBufferPointer { try JSONValue.parse(utf8: $0) }) != nil
            let taped = bytes.withUnsafeBufferPointer { JSONTape($0) } != nil
            if parsed != taped, disagreements.count < 10 {
                disagreements.append("\(bytes.hexString): parser \(parsed), tape \(taped)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    @Test("parse(utf8:) on an empty buffer reports end of input")
    func emptyBuffer() {
        guard case .failure(let error) = parseBytes([]) else {
            Issue.record("empty input parsed")
            return
        }
        #expect(error.line == 1 && error.column == 1)
        #expect(error.message.contains("unexpected end of input"))
    }
}
