// The reading half of BinaryCoding (BinaryCoding.swift): BinaryReader and the Decoder behind it.

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
        DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "\(what) at byte \(offset) of \(buffer.count)"))
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
        if keyStart >= 0, keyStart == at {
            keyStart = -1
            return keyEnd
        }
        return at
    }

    @inlinable func settle() { offset = start() }

    @inlinable func byte() throws -> UInt8 {
        let at = start()
        guard at < buffer.count else {
            offset = at
            throw corrupted("unexpected end")
        }
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
            guard shift < 64 else {
                offset = at
                throw corrupted("varint too long")
            }
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                offset = at
                return v
            }
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
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        Float(bitPattern: try input.integer(UInt32.self, signed: false))
    }
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

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(KeyedReader<NestedKey>(input: input))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try UnkeyedReader(input: input)
    }
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
        guard n <= UInt64(input.buffer.count - input.offset) else {
            throw input.corrupted("count \(n) beyond the data")
        }
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

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try advance()
        return try input.byte() != 0
    }
    mutating func decode(_ type: String.Type) throws -> String {
        try advance()
        return try input.string()
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try advance()
        return try input.signed()
    }
    mutating func decode(_ type: Int.Type) throws -> Int {
        try advance()
        return try input.integer(Int.self, signed: true)
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try advance()
        return try input.decodeValue(T.self)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try advance()
        return KeyedDecodingContainer(KeyedReader<NestedKey>(input: input))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try advance()
        return try UnkeyedReader(input: input)
    }
    mutating func superDecoder() throws -> any Decoder {
        try advance()
        return BinaryDecoderImpl(input: input)
    }
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
