/// A compact binary form of `Codable` values, for state a process writes and later reads back
/// itself (the projector's snapshot): no field names, integers as LEB128 varints (signed ones
/// zigzagged), strings as a length and their UTF-8, an optional as a 0/1 tag, a dictionary (with
/// comparable keys) or a set as its entries sorted (so equal values encode to equal bytes).
///
/// Fields are read back in the order they were written, so a value reads only with the same
/// declarations that wrote it: whoever stores these bytes must also store which version of the
/// declarations wrote them, and refuse other versions.
public enum BinaryCoding {
    /// With `fields` false, types that write their own fields (``BinaryFields``) are written by
    /// their `Codable` conformance instead: the same value, slower (what their tests compare with).
    public static func encode<T: Encodable>(_ value: T, fields: Bool = true) throws -> [UInt8] {
        let out = BinaryWriter(fields: fields)
        try out.encodeValue(value)
        return out.bytes
    }

    /// Reads `bytes` from `offset` with `body`, which must read them all.
    public static func read<T>(_ bytes: [UInt8], from offset: Int = 0, _ body: (BinaryReader) throws -> T) throws -> T {
        try read(bytes[...], from: offset, body)
    }

    /// Reads `bytes` from `offset` (counted from the slice's start, as ``BinaryReader/bytesRead``
    /// is) with `body`, which must read them all.
    public static func read<T>(_ bytes: ArraySlice<UInt8>, from offset: Int = 0, _ body: (BinaryReader) throws -> T) throws -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            let input = BinaryReader(buffer, fields: true)
            input.offset = offset
            let value = try body(input)
            guard input.offset == buffer.count else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(buffer.count - input.offset) bytes left after the values"))
            }
            return value
        }
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], fields: Bool = true) throws -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            let input = BinaryReader(buffer, fields: fields)
            let value = try input.decodeValue(T.self)
            input.settle()
            guard input.offset == buffer.count else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(buffer.count - input.offset) bytes left after the value"))
            }
            return value
        }
    }
}

// MARK: - Values with a form of their own

/// A type that writes and reads its own fields, in a fixed order, with no container in between:
/// many times faster than a `Codable` conformance through an encoder. The type stays `Codable`:
/// the test of a conformance compares both forms (``BinaryCoding/encode(_:fields:)``).
public protocol BinaryFields: Codable {
    init(binary r: BinaryReader) throws
    func write(binary w: BinaryWriter)
}

/// Optionals write a tag before the value (a generic path cannot tell `nil` from a value otherwise).
private protocol BinaryOptional {
    static func decodeBinary(_ input: BinaryReader) throws -> Self
    func encodeBinary(_ out: BinaryWriter) throws
}

extension Optional: BinaryOptional where Wrapped: Codable {
    static func decodeBinary(_ input: BinaryReader) throws -> Self {
        try input.byte() == 0 ? nil : try input.decodeValue(Wrapped.self)
    }

    func encodeBinary(_ out: BinaryWriter) throws {
        if let self {
            out.bytes.append(1)
            try out.encodeValue(self)
        } else {
            out.bytes.append(0)
        }
    }
}

/// Dictionaries with comparable keys: a count, then the entries sorted by key (Swift's own form
/// writes string and integer keys as coding keys, which this format does not keep).
private protocol BinaryDictionary {
    static func decodeBinary(_ input: BinaryReader) throws -> Self
    func encodeBinary(_ out: BinaryWriter) throws
}

extension Dictionary: BinaryDictionary where Key: Codable & Comparable, Value: Codable {
    static func decodeBinary(_ input: BinaryReader) throws -> Self {
        let n = try input.count()
        var d = Self(minimumCapacity: n)
        for _ in 0..<n {
            let k = try input.decodeValue(Key.self)
            d[k] = try input.decodeValue(Value.self)
        }
        return d
    }

