import Foundation
import LedgerCore

/// An `Int64?` in eight bytes. In a struct an `Int64?` takes nine, then the padding to the next
/// field's alignment: sixteen. `Int64.min` stands for nil; no position, count or timestamp the
/// fold keeps is that value (as microseconds, a date 292,000 years before the Common Era), and
/// keeping it stops the fold rather than read back as nil. A property wrapper:
/// `@CompactInt64 var verifiedPosition: Int64?`.
@propertyWrapper
public struct CompactInt64: Hashable, Sendable {
    private var raw = Int64.min

    public init() {}

    public init(wrappedValue: Int64?) {
        precondition(wrappedValue != .min, "Int64.min has no place in a compact optional")
        raw = wrappedValue ?? .min
    }

    public var wrappedValue: Int64? {
        get { raw == .min ? nil : raw }
        set { self = CompactInt64(wrappedValue: newValue) }
    }
}

/// As its eight bytes (`Int64.min` for nil).
extension CompactInt64: Codable {
    public init(from decoder: any Decoder) throws {
        raw = try Int64(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try raw.encode(to: encoder)
    }
}

/// A `Timestamp?` in eight bytes (see ``CompactInt64``): `@CompactTimestamp var launchedAt: Timestamp?`.
@propertyWrapper
public struct CompactTimestamp: Hashable, Sendable, Codable {
    @CompactInt64 private var micros: Int64?

    public init() {}
    public init(wrappedValue: Timestamp?) { micros = wrappedValue?.microseconds }

    public var wrappedValue: Timestamp? {
        get { micros.map(Timestamp.init(microsecondsSince1970:)) }
        set { micros = newValue?.microseconds }
    }
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

/// An optional text that is often a UUID (StoreKit's appAccountToken minted for an order): a UUID
/// in its canonical form (8-4-4-4-12 hex digits, letters all lower or all upper case) is kept as
/// its 16 bytes, any other text as it is. As a `String`, each UUID took 36 bytes out of line plus
/// the allocation's header, for every order of a store that mints tokens.
struct CompactText: Hashable, Sendable {
    private enum Storage: Hashable, Sendable {
        case none
        case text(String)
        case uuid(UUID, uppercase: Bool)
    }

    private var storage = Storage.none

    init() {}

    init(_ text: String?) {
        guard var text else { return }
        storage =
            text.withUTF8 { u -> Storage? in
                guard let id = PayloadReader.uuid(u) else { return nil }
                // Letters all of one case: the UUID's text in that case spells the text again.
                let lower = u.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }
                let upper = u.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
                return lower && upper ? nil : .uuid(id, uppercase: upper)
            } ?? .text(text)
    }

    var text: String? {
        switch storage {
        case .none: return nil
        case .text(let s): return s
        case .uuid(let id, let uppercase): return uppercase ? id.uppercased : id.lowercased
        }
    }
}

/// As a list of its text, or of nothing.
extension CompactText: Codable {
    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        self.init(c.isAtEnd ? nil : try c.decode(String.self))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        if let text { try c.encode(text) }
    }
}
