/// The positions of the facts behind a view, in the order the fold added them, packed: the first
/// as a varint, then the step from each to the next (the fold adds them in log order, so a step is
/// small: one or two bytes where an `Int64` takes eight).
///
/// Up to ``inlineCapacity`` bytes lie in the list itself, so most orders and transactions (a dozen
/// facts, close together in the log) keep their positions without any memory of their own. An
/// `[Int64]` took its header, eight bytes a position and the spare room of its doubling: 96-160
/// bytes out of line for an order of five to ten facts (the positions' arrays were 31 MB of a
/// 244 MB heap peak, `heaptrack`, auditing 1 M facts). A list whose bytes outgrow the inline room
/// moves them all to an array, which then grows by the size of each step: one to three bytes a
/// position for a user's long list, where an `Int64` took eight.
///
/// Steps are zigzag varints (`Int64` differences, wrapping), so a list holds any positions in any
/// order; the fold's are increasing. The encoding of a sequence is unique, so two lists are equal
/// when their bytes are.
public struct PositionList: Sendable {
    /// The last position added (meaningless while the list is empty).
    @usableFromInline var lastValue: Int64 = 0
    /// The bytes while they fit: ``inlineCapacity`` bytes, then how many of them are used, or
    /// ``outOfLineMark`` once they lie out of line (so that whether the list is empty or inline is
    /// read here, without following the array's pointer: a cache miss per fact for a user's list).
    @usableFromInline var inline: (UInt64, UInt64, UInt64) = (0, 0, 0)
    /// Every byte once they do not fit inline (then the inline bytes are not read).
    @usableFromInline var outOfLine: [UInt8] = []

    @inlinable static var inlineCapacity: Int { 23 }
    @inlinable static var outOfLineMark: UInt8 { .max }

    @inlinable public init() {}

    @inlinable public init<S: Sequence<Int64>>(_ positions: S) {
        for p in positions { append(p) }
    }

    /// The inline bytes used, or ``outOfLineMark``.
    @inlinable var inlineCount: Int {
        withUnsafeBytes(of: inline) { Int($0[Self.inlineCapacity]) }
    }

    @inlinable public var isEmpty: Bool { inlineCount == 0 }

    /// Whether the bytes lie in the list itself (no memory of its own).
    @inlinable var isInline: Bool { inlineCount != Int(Self.outOfLineMark) }

    /// The last position added.
    @inlinable public var last: Int64? { isEmpty ? nil : lastValue }

    /// The first position added.
    @inlinable public var first: Int64? {
        var i = makeIterator()
        return i.next()
    }

    /// How many positions the list holds: every varint ends with a byte below 0x80.
    @inlinable public var count: Int {
        withBytes { bytes in bytes.reduce(0) { $0 + ($1 < 0x80 ? 1 : 0) } }
    }

    /// Adds `position` at the end.
    @inlinable public mutating func append(_ position: Int64) {
        let step = isEmpty ? position : position &- lastValue
        lastValue = position
        // Zigzag: small steps either way become small unsigned numbers.
        var v = UInt64(bitPattern: (step << 1) ^ (step >> 63))
        var encoded: (UInt64, UInt64) = (0, 0)  // up to 10 bytes
        let n = withUnsafeMutableBytes(of: &encoded) { out -> Int in
            var n = 0
            while v >= 0x80 {
                out[n] = UInt8(truncatingIfNeeded: v) | 0x80
                v >>= 7
                n += 1
            }
            out[n] = UInt8(v)
            return n + 1
        }
        withUnsafeBytes(of: encoded) { encoded in
            let bytes = UnsafeRawBufferPointer(rebasing: encoded[0..<n])
            if isInline {
                let used = inlineCount
                if used + n <= Self.inlineCapacity {
                    withUnsafeMutableBytes(of: &inline) { room in
                        room.baseAddress!.advanced(by: used).copyMemory(from: bytes.baseAddress!, byteCount: n)
                        room[Self.inlineCapacity] = UInt8(used + n)
                    }
                    return
                }
                outOfLine.reserveCapacity(2 * Self.inlineCapacity)
                withUnsafeBytes(of: inline) { outOfLine.append(contentsOf: $0[0..<used]) }
                withUnsafeMutableBytes(of: &inline) { $0[Self.inlineCapacity] = Self.outOfLineMark }
            }
            outOfLine.append(contentsOf: bytes)
        }
    }

    /// `body` applied to the list's bytes.
    @inlinable func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        if !isInline { return outOfLine.withUnsafeBytes(body) }
        return withUnsafeBytes(of: inline) {
            body(UnsafeRawBufferPointer(rebasing: $0[0..<Int($0[Self.inlineCapacity])]))
        }
    }
}

extension PositionList: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline let list: PositionList
        @usableFromInline var offset = 0
        @usableFromInline var value: Int64 = 0

        @inlinable init(_ list: PositionList) { self.list = list }

        @inlinable public mutating func next() -> Int64? {
            let (raw, next) =
                list.withBytes { bytes -> (UInt64, Int)? in
                    guard offset < bytes.count else { return nil }
                    var raw: UInt64 = 0
                    var shift: UInt64 = 0
                    var i = offset
                    while true {
                        let b = bytes[i]
                        i += 1
                        raw |= UInt64(b & 0x7f) << shift
                        if b < 0x80 { return (raw, i) }
                        shift += 7
                    }
                } ?? (0, -1)
            guard next >= 0 else { return nil }
            let step = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            value = offset == 0 ? step : value &+ step
            offset = next
            return value
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(self) }
    @inlinable public var underestimatedCount: Int { isEmpty ? 0 : 1 }
}

extension PositionList: Hashable {
    @inlinable public static func == (a: PositionList, b: PositionList) -> Bool {
        a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
    }

    @inlinable public func hash(into h: inout Hasher) { withBytes { h.combine(bytes: $0) } }
}

extension PositionList: ExpressibleByArrayLiteral {
    @inlinable public init(arrayLiteral positions: Int64...) { self.init(positions) }
}

extension PositionList: CustomStringConvertible {
    @inlinable public var description: String { Array(self).description }
}

/// As an array of positions (as it was when views held `[Int64]`).
extension PositionList: Codable {
    @inlinable public init(from decoder: any Decoder) throws {
        self.init(try [Int64](from: decoder))
    }

    @inlinable public func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}
