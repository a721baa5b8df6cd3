// The writing half of BinaryCoding (BinaryCoding.swift): BinaryWriter and the Encoder behind it.

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

    /// An estimate of the memory the values written hold on the heap, out of their own bytes:
    /// each string of more than 15 UTF-8 bytes (shorter ones lie in the string itself), each array
    /// with room for elements (by its capacity), each list of positions out of line, with the
    /// allocator's rounding and header. A string shared by several values is counted for each.
    /// What a ``ViewTable`` learns, from the pages it spills, about what its views take in memory.
    @usableFromInline package var heapBytes = 0

    /// The memory an allocation of `bytes` takes: glibc's chunk, its 8-byte header and 16-byte
    /// alignment, for the object with its 32-byte header (a Swift string's or array's storage).
    @inlinable package static func allocation(_ bytes: Int) -> Int { (32 + bytes + 8 + 15) & ~15 }

    /// How many bytes are written and not taken yet.
    public var count: Int { bytes.count }

    /// The bytes written so far; the writer starts again empty.
    public func take() -> [UInt8] {
        defer {
            bytes = []
            bytes.reserveCapacity(1 << 16)
        }
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
        if xs.capacity > 0 { heapBytes += Self.allocation(xs.capacity * MemoryLayout<V>.stride) }
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
            if utf8.count > 15 { heapBytes += Self.allocation(utf8.count + 1) }
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
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        try tagged(value) { try $0.encode($1, forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
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

    mutating func encodeNil() throws {
        out.bytes.append(0)
        added()
    }
    mutating func encode(_ value: Bool) throws {
        out.bytes.append(value ? 1 : 0)
        added()
    }
    mutating func encode(_ value: String) throws {
        out.string(value)
        added()
    }
    mutating func encode(_ value: Int64) throws {
        out.signed(value)
        added()
    }
    mutating func encode(_ value: Int) throws {
        out.signed(Int64(value))
        added()
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try out.encodeValue(value)
        added()
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        added()
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(out: out))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        added()
        return UnkeyedWriter(out: out)
    }

    mutating func superEncoder() -> any Encoder {
        added()
        return BinaryEncoderImpl(out: out)
    }
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
