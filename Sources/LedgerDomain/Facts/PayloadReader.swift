import Foundation
import LedgerCore

/// A payload that does not fit its fact's schema, naming the field (`price.currency`).
public struct FactError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// Reads one JSON object field by field; every error names the field's path. Fields the schema does
/// not know are refused by ``finish(fields:)``, so a typo never silently becomes a missing value.
///
/// It reads the payload's bytes in place (``JSONTape``): a member is found by its key's bytes, and
/// only the values a field reads become strings, dates or UUIDs, straight from their bytes.
public struct PayloadReader {
    let bytes: [UInt8]
    let tape: [JSONTape.Member]
    /// This object's members in ``tape``.
    let first: Int, count: Int
    let path: String
    /// Which members a field read has claimed (a bit per member; objects have at most 64 here,
    /// larger ones fall back to a set of indices).
    private var claimed: UInt64 = 0
    private var claimedBeyond: Set<Int> = []
    /// Where ``string(_:maxLength:)`` and ``optionalString(_:maxLength:)`` share the strings they
    /// make, when set.
    var shared: SharedStrings?

    /// A decoded value's object (the append path: its canonical text is read).
    public init(_ value: JSONValue, path: String = "") throws(FactError) {
        guard case .object = value else {
            throw FactError(field: path, message: "must be a JSON object (got \(value.typeName))")
        }
        var bytes: [UInt8] = []
        value.writeCanonical(into: &bytes)
        try self.init(json: bytes, path: path)
    }

    /// The object a JSON text holds (`range` of `bytes`, all of them when nil). A text that is not
    /// JSON is refused with the line and column ``JSONValue/parse(utf8:)`` names.
    public init(
        json bytes: [UInt8], range: Range<Int>? = nil, path: String = "", shared: SharedStrings? = nil
    ) throws(FactError) {
        let range = range ?? 0..<bytes.count
        let scanned = bytes.withUnsafeBufferPointer { b in JSONTape(b, range: range) }
        guard let tape = scanned else {
            let reason: String = bytes.withUnsafeBufferPointer { b in
                do throws(JSONSyntaxError) {
                    _ = try JSONValue.parse(utf8: UnsafeBufferPointer(rebasing: b[range]))
                    // The tape and the parser are tested to agree; if they ever do not, say so.
                    return
                        "is JSON the parser accepts but the in-place reader (JSONTape) refuses: a bug, report it with this payload"
                } catch {
                    return "is not JSON: \(error)"
                }
            }
            throw FactError(field: path.isEmpty ? "payload" : path, message: reason)
        }
        guard tape.root.kind == .object else {
            throw FactError(field: path, message: "must be a JSON object (got \(tape.root.kind.name))")
        }
        // Set here rather than through `init(bytes:tape:object:path:shared:)`: delegating made a
        // reader and then copied it into `self` (a retain and a release of each of its references
        // per fact read).
        self.bytes = bytes
        self.tape = tape.members
        self.first = Int(tape.root.value)
        self.count = Int(tape.root.count)
        self.path = path
        self.shared = shared
    }

    init(bytes: [UInt8], tape: [JSONTape.Member], object: JSONTape.Member, path: String, shared: SharedStrings?) {
        self.bytes = bytes
        self.tape = tape
        self.first = Int(object.value)
        self.count = Int(object.count)
        self.path = path
        self.shared = shared
    }

    func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func fail(_ key: String, _ message: String) -> FactError { FactError(field: name(key), message: message) }

    /// The index in ``tape`` of the member whose key has exactly the bytes of `key`.
    func find(_ key: String) -> Int? {
        var key = key
        return key.withUTF8 { k in
            bytes.withUnsafeBufferPointer { b in
                (first..<first + count).first { i in
                    let m = tape[i]
                    if m.flags.contains(.keyEscaped) { return JSONTape.unescaped(b, m.keyRange).elementsEqual(k) }
                    return m.keyRange.count == k.count
                        && (k.isEmpty || memcmp(b.baseAddress! + m.keyRange.lowerBound, k.baseAddress!, k.count) == 0)
                }
            }
        }
    }

    /// The member named `key`, claimed; nil when it is absent or null.
    mutating func raw(_ key: String) -> JSONTape.Member? {
        guard let i = find(key) else { return nil }
        let k = i - first
        if k < 64 { claimed |= 1 << UInt64(k) } else { claimedBeyond.insert(k) }
        let m = tape[i]
        return m.kind == .null ? nil : m
    }

    mutating func required(_ key: String) throws(FactError) -> JSONTape.Member {
        guard let v = raw(key) else { throw fail(key, "is required") }
        return v
    }