    func encodeBinary(_ out: BinaryWriter) throws {
        out.varint(UInt64(count))
        for (k, v) in sorted(by: { $0.key < $1.key }) {
            try out.encodeValue(k)
            try out.encodeValue(v)
        }
    }
}

/// Sets of comparable elements: sorted, so equal sets encode to equal bytes.
private protocol BinarySortedSet {
    static func decodeBinary(_ input: BinaryReader) throws -> Self
    func encodeBinary(_ out: BinaryWriter) throws
}

extension Set: BinarySortedSet where Element: Codable & Comparable {
    static func decodeBinary(_ input: BinaryReader) throws -> Self {
        let n = try input.count()
        var s = Self(minimumCapacity: n)
        for _ in 0..<n { s.insert(try input.decodeValue(Element.self)) }
        return s
    }

    func encodeBinary(_ out: BinaryWriter) throws {
        out.varint(UInt64(count))
        for e in sorted() { try out.encodeValue(e) }
    }
}

/// How a type is written: by its own `Codable` conformance, or in one of the forms above.
private enum BinaryForm {
    case plain, fields, optional, dictionary, set

    init(of type: Any.Type, fields: Bool) {
        self = switch type {
        case is any BinaryFields.Type where fields: .fields
        case is any BinaryOptional.Type: .optional
        case is any BinaryDictionary.Type: .dictionary
        case is any BinarySortedSet.Type: .set
        default: .plain
        }
    }
}

// MARK: - Writing

/// Where ``BinaryFields`` types write their fields.
public final class BinaryWriter {
    /// The bytes written, in memory this writer owns (as ``BinaryReader/cursor``: appends through a
    /// pointer are not checked for exclusivity at run time, appends to a stored `var` are).
    @usableFromInline let storage: UnsafeMutablePointer<[UInt8]>
    let fields: Bool

