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
    public static func read<T>(
        _ bytes: ArraySlice<UInt8>, from offset: Int = 0, _ body: (BinaryReader) throws -> T
    ) throws -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            let input = BinaryReader(buffer, fields: true)
            input.offset = offset
            let value = try body(input)
            guard input.offset == buffer.count else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [], debugDescription: "\(buffer.count - input.offset) bytes left after the values"))
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
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [], debugDescription: "\(buffer.count - input.offset) bytes left after the value")
                )
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
protocol BinaryOptional {
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
protocol BinaryDictionary {
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
protocol BinarySortedSet {
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
enum BinaryForm {
    case plain, fields, optional, dictionary, set

    init(of type: Any.Type, fields: Bool) {
        self =
            switch type {
            case is any BinaryFields.Type where fields: .fields
            case is any BinaryOptional.Type: .optional
            case is any BinaryDictionary.Type: .dictionary
            case is any BinarySortedSet.Type: .set
            default: .plain
            }
    }
}