    /// A value's canonical text, for messages.
    func text(_ m: JSONTape.Member) -> String {
        bytes.withUnsafeBufferPointer { b in
            (try? JSONValue.parse(utf8: UnsafeBufferPointer(rebasing: b[m.valueRange])))?.canonicalText ?? ""
        }
    }

    /// A string value's bytes, escapes undone, passed to `body` (no copy for a string without escapes).
    func withStringBytes<T>(_ m: JSONTape.Member, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        bytes.withUnsafeBufferPointer { b in
            if m.flags.contains(.escaped) { return JSONTape.unescaped(b, m.stringRange).withUnsafeBufferPointer(body) }
            return body(UnsafeBufferPointer(rebasing: b[m.stringRange]))
        }
    }

    /// A non-empty string of at most `maxLength` characters, no control characters.
    public mutating func string(_ key: String, maxLength: Int = 200) throws(FactError) -> String {
        let v = try required(key)
        return try checkString(key, v, maxLength: maxLength)
    }

    public mutating func optionalString(_ key: String, maxLength: Int = 200) throws(FactError) -> String? {
        guard let v = raw(key) else { return nil }
        return try checkString(key, v, maxLength: maxLength)
    }

    func checkString(_ key: String, _ v: JSONTape.Member, maxLength: Int) throws(FactError) -> String {
        guard v.kind == .string else { throw fail(key, "must be a string (got \(v.kind.name))") }
        guard v.stringRange.count > 0 else { throw fail(key, "must not be empty") }
        // Unicode scalars, as JSON Schema's maxLength counts them: a grapheme count would let one
        // "character" carry any number of combining marks. A scalar takes at least one UTF-8 byte,
        // so a string of no more bytes than that is short enough without counting. Control
        // characters are single bytes in UTF-8, never part of a longer sequence; the scan refuses
        // them raw but for DEL, so only an escaped string or one with DEL needs looking at.
        let problem: String? = withStringBytes(v) { u in
            guard
                u.count <= maxLength
                    || (v.flags.contains(.nonASCII) && u.count(where: { $0 & 0xC0 != 0x80 }) <= maxLength)
            else {
                return "must be at most \(maxLength) characters"
            }
            if !v.flags.isDisjoint(with: [.escaped, .delete]), u.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                return "must not contain control characters"
            }
            return nil
        }
        if let problem { throw fail(key, problem) }
        // The scan checked the UTF-8.
        return withStringBytes(v) { shared?.string($0) ?? String(decoding: $0, as: UTF8.self) }
    }

    public mutating func int(_ key: String, min: Int64 = .min, max: Int64 = .max) throws(FactError) -> Int64 {
        let v = try required(key)
        return try checkInt(key, v, min: min, max: max)
    }

    public mutating func optionalInt(_ key: String, min: Int64 = .min, max: Int64 = .max) throws(FactError) -> Int64? {
        guard let v = raw(key) else { return nil }
        return try checkInt(key, v, min: min, max: max)
    }

    func checkInt(_ key: String, _ v: JSONTape.Member, min: Int64, max: Int64) throws(FactError) -> Int64 {
        guard v.kind == .int else { throw fail(key, "must be an integer (got \(v.kind.name))") }
        let i = v.value
        guard i >= min else { throw fail(key, "must be at least \(min) (got \(i))") }
        guard i <= max else { throw fail(key, "must be at most \(max) (got \(i))") }
        return i
    }

    public mutating func bool(_ key: String) throws(FactError) -> Bool {
        let v = try required(key)
        guard v.kind == .bool else { throw fail(key, "must be true or false (got \(v.kind.name))") }
        return v.value != 0
    }

    public mutating func optionalBool(_ key: String) throws(FactError) -> Bool? {
        guard let v = raw(key) else { return nil }
        guard v.kind == .bool else { throw fail(key, "must be true or false (got \(v.kind.name))") }
        return v.value != 0
    }

    public mutating func timestamp(_ key: String) throws(FactError) -> Timestamp {
        let v = try required(key)
        return try checkTimestamp(key, v)
    }

    public mutating func optionalTimestamp(_ key: String) throws(FactError) -> Timestamp? {
        guard let v = raw(key) else { return nil }
        return try checkTimestamp(key, v)
    }

    func checkTimestamp(_ key: String, _ v: JSONTape.Member) throws(FactError) -> Timestamp {
        let t: Timestamp? =
            v.kind != .string ? nil : withStringBytes(v) { u in Self.isRFC3339(u) ? Timestamp(utf8: u) : nil }
        guard let t else {
            throw fail(key, "must be an RFC 3339 date-time such as 2026-03-31T08:15:00Z (got \(text(v).prefix(60)))")
        }
        return t
    }

    public mutating func uuid(_ key: String) throws(FactError) -> UUID {
        let v = try required(key)
        return try checkUUID(key, v)
    }

    public mutating func optionalUUID(_ key: String) throws(FactError) -> UUID? {
        guard let v = raw(key) else { return nil }
        return try checkUUID(key, v)
    }

    func checkUUID(_ key: String, _ v: JSONTape.Member) throws(FactError) -> UUID {
        let u: UUID? = v.kind != .string ? nil : withStringBytes(v) { Self.uuid($0) }
        guard let u else {
            throw fail(key, "must be a UUID such as 7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11 (got \(text(v).prefix(60)))")
        }
        return u
    }

    /// `Timestamp` also reads PostgreSQL's output (`2026-03-31 08:15:00+00`); a payload must use
    /// RFC 3339 proper: `T` between date and time, and a `Z` or `±HH:MM` offset.
    static func isRFC3339(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        guard u.count >= 20, u[10] == UInt8(ascii: "T") || u[10] == UInt8(ascii: "t") else { return false }
        if u[u.count - 1] == UInt8(ascii: "Z") || u[u.count - 1] == UInt8(ascii: "z") { return true }
        let n = u.count
        return (u[n - 6] == UInt8(ascii: "+") || u[n - 6] == UInt8(ascii: "-")) && u[n - 3] == UInt8(ascii: ":")
    }

    /// Exactly 8-4-4-4-12 hex digits, in either case (Foundation's parser on Linux, sscanf, also
    /// takes a leading space, sign or `0x` in a group and then reads a different UUID).
    static func uuid(_ u: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard u.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var i = 0
            for k in 0..<16 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard u[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                }
                let hi = Hex.digit(u[i]), lo = Hex.digit(u[i + 1])
                guard hi | lo < 0x10 else { return false }
                out[k] = hi << 4 | lo
                i += 2
            }
            return true
        }
        return valid ? UUID(uuid: bytes) : nil
    }

    public mutating func currency(_ key: String) throws(FactError) -> Currency {
        let code = try string(key, maxLength: 3)
        guard let c = Currency(code) else { throw fail(key, "\"\(code)\" is not an ISO 4217 currency code") }
        return c
    }

    /// One of a closed set of values.
    public mutating func choice<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(FactError) -> E
    where E.RawValue == String {
        let s = try string(key)
        return try checkChoice(key, s)
    }

    public mutating func optionalChoice<E: RawRepresentable & CaseIterable>(
        _ key: String, _: E.Type
    ) throws(FactError) -> E?
    where E.RawValue == String {
        guard let s = try optionalString(key) else { return nil }
        return try checkChoice(key, s)
    }

    func checkChoice<E: RawRepresentable & CaseIterable>(_ key: String, _ s: String) throws(FactError) -> E
    where E.RawValue == String {
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
        let v = try required(key)
        return try nested(key, v)
    }

    public mutating func optionalObject(_ key: String) throws(FactError) -> PayloadReader? {
        guard let v = raw(key) else { return nil }
        return try nested(key, v)
    }

    func nested(_ key: String, _ v: JSONTape.Member) throws(FactError) -> PayloadReader {
        guard v.kind == .object else { throw fail(key, "must be a JSON object (got \(v.kind.name))") }
        return PayloadReader(bytes: bytes, tape: tape, object: v, path: name(key), shared: shared)
    }

    /// Refuses a member no read claimed. `fields` are the names the reader's table reads: with the
    /// keys of the members read, every name a read asked for (a read of a key that is absent is one
    /// of the table's, or it failed before this point).
    public func finish(fields: [String]) throws(FactError) {
        guard claimed.nonzeroBitCount + claimedBeyond.count < count else { return }
        for k in 0..<count where !isClaimed(k) {
            let known = Set(fields).union((0..<count).filter(isClaimed).map(key))
            throw fail(key(k), "is not a field of this fact (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    /// The key of this object's `k`th member.
    private func key(_ k: Int) -> String {
        let m = tape[first + k]
        return bytes.withUnsafeBufferPointer { b in
            m.flags.contains(.keyEscaped)
                ? String(decoding: JSONTape.unescaped(b, m.keyRange), as: UTF8.self)
                : String(decoding: UnsafeBufferPointer(rebasing: b[m.keyRange]), as: UTF8.self)
        }
    }

    private func isClaimed(_ k: Int) -> Bool {
        k < 64 ? claimed & (1 << UInt64(k)) != 0 : claimedBeyond.contains(k)
    }
}