    init(fields: Bool) {
        self.fields = fields
        storage = .allocate(capacity: 1)
        storage.initialize(to: [])
        storage.pointee.reserveCapacity(1 << 16)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @usableFromInline var bytes: [UInt8] {
        @inline(__always) get { storage.pointee }
        @inline(__always) _modify { yield &storage.pointee }
    }

    /// A writer for ``BinaryFields`` values written one after another (``take()`` the bytes).
    public convenience init() { self.init(fields: true) }

    /// How many bytes are written and not taken yet.
    public var count: Int { bytes.count }

    /// The bytes written so far; the writer starts again empty.
    public func take() -> [UInt8] {
        defer { bytes = []; bytes.reserveCapacity(1 << 16) }
        return bytes
    }

    /// Appends one raw byte (a tag of the caller's own).
    public func byte(_ b: UInt8) { bytes.append(b) }

    /// Appends bytes another writer wrote (values written before, copied as they are).
    public func raw(_ written: ArraySlice<UInt8>) { bytes.append(contentsOf: written) }

    /// Writes what `body` writes, preceded by its length in bytes (four bytes, little-endian), so
    /// that a reader can pass over it (``BinaryReader/beginSized()``, ``BinaryReader/skipSized()``).
    @inlinable public func sized(_ body: () -> Void) {
        let at = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0])
        body()
        let n = bytes.count - at - 4
        precondition(n <= Int(UInt32.max), "a value of \(n) bytes to size in four")
        withUnsafeBytes(of: UInt32(n).littleEndian) { length in
            bytes.withUnsafeMutableBufferPointer { b in
                for i in 0..<4 { b[at + i] = length[i] }
            }
        }
    }

    /// What each type is, looked up once per type (a dynamic cast per value costs more).
    private var forms: [ObjectIdentifier: BinaryForm] = [:]

    func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == String.self { return string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int64.self { return signed(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Int.self { return signed(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return bytes.append(unsafeBitCast(value, to: Bool.self) ? 1 : 0) }
        let id = ObjectIdentifier(T.self)
        let form = forms[id] ?? BinaryForm(of: T.self, fields: fields)
        forms[id] = form
        switch form {
        case .fields: (value as! any BinaryFields).write(binary: self)
        case .optional: try (value as! any BinaryOptional).encodeBinary(self)
        case .dictionary: try (value as! any BinaryDictionary).encodeBinary(self)
        case .set: try (value as! any BinarySortedSet).encodeBinary(self)
        case .plain: try value.encode(to: BinaryEncoderImpl(out: self))
        }
    }

    @inlinable public func int(_ v: Int64) { signed(v) }
    @inlinable public func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    @inlinable public func optional<V>(_ v: V?, _ write: (V) -> Void) {
        if let v {
            bytes.append(1)
            write(v)
        } else {
            bytes.append(0)
        }
    }

    @inlinable public func array<V>(_ xs: [V], _ write: (V) -> Void) {
        count(xs.count)
        for x in xs { write(x) }
    }

    /// How many elements follow, as ``array(_:_:)`` writes it before them.
    @inlinable public func count(_ n: Int) { varint(UInt64(n)) }

    @inlinable public func fields<V: BinaryFields>(_ v: V) { v.write(binary: self) }

    @inlinable func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inlinable func signed(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    @inlinable public func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

private struct BinaryEncoderImpl: Encoder {
    let out: BinaryWriter
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedWriter(out: out))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedWriter(out: out) }
    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWriter(out: out) }
}

/// Writes the fields in the order they come, without their names. A nested keyed container
/// (how an enum's case is written) writes its key, so that the reader can tell the case.
private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let out: BinaryWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { out.bytes.append(0) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { out.bytes.append(value ? 1 : 0) }
    mutating func encode(_ value: String, forKey key: Key) throws { out.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { out.varint(value.bitPattern) }
    mutating func encode(_ value: Float, forKey key: Key) throws { out.varint(UInt64(value.bitPattern)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { out.signed(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { out.varint(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try out.encodeValue(value) }

    // An absent optional writes its tag (the protocol's defaults would write nothing).
    private mutating func tagged<V>(_ value: V?, _ write: (inout Self, V) throws -> Void) throws {
        if let value {
            out.bytes.append(1)
            try write(&self, value)
        } else {
            out.bytes.append(0)
        }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try tagged(value) { try $0.encode($1, forKey: key) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        out.string(key.stringValue)
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(out: out))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        out.string(key.stringValue)
        return UnkeyedWriter(out: out)
    }

    mutating func superEncoder() -> any Encoder { BinaryEncoderImpl(out: out) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { BinaryEncoderImpl(out: out) }
}

/// Writes a count (fixed 8 bytes, patched as elements come), then the elements.
private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let out: BinaryWriter
    let countAt: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { [] }

    init(out: BinaryWriter) {
        self.out = out
        countAt = out.bytes.count
        out.bytes.append(contentsOf: repeatElement(0, count: 8))
    }

    private mutating func added() {
        count += 1
        var n = UInt64(count)
        for i in 0..<8 {
            out.bytes[countAt + i] = UInt8(truncatingIfNeeded: n)
            n >>= 8
        }
    }

    mutating func encodeNil() throws { out.bytes.append(0); added() }
    mutating func encode(_ value: Bool) throws { out.bytes.append(value ? 1 : 0); added() }
    mutating func encode(_ value: String) throws { out.string(value); added() }
    mutating func encode(_ value: Int64) throws { out.signed(value); added() }
    mutating func encode(_ value: Int) throws { out.signed(Int64(value)); added() }
    mutating func encode<T: Encodable>(_ value: T) throws { try out.encodeValue(value); added() }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        added()
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(out: out))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        added()
        return UnkeyedWriter(out: out)
    }

    mutating func superEncoder() -> any Encoder { added(); return BinaryEncoderImpl(out: out) }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let out: BinaryWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { out.bytes.append(0) }
    mutating func encode(_ value: Bool) throws { out.bytes.append(value ? 1 : 0) }
    mutating func encode(_ value: String) throws { out.string(value) }
    mutating func encode(_ value: Double) throws { out.varint(value.bitPattern) }
    mutating func encode(_ value: Float) throws { out.varint(UInt64(value.bitPattern)) }
    mutating func encode(_ value: Int) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int8) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int16) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int32) throws { out.signed(Int64(value)) }
    mutating func encode(_ value: Int64) throws { out.signed(value) }
    mutating func encode(_ value: UInt) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { out.varint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { out.varint(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try out.encodeValue(value) }
}

// MARK: - Reading

/// Where ``BinaryFields`` types read their fields back, in the order they wrote them.
public final class BinaryReader {
    @usableFromInline let buffer: UnsafeBufferPointer<UInt8>
    /// The read position, and where a looked-at case key starts (-1 when there is none) and ends,
    /// in memory this reader owns. Every access to a class's stored `var` is checked for
    /// exclusivity at run time, which cost the snapshot reader a sixth of its time; reads through
    /// this pointer are not.
    @usableFromInline let cursor: UnsafeMutablePointer<Int>
    let fields: Bool

    init(_ buffer: UnsafeBufferPointer<UInt8>, fields: Bool) {
        self.buffer = buffer
        self.fields = fields
        cursor = .allocate(capacity: 3)
        cursor.initialize(repeating: 0, count: 3)
        cursor[1] = -1
    }

    deinit { cursor.deallocate() }

    @usableFromInline var offset: Int {
        @inline(__always) get { cursor[0] }
        @inline(__always) set { cursor[0] = newValue }
    }

    /// Whether every byte is read.
    public var isAtEnd: Bool { offset >= buffer.count }

    /// How many bytes of the input are read (where the next value starts).
    public var bytesRead: Int { offset }

    /// The length ``BinaryWriter/sized(_:)`` wrote, checked against the bytes left.
    private func size() throws -> Int {
        guard buffer.count - offset >= 4 else { throw corrupted("unexpected end") }
        var n = 0
        for i in 0..<4 { n |= Int(buffer[offset + i]) << (8 * i) }
        offset += 4
        guard n <= buffer.count - offset else { throw corrupted("a value of \(n) bytes beyond the data") }
        return n
    }

    /// Where what ``BinaryWriter/sized(_:)`` wrote ends: read it, then ``endSized(_:)``. (Not a
    /// generic function taking the reading as a closure: across modules it is not specialized,
    /// and every view read through it was returned indirectly, a third slower.)
    public func beginSized() throws -> Int {
        try size() + offset
    }

    /// Checks that what was read since ``beginSized()`` is exactly its size.
    public func endSized(_ end: Int) throws {
        guard offset == end else { throw corrupted("a value of \(end - offset) bytes more or less than its size") }
    }

    /// Passes over what ``BinaryWriter/sized(_:)`` wrote.
    public func skipSized() throws {
        offset += try size()
    }

    @inlinable public func int() throws -> Int64 { try signed() }
    @inlinable public func bool() throws -> Bool { try byte() != 0 }

    @inlinable public func optional<V>(_ read: () throws -> V) throws -> V? {
        try byte() == 0 ? nil : try read()
    }

    @inlinable public func array<V>(_ read: () throws -> V) throws -> [V] {
        let n = try count()
        var xs: [V] = []
        xs.reserveCapacity(n)
        for _ in 0..<n { xs.append(try read()) }
        return xs
    }

    @inlinable public func fields<V: BinaryFields>(_ type: V.Type = V.self) throws -> V { try V(binary: self) }

    /// A value this reader cannot take (an unknown case, a broken invariant).
    public func invalid(_ what: String) -> DecodingError { corrupted(what) }

    private var forms: [ObjectIdentifier: BinaryForm] = [:]

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        settle()
        if T.self == String.self { return unsafeBitCast(try string(), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try signed(), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(Int(try signed()), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try byte() != 0, to: T.self) }
        let id = ObjectIdentifier(T.self)
        let form = forms[id] ?? BinaryForm(of: T.self, fields: fields)
        forms[id] = form
        switch form {
        case .fields: return try (T.self as! any BinaryFields.Type).init(binary: self) as! T
        case .optional: return try (T.self as! any BinaryOptional.Type).decodeBinary(self) as! T
        case .dictionary: return try (T.self as! any BinaryDictionary.Type).decodeBinary(self) as! T
        case .set: return try (T.self as! any BinarySortedSet.Type).decodeBinary(self) as! T
        case .plain: return try T(from: BinaryDecoderImpl(input: self))
        }
    }

    @usableFromInline func corrupted(_ what: String) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(what) at byte \(offset) of \(buffer.count)"))
    }

    /// An enum's case key that was looked at (``peekKey()``) and is skipped by the next read: where
    /// it starts (-1 when there is none) and ends, and its name. Kept apart, so that each read's
    /// check is one integer compare.
    @usableFromInline var keyStart: Int {
        @inline(__always) get { cursor[1] }
        @inline(__always) set { cursor[1] = newValue }
    }
    @usableFromInline var keyEnd: Int {
        @inline(__always) get { cursor[2] }
        @inline(__always) set { cursor[2] = newValue }
    }
    var keyName = ""

    func peekKey() -> String? {
        if keyStart >= 0, keyStart == offset { return keyName }
        let start = offset
        defer { offset = start }
        guard let name = try? string() else { return nil }
        (keyStart, keyEnd, keyName) = (start, offset, name)
        return name
    }

    /// Where the next read starts: past a case key that was looked at and not read.
    @inlinable func start() -> Int {
        let at = offset
        if keyStart >= 0, keyStart == at { keyStart = -1; return keyEnd }
        return at
    }

    @inlinable func settle() { offset = start() }

    @inlinable func byte() throws -> UInt8 {
        let at = start()
        guard at < buffer.count else { offset = at; throw corrupted("unexpected end") }
        offset = at + 1
        return buffer[at]
    }

    @inlinable func varint() throws -> UInt64 {
        var at = start()
        let end = buffer.count
        var v: UInt64 = 0, shift: UInt64 = 0
        while at < end {
            let b = buffer[at]
            at += 1
            guard shift < 64 else { offset = at; throw corrupted("varint too long") }
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { offset = at; return v }
            shift += 7
        }
        offset = at
        throw corrupted("unexpected end")
    }

    @inlinable func signed() throws -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    /// How many elements follow (as ``BinaryWriter/count(_:)`` wrote it), checked against the bytes left.
    @inlinable public func count() throws -> Int {
        let n = try varint()
        guard n <= UInt64(buffer.count - offset) else { throw corrupted("count \(n) beyond the data") }
        return Int(n)
    }

    @inlinable public func string() throws -> String {
        let n = try count()
        let at = offset
        offset = at + n
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[at..<at + n]), as: UTF8.self)
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, signed isSigned: Bool) throws -> I {
        if isSigned {
            let v = try signed()
            guard let i = I(exactly: v) else { throw corrupted("\(v) does not fit \(I.self)") }
            return i
        }
        let v = try varint()
        guard let i = I(exactly: v) else { throw corrupted("\(v) does not fit \(I.self)") }
        return i
    }
}

private struct BinaryDecoderImpl: Decoder {
    let input: BinaryReader
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedReader<Key>(input: input))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try UnkeyedReader(input: input) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleReader(input: input) }
}

