#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONTape {
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
                m.kind = .object
                m.value = Int64(first)
                m.count = Int32(truncatingIfNeeded: count)
            case UInt8(ascii: "["):
                guard array(depth: depth + 1) else { return nil }
                m.kind = .array
            case UInt8(ascii: "\""):
                guard let flags = string() else { return nil }
                m.kind = .string
                m.flags = flags
            case UInt8(ascii: "t"):
                guard literal("true") else { return nil }
                m.kind = .bool
                m.value = 1
            case UInt8(ascii: "f"):
                guard literal("false") else { return nil }
                m.kind = .bool
            case UInt8(ascii: "n"):
                guard literal("null") else { return nil }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let v = integer() else { return nil }
                m.kind = .int
                m.value = v
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
            if bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            guard index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return nil }
            if bytes[index] == UInt8(ascii: "0"), index + 1 < end,
                bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9")
            {
                return nil
            }
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
                if c == UInt8(ascii: "\"") {
                    index += 1
                    return flags
                }
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
                            guard index + 1 < end, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u"),
                                let low = Self.hex4(bytes, index + 2, end: end), low >= 0xDC00, low < 0xE000
                            else { return nil }
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
                    || anyZero(w ^ (ones &* 0x22)) || anyZero(w ^ (ones &* 0x5C)) || anyZero(w ^ (ones &* 0x7F))
                {
                    return
                }
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
            if index < end, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return true
            }
            while true {
                skipWhitespace()
                guard value(depth: depth, keep: false) != nil else { return false }
                skipWhitespace()
                guard index < end else { return false }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return true
                }
                return false
            }
        }

        /// An object's members, checked for duplicate keys; where they went in the tape.
        mutating func object(depth: Int, keep: Bool) -> (Int, Int)? {
            if depth > JSONParser.maximumDepth { return nil }
            index += 1
            let base = open.count
            skipWhitespace()
            if index < end, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return (tape.count, 0)
            }
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
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                }
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
            return n > 0
                && memcmp(bytes.baseAddress! + Int(a.keyStart), bytes.baseAddress! + Int(b.keyStart), Int(n)) < 0
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
