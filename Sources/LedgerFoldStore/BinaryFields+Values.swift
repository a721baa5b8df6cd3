import LedgerCore

// The values views are made of, as their snapshot fields write and read them (``BinaryFields``):
// timestamps, optionals, enums by their raw value, lists and positions. A view's own
// declaration of its fields (in the domain, beside the view) is made of these calls.

extension BinaryWriter {
    @inlinable package func timestamp(_ t: Timestamp) { int(t.microseconds) }
    @inlinable package func timestamp(_ t: Timestamp?) { optional(t) { self.int($0.microseconds) } }
    @inlinable package func raw<E: RawRepresentable>(_ e: E) where E.RawValue == String { string(e.rawValue) }
    @inlinable package func string(_ s: String?) { optional(s) { self.string($0) } }
    @inlinable package func int(_ i: Int64?) { optional(i) { self.int($0) } }
    @inlinable package func ints(_ xs: [Int64]) { array(xs) { self.int($0) } }
    /// As ``array(_:_:)`` writes an array.
    @inlinable package func few<V>(_ xs: Few<V>, _ write: (V) -> Void) {
        if case .many(let all) = xs.storage { heapBytes += Self.allocation(all.capacity * MemoryLayout<V>.stride) }
        count(xs.count)
        for x in xs { write(x) }
    }
    /// As ``ints(_:)`` writes an array of them.
    @inlinable package func positions(_ ps: PositionList) {
        if !ps.isInline { heapBytes += Self.allocation(ps.outOfLine.capacity) }
        count(ps.count)
        for p in ps { int(p) }
    }
}

extension BinaryReader {
    @inlinable package func timestamp() throws -> Timestamp { Timestamp(microsecondsSince1970: try int()) }
    @inlinable package func optionalTimestamp() throws -> Timestamp? { try optional { try timestamp() } }
    @inlinable package func raw<E: RawRepresentable>(_ type: E.Type = E.self) throws -> E where E.RawValue == String {
        let s = try string()
        guard let e = E(rawValue: s) else { throw invalid("\(E.self) \(s)") }
        return e
    }
    @inlinable package func optionalString() throws -> String? { try optional { try string() } }
    @inlinable package func optionalInt() throws -> Int64? { try optional { try int() } }
    /// An optional integer or timestamp a view keeps compact: `Int64.min`, which it cannot hold,
    /// is refused here rather than stop the fold.
    @inlinable package func compactInt() throws -> Int64? {
        let i = try optionalInt()
        guard i != .min else { throw invalid("Int64.min where a view keeps its optional values compact") }
        return i
    }
    @inlinable package func compactTimestamp() throws -> Timestamp? {
        try compactInt().map(Timestamp.init(microsecondsSince1970:))
    }
    @inlinable package func ints() throws -> [Int64] { try array { try int() } }
    @inlinable package func few<V>(_ read: () throws -> V) throws -> Few<V> {
        var xs = Few<V>()
        for _ in 0..<(try count()) { xs.append(try read()) }
        return xs
    }
    @inlinable package func positions() throws -> PositionList {
        var ps = PositionList()
        for _ in 0..<(try count()) { ps.append(try int()) }
        return ps
    }
}