private struct KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let input: BinaryReader
    var codingPath: [any CodingKey] { [] }

    /// Only an enum asks which keys there are (to tell its case): the key its writer wrote.
    /// (It may ask twice: the key is looked at, and skipped by the next read.)
    var allKeys: [Key] { input.peekKey().flatMap { Key(stringValue: $0) }.map { [$0] } ?? [] }

    func contains(_ key: Key) -> Bool { true }
    /// Reads an optional's tag (the protocol's `decodeIfPresent` asks this, then decodes the value).
    func decodeNil(forKey key: Key) throws -> Bool { try input.byte() == 0 }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try input.byte() != 0 }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try input.string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { Double(bitPattern: try input.varint()) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(bitPattern: try input.integer(UInt32.self, signed: false)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try input.integer(Int.self, signed: true) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try input.integer(Int8.self, signed: true) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try input.integer(Int16.self, signed: true) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try input.integer(Int32.self, signed: true) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try input.signed() }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try input.integer(UInt.self, signed: false) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try input.integer(UInt8.self, signed: false) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try input.integer(UInt16.self, signed: false) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try input.integer(UInt32.self, signed: false) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try input.varint() }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try input.decodeValue(T.self) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(KeyedReader<NestedKey>(input: input))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try UnkeyedReader(input: input) }
    func superDecoder() throws -> any Decoder { BinaryDecoderImpl(input: input) }
    func superDecoder(forKey key: Key) throws -> any Decoder { BinaryDecoderImpl(input: input) }
}

