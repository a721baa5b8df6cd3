import LedgerCore

/// An `Int64?` in eight bytes. In a struct an `Int64?` takes nine, then the padding to the next
/// field's alignment: sixteen. `Int64.min` stands for nil; no position, count or timestamp the
/// fold keeps is that value (as microseconds, a date 292,000 years before the Common Era), and
/// keeping it stops the fold rather than read back as nil.
struct CompactInt64: Hashable, Sendable {
    private var raw = Int64.min

    init() {}

    init(_ value: Int64?) {
        precondition(value != .min, "Int64.min has no place in a compact optional")
        raw = value ?? .min
    }

    var value: Int64? { raw == .min ? nil : raw }
}

/// As its eight bytes (`Int64.min` for nil).
extension CompactInt64: Codable {
    init(from decoder: any Decoder) throws {
        raw = try Int64(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try raw.encode(to: encoder)
    }
}

/// A `Timestamp?` in eight bytes (see ``CompactInt64``).
struct CompactTimestamp: Hashable, Sendable, Codable {
    private var micros = CompactInt64()

    init() {}
    init(_ t: Timestamp?) { micros = CompactInt64(t?.microseconds) }

    var value: Timestamp? { micros.value.map(Timestamp.init(microsecondsSince1970:)) }
}

/// A value of an ``OpenEnum`` in one byte: its index among the known values, or `other` when it is
/// not one (its text is then kept apart, by whoever holds the code). As the struct of a string it
/// takes sixteen bytes, and nearly every transaction has the same one (`Production`, `PURCHASED`).
struct KnownCode<Value: OpenEnum>: Hashable, Sendable {
    private var index: UInt8

    static var other: UInt8 { .max }

    /// The code of `value`, or nil when it is not a known value.
    init?(_ value: Value) {
        guard let i = Value.known.firstIndex(of: value), i < Int(Self.other) else { return nil }
        index = UInt8(i)
    }

    /// The code for a value that is not known.
    static var unknown: KnownCode { KnownCode(index: other) }
    private init(index: UInt8) { self.index = index }

    /// The known value, or nil for one kept apart.
    var value: Value? { index == Self.other ? nil : Value.known[Int(index)] }
}

extension KnownCode: Codable {
    init(from decoder: any Decoder) throws { index = try UInt8(from: decoder) }
    func encode(to encoder: any Encoder) throws { try index.encode(to: encoder) }
}
