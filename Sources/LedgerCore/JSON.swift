/// A JSON value as the ledger stores it.
///
/// Numbers are integers only (`Int64`): money is integer minor units and store timestamps are
/// integer milliseconds, so a fraction or exponent is rejected instead of being rounded.
/// Object members are kept in PostgreSQL `jsonb` order (by key length, then bytes), so that
/// ``canonicalText`` is exactly what PostgreSQL prints for the stored `jsonb` value.
///
/// Equality is by canonical bytes: two strings that Swift would call equal under Unicode canonical
/// equivalence ("é" precomposed or not) are different values here, as they are to PostgreSQL.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// Builds an object from members in any order (later duplicates win, as in `jsonb`).
    public static func makeObject(_ members: [(String, JSONValue)]) -> JSONValue {
        var byKey: [[UInt8]: JSONMember] = [:]
        for (k, v) in members { byKey[Array(k.utf8)] = JSONMember(key: k, value: v) }
        return .object(byKey.values.sorted { JSONMember.jsonbOrder($0.keyBytes, $1.keyBytes) })
    }

    /// The member whose key has exactly these UTF-8 bytes.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { JSONMember.sameBytes($0.key, key) }?.value
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        var x: [UInt8] = [], y: [UInt8] = []
        a.writeCanonical(into: &x)
        b.writeCanonical(into: &y)
        return x == y
    }

    public func hash(into hasher: inout Hasher) {
        var bytes: [UInt8] = []
        writeCanonical(into: &bytes)
        hasher.combine(bytes)
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The name of this value's JSON type, for error messages.
    public var typeName: String { kind.name }

    /// This value's JSON type.
    public var kind: JSONTape.Kind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}

/// One member of a JSON object.
public struct JSONMember: Hashable, Sendable {
    public var key: String
    public var value: JSONValue
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
    var keyBytes: [UInt8] { Array(key.utf8) }

    /// PostgreSQL's `jsonb` key order: shorter keys first, then bytewise.
    static func jsonbOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a.count != b.count { return a.count < b.count }
        return a.lexicographicallyPrecedes(b)
    }

    /// Byte equality of two strings (not Unicode equivalence: a Kelvin sign is not a K here), with
    /// the O(1) length check first.
    @inline(__always)
    public static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings are contiguous UTF-8: compare the buffers (a specialized loop), not the views.
        if let same = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }),
            let same
        {
            return same
        }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// The same order on the keys' UTF-8 views, without copying them.
    static func jsonbOrder(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        if x.count != y.count { return x.count < y.count }
        return x.lexicographicallyPrecedes(y)
    }
}

/// Where and why a JSON text could not be parsed.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line within the parsed text.
    public var line: Int
    /// 1-based column (in characters) within that line.
    public var column: Int
    public var message: String
    public var description: String { "line \(line), column \(column): \(message)" }
}
