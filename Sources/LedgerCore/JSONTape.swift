#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON text read in place: one pass over its bytes checks it exactly as ``JSONValue/parse(utf8:)``
/// does (the same texts are accepted) and records where each object member's key and value lie,
/// so a reader finds members by their key's bytes and makes strings only of the values it reads.
/// No tree, no key strings, no value that is never read.
///
/// The tape does not say why a text is refused: ``JSONValue/parse(utf8:)`` names the line and
/// column, and a caller asks it once a text is refused.
public struct JSONTape: Sendable {
    public enum Kind: UInt8, Sendable {
        case null, bool, int, string, array, object

        /// As ``JSONValue/typeName``, for messages.
        public var name: String {
            switch self {
            case .null: return "null"
            case .bool: return "boolean"
            case .int: return "integer"
            case .string: return "string"
            case .array: return "array"
            case .object: return "object"
            }
        }
    }

    /// What the scan saw in a string (a key or a value).
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The value string holds a backslash escape: its bytes differ from its text.
        public static let escaped = Flags(rawValue: 1)
        /// The key holds a backslash escape.
        public static let keyEscaped = Flags(rawValue: 2)
        /// The value string holds a byte above 0x7F (valid UTF-8, checked by the scan).
        public static let nonASCII = Flags(rawValue: 4)
        /// The value string holds DEL (0x7F), the one control character JSON lets through unescaped.
        public static let delete = Flags(rawValue: 8)
    }

    /// One member of an object (or the root value, with an empty key).
    public struct Member: Sendable {
        /// The key's bytes, between its quotes.
        public var keyStart: Int32 = 0, keyEnd: Int32 = 0
        /// The value's token: a string with its quotes, an object from `{` to `}`.
        public var valueStart: Int32 = 0, valueEnd: Int32 = 0
        public var kind: Kind = .null
        public var flags: Flags = []
        /// An object's number of members; they are `members[first..<first + count]`.
        public var count: Int32 = 0
        /// An integer's value, a boolean's (0 or 1), or an object's first member in ``members``.
        public var value: Int64 = 0

        public var keyRange: Range<Int> { Int(keyStart)..<Int(keyEnd) }
        public var valueRange: Range<Int> { Int(valueStart)..<Int(valueEnd) }
        /// A string's bytes between its quotes.
        public var stringRange: Range<Int> { Int(valueStart) + 1..<Int(valueEnd) - 1 }
        /// An object's members' indices in ``members``.
        public var memberRange: Range<Int> { Int(value)..<Int(value) + Int(count) }
    }

    /// The whole text's value.
    public let root: Member
    /// The members of every object outside arrays, each object's together, inner objects' before
    /// the members that hold them.
    public let members: [Member]

    /// Nil when `bytes[range]` (all of them when nil) is not a JSON text ``JSONValue/parse(utf8:)``
    /// accepts. Positions in the tape are indices of `bytes`.
    public init?(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>? = nil) {
        let range = range ?? 0..<bytes.count
        var scan = Scan(bytes, range)
        scan.skipWhitespace()
        guard let root = scan.value(depth: 0, keep: true) else { return nil }
        scan.skipWhitespace()
        guard scan.index == range.upperBound else { return nil }
        self.root = root
        self.members = scan.tape
    }

    /// The bytes a string's text stands for, escapes undone (`range`: between its quotes, as
    /// scanned: valid).
    public static func unescaped(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let c = bytes[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            let e = bytes[i + 1]
            i += 2
            if let simple = simpleEscape(e) {
                out.append(simple)
                continue
            }
            switch e {
            case UInt8(ascii: "u"):
                var scalar = Scan.hex4(bytes, i, end: range.upperBound)!
                i += 4
                if scalar >= 0xD800, scalar < 0xDC00 {
                    scalar =
                        0x10000 + ((scalar - 0xD800) << 10) + (Scan.hex4(bytes, i + 2, end: range.upperBound)! - 0xDC00)
                    i += 6
                }
                appendUTF8(scalar, to: &out)
            default: preconditionFailure("a scanned string holds only valid escapes")
            }
        }
        return out
    }

    /// The byte a one-letter escape (`\n`, `\"`...) stands for; nil for `\u` and for letters that
    /// are no escape.
    @inline(__always)
    static func simpleEscape(_ e: UInt8) -> UInt8? {
        switch e {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return e
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }

    static func appendUTF8(_ s: UInt32, to out: inout [UInt8]) {
        switch s {
        case 0..<0x80: out.append(UInt8(s))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | s >> 6))
            out.append(UInt8(0x80 | s & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | s >> 12))
            out.append(UInt8(0x80 | s >> 6 & 0x3F))
            out.append(UInt8(0x80 | s & 0x3F))
        default:
            out.append(UInt8(0xF0 | s >> 18))
            out.append(UInt8(0x80 | s >> 12 & 0x3F))
            out.append(UInt8(0x80 | s >> 6 & 0x3F))
            out.append(UInt8(0x80 | s & 0x3F))
        }
    }
}
