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