private struct UnkeyedReader: UnkeyedDecodingContainer {
    let input: BinaryReader
    let count: Int?
    private(set) var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { currentIndex >= count ?? 0 }

    init(input: BinaryReader) throws {
        self.input = input
        var n: UInt64 = 0
        for i in 0..<8 { n |= UInt64(try input.byte()) << (8 * UInt64(i)) }
        guard n <= UInt64(input.buffer.count - input.offset) else { throw input.corrupted("count \(n) beyond the data") }
        count = Int(n)
    }

    private mutating func advance() throws {
        guard !isAtEnd else { throw input.corrupted("read past the end of a list") }
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        // Only an optional element asks; it is then read with its tag by `decode`.
        guard !isAtEnd else { throw input.corrupted("read past the end of a list") }
        input.settle()
        guard input.offset < input.buffer.count else { throw input.corrupted("unexpected end") }
        if input.buffer[input.offset] == 0 {
            input.offset += 1
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try advance(); return try input.byte() != 0 }
    mutating func decode(_ type: String.Type) throws -> String { try advance(); return try input.string() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try advance(); return try input.signed() }
    mutating func decode(_ type: Int.Type) throws -> Int { try advance(); return try input.integer(Int.self, signed: true) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try advance(); return try input.decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try advance()
        return KeyedDecodingContainer(KeyedReader<NestedKey>(input: input))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try advance(); return try UnkeyedReader(input: input) }
    mutating func superDecoder() throws -> any Decoder { try advance(); return BinaryDecoderImpl(input: input) }
}

private struct SingleReader: SingleValueDecodingContainer {
    let input: BinaryReader
    var codingPath: [any CodingKey] { [] }

    /// Only an optional asks, and an optional is written with a tag (see `BinaryOptional`).
    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { try input.byte() != 0 }
    func decode(_ type: String.Type) throws -> String { try input.string() }
    func decode(_ type: Double.Type) throws -> Double { Double(bitPattern: try input.varint()) }
    func decode(_ type: Float.Type) throws -> Float { Float(bitPattern: try input.integer(UInt32.self, signed: false)) }
    func decode(_ type: Int.Type) throws -> Int { try input.integer(Int.self, signed: true) }
    func decode(_ type: Int8.Type) throws -> Int8 { try input.integer(Int8.self, signed: true) }
    func decode(_ type: Int16.Type) throws -> Int16 { try input.integer(Int16.self, signed: true) }
    func decode(_ type: Int32.Type) throws -> Int32 { try input.integer(Int32.self, signed: true) }
    func decode(_ type: Int64.Type) throws -> Int64 { try input.signed() }
    func decode(_ type: UInt.Type) throws -> UInt { try input.integer(UInt.self, signed: false) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try input.integer(UInt8.self, signed: false) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try input.integer(UInt16.self, signed: false) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try input.integer(UInt32.self, signed: false) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try input.varint() }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try input.decodeValue(T.self) }
}
