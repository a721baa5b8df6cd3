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
            guard c == UInt8(ascii: "\\") else { out.append(c); i += 1; continue }
            let e = bytes[i + 1]
            i += 2
            if let simple = simpleEscape(e) { out.append(simple); continue }
            switch e {
            case UInt8(ascii: "u"):
                var scalar = Scan.hex4(bytes, i, end: range.upperBound)!
                i += 4
                if scalar >= 0xD800, scalar < 0xDC00 {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (Scan.hex4(bytes, i + 2, end: range.upperBound)! - 0xDC00)
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
            out.append(UInt8(0xC0 | s >> 6)); out.append(UInt8(0x80 | s & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | s >> 12)); out.append(UInt8(0x80 | s >> 6 & 0x3F)); out.append(UInt8(0x80 | s & 0x3F))
        default:
            out.append(UInt8(0xF0 | s >> 18)); out.append(UInt8(0x80 | s >> 12 & 0x3F))
            out.append(UInt8(0x80 | s >> 6 & 0x3F)); out.append(UInt8(0x80 | s & 0x3F))
        }
    }

    /// The scan: the rules of ``JSONParser``, byte for byte, without building values.
    struct Scan {
        let bytes: UnsafeBufferPointer<UInt8>
        /// Where the text ends in `bytes`.
        let end: Int
        var index: Int
        var tape: [Member] = []
        /// Members of the objects still open, innermost last.
        var open: [Member] = []

        init(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
            self.bytes = bytes
            self.end = range.upperBound
            self.index = range.lowerBound
            tape.reserveCapacity(16)
            open.reserveCapacity(16)
        }

        mutating func skipWhitespace() {
            while index < end {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// `keep`: record an object's members (not for objects inside arrays, which no reader asks for).
        mutating func value(depth: Int, keep: Bool) -> Member? {
            guard index < end else { return nil }
            var m = Member()
            m.valueStart = Int32(truncatingIfNeeded: index)
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard let (first, count) = object(depth: depth + 1, keep: keep) else { return nil }
                m.kind = .object; m.value = Int64(first); m.count = Int32(truncatingIfNeeded: count)
            case UInt8(ascii: "["):
                guard array(depth: depth + 1) else { return nil }
                m.kind = .array
            case UInt8(ascii: "\""):
                guard let flags = string() else { return nil }
                m.kind = .string; m.flags = flags
            case UInt8(ascii: "t"):
                guard literal("true") else { return nil }
                m.kind = .bool; m.value = 1
            case UInt8(ascii: "f"):
                guard literal("false") else { return nil }
                m.kind = .bool
            case UInt8(ascii: "n"):
                guard literal("null") else { return nil }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let v = integer() else { return nil }
                m.kind = .int; m.value = v
            default:
                return nil
            }
            m.valueEnd = Int32(truncatingIfNeeded: index)
            return m
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard index + n <= end else { return false }
            for k in 0..<n where bytes[index + k] != word.utf8Start[k] { return false }
            index += n
            return true
        }

        mutating func integer() -> Int64? {
            var negative = false
            if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            guard index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return nil }
            if bytes[index] == UInt8(ascii: "0"), index + 1 < end,
               bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9") { return nil }
            var magnitude: UInt64 = 0
            while index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                if o1 || o2 || m2 > UInt64(Int64.max) + (negative ? 1 : 0) { return nil }
                magnitude = m2
                index += 1
            }
            if index < end, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
            if negative { return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude) }
            return Int64(magnitude)
        }

        static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, end: Int) -> UInt32? {
            guard at + 4 <= end else { return nil }
            var v: UInt32 = 0
            for k in 0..<4 {
                let c = bytes[at + k]
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: return nil
                }
                v = v << 4 | d
            }
            return v
        }

        /// A string from its opening quote past its closing one; nil if it is not valid.
        mutating func string() -> Flags? {
            index += 1
            var flags: Flags = []
            while true {
                skipPlainBytes()
                guard index < end else { return nil }
                let c = bytes[index]
                if c == UInt8(ascii: "\"") { index += 1; return flags }
                if c == UInt8(ascii: "\\") {
                    flags.insert(.escaped)
                    guard index + 1 < end else { return nil }
                    let e = bytes[index + 1]
                    index += 2
                    if JSONTape.simpleEscape(e) != nil { continue }
                    switch e {
                    case UInt8(ascii: "u"):
                        guard let scalar = Self.hex4(bytes, index, end: end) else { return nil }
                        index += 4
                        if scalar >= 0xD800, scalar < 0xDC00 {
                            guard index + 1 < end, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                                  let low = Self.hex4(bytes, index + 2, end: end), low >= 0xDC00, low < 0xE000 else { return nil }
                            index += 6
                            flags.insert(.nonASCII)
                        } else if scalar >= 0xDC00, scalar < 0xE000 {
                            return nil
                        } else if scalar == 0 {
                            return nil
                        } else if scalar >= 0x80 {
                            flags.insert(.nonASCII)
                        }
                    default:
                        return nil
                    }
                    continue
                }
                if c < 0x20 { return nil }
                if c < 0x80 {
                    if c == 0x7F { flags.insert(.delete) }
                    index += 1
                    continue
                }
                flags.insert(.nonASCII)
                guard let n = utf8Sequence() else { return nil }
                index += n
            }
        }

        /// Skips eight bytes at a time while none of them needs a look: no quote, backslash,
        /// control character, DEL or byte above 0x7F.
        @inline(__always)
        mutating func skipPlainBytes() {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            /// Whether a byte of `v` is zero (exact: a borrow only reaches bytes above a zero one).
            func anyZero(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
            guard let base = bytes.baseAddress else { return }
            while index + 8 <= end {
                let w = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                // With no high bit set, a byte below 0x20 is one that subtracting 0x20 borrows from.
                if w & highs != 0 || (w &- ones &* 0x20) & ~w & highs != 0
                    || anyZero(w ^ (ones &* 0x22)) || anyZero(w ^ (ones &* 0x5C)) || anyZero(w ^ (ones &* 0x7F)) { return }
                index += 8
            }
        }

        /// The length of the well-formed UTF-8 sequence at `index` (Unicode's table 3-7), or nil.
        func utf8Sequence() -> Int? {
            let c = bytes[index]
            func continuation(_ k: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
                index + k < end && bytes[index + k] >= low && bytes[index + k] <= high
            }
            switch c {
            case 0xC2...0xDF: return continuation(1) ? 2 : nil
            case 0xE0: return continuation(1, 0xA0) && continuation(2) ? 3 : nil
            case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : nil
            case 0xED: return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : nil
            case 0xF0: return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : nil
            case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : nil
            case 0xF4: return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : nil
            default: return nil
            }
        }

        mutating func array(depth: Int) -> Bool {
            if depth > JSONParser.maximumDepth { return false }
            index += 1
            skipWhitespace()
            if index < end, bytes[index] == UInt8(ascii: "]") { index += 1; return true }
            while true {
                skipWhitespace()
                guard value(depth: depth, keep: false) != nil else { return false }
                skipWhitespace()
                guard index < end else { return false }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return true }
                return false
            }
        }

        /// An object's members, checked for duplicate keys; where they went in the tape.
        mutating func object(depth: Int, keep: Bool) -> (Int, Int)? {
            if depth > JSONParser.maximumDepth { return nil }
            index += 1
            let base = open.count
            skipWhitespace()
            if index < end, bytes[index] == UInt8(ascii: "}") { index += 1; return (tape.count, 0) }
            while true {
                skipWhitespace()
                guard index < end, bytes[index] == UInt8(ascii: "\"") else { return nil }
                let keyStart = index + 1
                guard let keyFlags = string() else { return nil }
                let keyEnd = index - 1
                skipWhitespace()
                guard index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                guard var m = value(depth: depth, keep: keep) else { return nil }
                m.keyStart = Int32(truncatingIfNeeded: keyStart)
                m.keyEnd = Int32(truncatingIfNeeded: keyEnd)
                if keyFlags.contains(.escaped) { m.flags.insert(.keyEscaped) }
                open.append(m)
                skipWhitespace()
                guard index < end else { return nil }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; break }
                return nil
            }
            guard !hasDuplicateKeys(open[base...]) else { return nil }
            let first = tape.count, count = open.count - base
            if keep { tape.append(contentsOf: open[base...]) }
            open.removeSubrange(base...)
            return (first, count)
        }

        func hasDuplicateKeys(_ members: ArraySlice<Member>) -> Bool {
            // PostgreSQL prints a jsonb object's keys in strictly increasing order (length, then
            // bytes): then no key can be there twice, seen by comparing neighbours.
            if zip(members, members.dropFirst()).allSatisfy({ jsonbBefore($0, $1) }) { return false }
            if members.count > 16 {
                var seen: Set<[UInt8]> = []
                return members.contains { !seen.insert(key($0)).inserted }
            }
            for i in members.indices {
                for j in members.indices where j > i && sameKey(members[i], members[j]) { return true }
            }
            return false
        }

        /// Whether `a`'s key comes strictly before `b`'s in jsonb order (false for escaped keys).
        func jsonbBefore(_ a: Member, _ b: Member) -> Bool {
            guard !a.flags.contains(.keyEscaped), !b.flags.contains(.keyEscaped) else { return false }
            let n = a.keyEnd - a.keyStart, m = b.keyEnd - b.keyStart
            if n != m { return n < m }
            return n > 0 && memcmp(bytes.baseAddress! + Int(a.keyStart), bytes.baseAddress! + Int(b.keyStart), Int(n)) < 0
        }

        func key(_ m: Member) -> [UInt8] {
            m.flags.contains(.keyEscaped) ? JSONTape.unescaped(bytes, m.keyRange) : Array(bytes[m.keyRange])
        }

        func sameKey(_ a: Member, _ b: Member) -> Bool {
            if a.flags.contains(.keyEscaped) || b.flags.contains(.keyEscaped) { return key(a) == key(b) }
            return a.keyEnd - a.keyStart == b.keyEnd - b.keyStart && bytes[a.keyRange].elementsEqual(bytes[b.keyRange])
        }
    }
}
