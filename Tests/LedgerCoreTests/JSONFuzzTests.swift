import Foundation
import LedgerCore
import Testing

/// A bounded fuzz run (a fixed number of cases from a seeded generator, so a failure reproduces)
/// over the JSON reader and the event line decoder: mutated documents and lines never crash them,
/// what parses round-trips through the canonical text, and what is refused is refused with a
/// short message holding no raw control character.
@Suite("Fuzz: JSON reader and event lines")
struct JSONFuzzTests {
    static let cases = 20_000

    struct Gen {
        var rng: SplitMix64
        init(state: UInt64) { rng = SplitMix64(seed: state) }
        mutating func below(_ n: Int) -> Int { rng.below(n) }
        mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }

        static let pieces: [String] = [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\u0000", "\\ud800", "\\n", "0", "-0", "1e5",
            "1.0", "99999999999999999999", "-9223372036854775808", "true", "nul", "null", " ", "\n", "\u{1B}",
            "\u{0}", "é", "😀", "\u{FEFF}", "\"amount\"", "\"eventId\"", "\"payload\"", "{}", "[]",
        ]

        mutating func value(depth: Int = 0) -> JSONValue {
            switch depth > 3 ? below(4) : below(6) {
            case 0: return .null
            case 1: return .bool(below(2) == 0)
            case 2: return .int(pick([Int64.min, Int64.max, 0, -1, 600, Int64(below(1_000_000))]))
            case 3:
                return .string(
                    (0..<below(6)).map { _ in pick(["a", "Z", " ", "\"", "\\", "\n", "\u{1}", "é", "中", "😀", "\u{7f}"])
                    }.joined())
            case 4: return .array((0..<below(4)).map { _ in value(depth: depth + 1) })
            default:
                return .makeObject(
                    (0..<below(5)).map { _ in
                        (pick(["a", "b", "amount", "é", "\u{1}k", ""]) + String(below(3)), value(depth: depth + 1))
                    })
            }
        }

        /// `text` with 1-4 random edits: a byte or piece inserted, deleted, replaced, or the text cut.
        mutating func mutate(_ text: String) -> String {
            var s = Array(text.unicodeScalars)
            for _ in 0..<(1 + below(4)) {
                let i = below(s.count + 1)
                switch below(5) {
                case 0: s.insert(contentsOf: pick(Self.pieces).unicodeScalars, at: i)
                case 1: if i < s.count { s.remove(at: i) }
                case 2: if i < s.count { s[i] = Unicode.Scalar(UInt8(below(128))) }
                case 3: s = Array(s.prefix(i))
                default: if i < s.count { s.insert(contentsOf: s[i..<min(s.count, i + 1 + below(8))], at: i) }
                }
            }
            var out = String.UnicodeScalarView()
            out.append(contentsOf: s)
            return String(out)
        }
    }

    static let line =
        #"{"eventId":"0b7e3f1a-2c4d-4e5f-8a9b-000000000001","stream":"order:o1","type":"OrderCreated","schemaVersion":1,"payload":{"orderId":"o1","amount":600,"currency":"CNY"},"metadata":{"source":"shop"},"occurredAt":"2026-03-31T08:15:00Z","idempotencyKey":"order:o1:created","expectedVersion":"no-stream"}"#

    @Test func mutatedDocumentsNeverCrashAndWhatParsesRoundTrips() {
        var g = Gen(state: 20_261_123)
        var parsed = 0, refused = 0
        for n in 0..<Self.cases {
            let source = n % 2 == 0 ? g.value().compactText : Self.line
            let text = g.mutate(source)
            do {
                let v = try JSONValue.parse(text)
                parsed += 1
                let canonical = v.canonicalText
                #expect(
                    (try? JSONValue.parse(canonical)) == v, "canonical text does not round-trip: \(Echo.quoted(text))")
                #expect((try? JSONValue.parse(v.compactText)).map(\.canonicalText) == canonical)
            } catch {
                refused += 1
                let message = error.description
                #expect(message.count < 600, "a \(message.count)-character message for \(Echo.quoted(text))")
            }
        }
        #expect(
            parsed > Self.cases / 20 && refused > Self.cases / 20,
            "the generator should make both: \(parsed) parsed, \(refused) refused")
    }

    /// The tape (the in-place reader the replay decodes with) accepts exactly the texts the parser
    /// accepts, and finds in each object the members the parser finds, with the same values.
    @Test func theTapeAcceptsWhatTheParserAcceptsAndFindsTheSameMembers() {
        var g = Gen(state: 11_23)
        var parsed = 0, refused = 0
        for n in 0..<Self.cases {
            let source = n % 2 == 0 ? g.value().compactText : Self.line
            let bytes = Array((n % 5 == 0 ? source : g.mutate(source)).utf8)
            let value = try? bytes.withUnsafeBufferPointer { try JSONValue.parse(utf8: $0) }
            let tape = bytes.withUnsafeBufferPointer { JSONTape($0) }
            #expect(
                (tape != nil) == (value != nil),
                "tape \(tape != nil), parser \(value != nil): \(Echo.quoted(String(decoding: bytes, as: UTF8.self)))")
            guard let tape, let value else {
                refused += 1
                continue
            }
            parsed += 1
            bytes.withUnsafeBufferPointer { b in
                #expect(
                    Self.value(tape.root, tape, b) == value, "\(Echo.quoted(String(decoding: bytes, as: UTF8.self)))")
            }
        }
        #expect(parsed > Self.cases / 20 && refused > Self.cases / 20, "\(parsed) parsed, \(refused) refused")
    }

    /// A tape member as a value: objects from their members on the tape, anything else parsed from
    /// its token's bytes.
    static func value(_ m: JSONTape.Member, _ tape: JSONTape, _ b: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        switch m.kind {
        case .object:
            return .makeObject(
                m.memberRange.map { i in
                    let member = tape.members[i]
                    let key = String(
                        decoding: member.flags.contains(.keyEscaped)
                            ? JSONTape.unescaped(b, member.keyRange) : Array(b[member.keyRange]),
                        as: UTF8.self)
                    return (key, value(member, tape, b) ?? .string("unreadable"))
                })
        case .string:
            let text = m.flags.contains(.escaped) ? JSONTape.unescaped(b, m.stringRange) : Array(b[m.stringRange])
            return .string(String(decoding: text, as: UTF8.self))
        case .int: return .int(m.value)
        case .bool: return .bool(m.value != 0)
        case .null: return .null
        case .array: return try? JSONValue.parse(utf8: UnsafeBufferPointer(rebasing: b[m.valueRange]))
        }
    }

    @Test func mutatedEventLinesNeverCrashAndErrorsAreEscaped() {
        var g = Gen(state: 7)
        let decoder = EventLineDecoder(validation: EventValidation(allowUnknownTypes: true))
        var accepted = 0, refused = 0
        for _ in 0..<Self.cases {
            let text = g.mutate(Self.line)
            do {
                let e = try decoder.decode(text, lineNumber: 1)
                accepted += 1
                #expect(
                    (try? EventValidation(allowUnknownTypes: true).validate(e)) != nil,
                    "a decoded line does not validate: \(Echo.quoted(text))")
            } catch {
                refused += 1
                let message = error.description
                #expect(message.count < 1_000, "a \(message.count)-character message for \(Echo.quoted(text))")
                #expect(
                    !message.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F },
                    "a raw control character in \(Echo.quoted(message))")
            }
        }
        #expect(accepted > 0 && refused > Self.cases / 2, "\(accepted) accepted, \(refused) refused")
    }
}
