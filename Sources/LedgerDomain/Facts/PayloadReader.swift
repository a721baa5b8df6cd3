import Foundation
import LedgerCore

/// A payload that does not fit its fact's schema, naming the field (`price.currency`).
public struct FactError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String
    public init(field: String, message: String) { self.field = field; self.message = message }
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// Reads one JSON object field by field; every error names the field's path. Fields the schema does
/// not know are refused by ``finish(fields:)``, so a typo never silently becomes a missing value.
public struct PayloadReader {
    let members: [JSONMember]
    let path: String
    /// Which members a field read has claimed (a bit per member; objects have at most 64 here,
    /// larger ones fall back to a set of keys).
    private var claimed: UInt64 = 0
    private var claimedKeys: Set<String> = []

    public init(_ value: JSONValue, path: String = "") throws(FactError) {
        guard case .object(let members) = value else {
            throw FactError(field: path, message: "must be a JSON object (got \(value.typeName))")
        }
        self.members = members
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func fail(_ key: String, _ message: String) -> FactError { FactError(field: name(key), message: message) }

    mutating func raw(_ key: String) -> JSONValue? {
        guard let i = members.firstIndex(where: { JSONMember.sameBytes($0.key, key) }) else { return nil }
        if i < 64 { claimed |= 1 << UInt64(i) } else { claimedKeys.insert(key) }
        let v = members[i].value
        return v.isNull ? nil : v
    }

    mutating func required(_ key: String) throws(FactError) -> JSONValue {
        guard let v = raw(key) else { throw fail(key, "is required") }
        return v
    }

    /// A non-empty string of at most `maxLength` characters, no control characters.
    public mutating func string(_ key: String, maxLength: Int = 200) throws(FactError) -> String {
        try checkString(key, required(key), maxLength: maxLength)
    }

    public mutating func optionalString(_ key: String, maxLength: Int = 200) throws(FactError) -> String? {
        guard let v = raw(key) else { return nil }
        return try checkString(key, v, maxLength: maxLength)
    }

    func checkString(_ key: String, _ v: JSONValue, maxLength: Int) throws(FactError) -> String {
        guard case .string(let s) = v else { throw fail(key, "must be a string (got \(v.typeName))") }
        guard !s.isEmpty else { throw fail(key, "must not be empty") }
        // Unicode scalars, as JSON Schema's maxLength counts them: a grapheme count would let one
        // "character" carry any number of combining marks. A scalar takes at least one UTF-8 byte,
        // so a string of no more bytes than that is short enough without counting.
        let utf8 = s.utf8
        guard utf8.count <= maxLength || s.unicodeScalars.count <= maxLength else {
            throw fail(key, "must be at most \(maxLength) characters")
        }
        // Control characters are single bytes in UTF-8, never part of a longer sequence.
        guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw fail(key, "must not contain control characters")
        }
        return s
    }

    public mutating func int(_ key: String, min: Int64 = .min, max: Int64 = .max) throws(FactError) -> Int64 {
        try checkInt(key, required(key), min: min, max: max)
    }

    public mutating func optionalInt(_ key: String, min: Int64 = .min, max: Int64 = .max) throws(FactError) -> Int64? {
        guard let v = raw(key) else { return nil }
        return try checkInt(key, v, min: min, max: max)
    }

    func checkInt(_ key: String, _ v: JSONValue, min: Int64, max: Int64) throws(FactError) -> Int64 {
        guard case .int(let i) = v else { throw fail(key, "must be an integer (got \(v.typeName))") }
        guard i >= min else { throw fail(key, "must be at least \(min) (got \(i))") }
        guard i <= max else { throw fail(key, "must be at most \(max) (got \(i))") }
        return i
    }

    public mutating func bool(_ key: String) throws(FactError) -> Bool {
        let v = try required(key)
        guard case .bool(let b) = v else { throw fail(key, "must be true or false (got \(v.typeName))") }
        return b
    }

    public mutating func optionalBool(_ key: String) throws(FactError) -> Bool? {
        guard let v = raw(key) else { return nil }
        guard case .bool(let b) = v else { throw fail(key, "must be true or false (got \(v.typeName))") }
        return b
    }

    public mutating func timestamp(_ key: String) throws(FactError) -> Timestamp {
        try checkTimestamp(key, required(key))
    }

    public mutating func optionalTimestamp(_ key: String) throws(FactError) -> Timestamp? {
        guard let v = raw(key) else { return nil }
        return try checkTimestamp(key, v)
    }

