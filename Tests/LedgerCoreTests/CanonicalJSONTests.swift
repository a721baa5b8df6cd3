import Testing
@testable import LedgerCore

/// `canonicalText` must be byte-for-byte what PostgreSQL prints for the value stored as `jsonb`.
/// The expected strings below were checked against PostgreSQL 15 (`select '<input>'::jsonb`).
@Suite("Canonical JSON text (PostgreSQL jsonb output)")
struct CanonicalJSONTests {
    static let postgresOutputs: [(String, String)] = [
        (#"{"b":1,"aa":[true,null],"a":"x"}"#, #"{"a": "x", "b": 1, "aa": [true, null]}"#),
        (#"{"bb":1,"a":2,"ab":3,"c":4}"#, #"{"a": 2, "c": 4, "ab": 3, "bb": 1}"#),
        (#"{"é":1,"ab":2,"z":3,"B":4,"a":5}"#, #"{"B": 4, "a": 5, "z": 3, "ab": 2, "é": 1}"#),
        (
            #"{"a": {}, "b": [], "c": [[], {}], "d": -9223372036854775808, "e": -0, "f": 9223372036854775807}"#,
            #"{"a": {}, "b": [], "c": [[], {}], "d": -9223372036854775808, "e": 0, "f": 9223372036854775807}"#
        ),
        (#"{"k\n":"v\u000b"}"#, #"{"k\n": "v\u000b"}"#),
        (#"[1,[2,[3,{"z":{"y":null,"x":false}}]]]"#, #"[1, [2, [3, {"z": {"x": false, "y": null}}]]]"#),
        (#"{"": 1, "a/b": "x\/y"}"#, #"{"": 1, "a/b": "x/y"}"#),
        ("  [ 1 , \"a\" ]  ", #"[1, "a"]"#),
        ("\"\"", "\"\""),
        ("[]", "[]"),
        ("{}", "{}"),
        ("null", "null"),
        ("true", "true"),
        ("false", "false"),
        ("-42", "-42"),
        (
            #""\" \\ \/ \b \f \n \r \t \u0001 \u001f \u007f é 😀 \ud83d\ude00""#,
            "\"\\\" \\\\ / \\b \\f \\n \\r \\t \\u0001 \\u001f \u{7F} é 😀 😀\""
        ),
        (#""\u00E9\u20AC""#, "\"é€\""),
    ]

    @Test("parsed text prints as PostgreSQL prints it", arguments: postgresOutputs)
    func matchesPostgres(input: String, expected: String) throws {
        let value = try JSONValue.parse(input)
        #expect(value.canonicalText == expected)
        // The canonical text is a fixed point.
        let again = try JSONValue.parse(value.canonicalText)
        #expect(again == value)
        #expect(again.canonicalText == expected)
    }

    /// PostgreSQL: `select string_agg(to_jsonb(chr(n))::text, ' ' order by n) from generate_series(1,31) n`.
    static let controlEscapes: [String] = [
        #""\u0001""#, #""\u0002""#, #""\u0003""#, #""\u0004""#, #""\u0005""#, #""\u0006""#, #""\u0007""#,
        #""\b""#, #""\t""#, #""\n""#, #""\u000b""#, #""\f""#, #""\r""#, #""\u000e""#, #""\u000f""#,
        #""\u0010""#, #""\u0011""#, #""\u0012""#, #""\u0013""#, #""\u0014""#, #""\u0015""#, #""\u0016""#,
        #""\u0017""#, #""\u0018""#, #""\u0019""#, #""\u001a""#, #""\u001b""#, #""\u001c""#, #""\u001d""#,
        #""\u001e""#, #""\u001f""#,
    ]

    @Test("every control character is escaped as PostgreSQL does", arguments: 1...31)
    func controlCharacters(code: Int) {
        let s = String(UnicodeScalar(UInt8(code)))
        #expect(JSONValue.string(s).canonicalText == Self.controlEscapes[code - 1])
        #expect(JSONValue.string(s).compactText == Self.controlEscapes[code - 1])
    }

    @Test("strings: quote and backslash escaped, '/', DEL and non-ASCII raw")
    func stringEscapes() {
        #expect(JSONValue.string("a\"b").canonicalText == #""a\"b""#)
        #expect(JSONValue.string("a\\b").canonicalText == #""a\\b""#)
        #expect(JSONValue.string("a/b").canonicalText == #""a/b""#)
        #expect(JSONValue.string("\u{7F}").canonicalText == "\"\u{7F}\"")
        #expect(JSONValue.string("héllo wörld € 😀").canonicalText == "\"héllo wörld € 😀\"")
        #expect(JSONValue.string("\u{2028}\u{FEFF}").canonicalText == "\"\u{2028}\u{FEFF}\"")
        #expect(JSONValue.string("\u{00}").canonicalText == #""\u0000""#)
    }

    @Test("integers print in plain decimal")
    func integers() {
        #expect(JSONValue.int(0).canonicalText == "0")
        #expect(JSONValue.int(-1).canonicalText == "-1")
        #expect(JSONValue.int(.max).canonicalText == "9223372036854775807")
        #expect(JSONValue.int(.min).canonicalText == "-9223372036854775808")
    }

    @Test("makeObject sorts keys by byte length then bytewise; later duplicates win")
    func makeObject() {
        let v = JSONValue.makeObject([
            ("b", .int(1)), ("aa", .array([.bool(true), .null])), ("a", .string("x")), ("b", .int(2)), ("é", .null),
            ("Z", .bool(false)),
        ])
        #expect(v.canonicalText == #"{"Z": false, "a": "x", "b": 2, "aa": [true, null], "é": null}"#)
        #expect(v["b"] == .int(2))
        #expect(JSONValue.makeObject([]).canonicalText == "{}")
    }

    @Test("makeObject and parse agree")
    func makeObjectMatchesParse() throws {
        let built = JSONValue.makeObject([
            ("orderId", .string("o-1")), ("amountMinor", .int(499)), ("currency", .string("EUR")),
            ("items", .array([.makeObject([("sku", .string("coins_100")), ("qty", .int(2))])])),
        ])
        let parsed = try JSONValue.parse(
            #"{"items":[{"qty":2,"sku":"coins_100"}],"currency":"EUR","orderId":"o-1","amountMinor":499}"#)
        #expect(built == parsed)
        #expect(
            built.canonicalText
                == #"{"items": [{"qty": 2, "sku": "coins_100"}], "orderId": "o-1", "currency": "EUR", "amountMinor": 499}"#
        )
    }

    @Test("writeCanonical appends to the buffer")
    func writeCanonicalAppends() {
        var out: [UInt8] = Array("prefix:".utf8)
        JSONValue.array([.int(1), .string("é")]).writeCanonical(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "prefix:[1, \"é\"]")
        var compact: [UInt8] = Array("p:".utf8)
        JSONValue.array([.int(1), .string("é")]).writeCompact(into: &compact)
        #expect(String(decoding: compact, as: UTF8.self) == "p:[1,\"é\"]")
    }

    static let compactCases: [(String, String)] = [
        (#"{"b":1,"aa":[true,null],"a":"x"}"#, #"{"a":"x","b":1,"aa":[true,null]}"#),
        (
            #"{ "o" : { "k" : [ 1 , 2 , { } , [ ] ] } , "s" : "a\nb\u0001/" }"#,
            #"{"o":{"k":[1,2,{},[]]},"s":"a\nb\u0001/"}"#
        ),
        ("[ ]", "[]"),
        ("{ }", "{}"),
        ("  -5 ", "-5"),
        (#""é😀""#, #""é😀""#),
    ]

    @Test("compactText: same order and escapes, no spaces", arguments: compactCases)
    func compact(input: String, expected: String) throws {
        let value = try JSONValue.parse(input)
        #expect(value.compactText == expected)
        #expect(try JSONValue.parse(value.compactText) == value)
    }
}