    func checkTimestamp(_ key: String, _ v: JSONValue) throws(FactError) -> Timestamp {
        guard case .string(let s) = v, Self.isRFC3339(s), let t = Timestamp(s) else {
            throw fail(key, "must be an RFC 3339 date-time such as 2026-03-31T08:15:00Z (got \(v.canonicalText.prefix(60)))")
        }
        return t
    }

    public mutating func uuid(_ key: String) throws(FactError) -> UUID {
        try checkUUID(key, required(key))
    }

    public mutating func optionalUUID(_ key: String) throws(FactError) -> UUID? {
        guard let v = raw(key) else { return nil }
        return try checkUUID(key, v)
    }

    func checkUUID(_ key: String, _ v: JSONValue) throws(FactError) -> UUID {
        guard case .string(let s) = v, Self.isUUIDSyntax(s), let u = UUID(uuidString: s) else {
            throw fail(key, "must be a UUID such as 7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11 (got \(v.canonicalText.prefix(60)))")
        }
        return u
    }

    /// `Timestamp` also reads PostgreSQL's output (`2026-03-31 08:15:00+00`); a payload must use
    /// RFC 3339 proper: `T` between date and time, and a `Z` or `±HH:MM` offset.
    static func isRFC3339(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count >= 20, u[10] == UInt8(ascii: "T") || u[10] == UInt8(ascii: "t") else { return false }
        if u.last == UInt8(ascii: "Z") || u.last == UInt8(ascii: "z") { return true }
        let n = u.count
        return (u[n - 6] == UInt8(ascii: "+") || u[n - 6] == UInt8(ascii: "-")) && u[n - 3] == UInt8(ascii: ":")
    }

    /// Exactly 8-4-4-4-12 hex digits: Foundation's parser on Linux (sscanf) also takes a leading
    /// space, sign or `0x` in a group and then reads a different UUID.
    static func isUUIDSyntax(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                guard (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66) else { return false }
            }
        }
        return true
    }

    public mutating func currency(_ key: String) throws(FactError) -> Currency {
        let code = try string(key, maxLength: 3)
        guard let c = Currency(code) else { throw fail(key, "\"\(code)\" is not an ISO 4217 currency code") }
        return c
    }

    /// One of a closed set of values.
    public mutating func choice<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(FactError) -> E where E.RawValue == String {
        try checkChoice(key, string(key))
    }

    public mutating func optionalChoice<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(FactError) -> E?
    where E.RawValue == String {
        try optionalString(key).map { (s: String) throws(FactError) -> E in try checkChoice(key, s) }
    }

    func checkChoice<E: RawRepresentable & CaseIterable>(_ key: String, _ s: String) throws(FactError) -> E where E.RawValue == String {
        guard let e = E(rawValue: s) else {
            throw fail(key, "must be one of \(E.allCases.map { $0.rawValue }.joined(separator: ", ")) (got \"\(s)\")")
        }
        return e
    }

    public mutating func open<E: OpenEnum>(_ key: String, _: E.Type) throws(FactError) -> E {
        E(raw: try string(key))
    }

    public mutating func optionalOpen<E: OpenEnum>(_ key: String, _: E.Type) throws(FactError) -> E? {
        try optionalString(key).map(E.init(raw:))
    }

    public mutating func object(_ key: String) throws(FactError) -> PayloadReader {
        try PayloadReader(required(key), path: name(key))
    }

    public mutating func optionalObject(_ key: String) throws(FactError) -> PayloadReader? {
        guard let v = raw(key) else { return nil }
        return try PayloadReader(v, path: name(key))
    }

    /// Refuses members the schema does not name.
    /// Refuses a member no read claimed. `fields` are the names the reader's table reads: with the
    /// keys of the members read, every name a read asked for (a read of a key that is absent is one
    /// of the table's, or it failed before this point).
    public func finish(fields: [String]) throws(FactError) {
        for (i, m) in members.enumerated() where !isClaimed(i, m) {
            let known = Set(fields).union(members.enumerated().filter { isClaimed($0.offset, $0.element) }.map(\.element.key))
            throw fail(m.key, "is not a field of this fact (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    private func isClaimed(_ i: Int, _ m: JSONMember) -> Bool {
        i < 64 ? claimed & (1 << UInt64(i)) != 0 : claimedKeys.contains(m.key)
    }
}

