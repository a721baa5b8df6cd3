/// PostgreSQL's binary COPY format (`COPY ... TO STDOUT (FORMAT binary)`): a header, then each row
/// as a 16-bit field count and, per field, a 32-bit length (-1 for NULL) and that many bytes in the
/// type's binary form, then a 16-bit -1. All integers big-endian. Nothing is escaped, and integers,
/// timestamps, UUIDs and bytea come as their bytes, not as text to parse.
public enum CopyBinary {
    /// The signature that opens the stream (then 32-bit flags and a 32-bit extension length).
    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    /// Where one field is in its row: `start..<start + length`; `length` is -1 for NULL.
    public struct Field: Sendable {
        public var start: Int
        public var length: Int
        public var isNull: Bool { length < 0 }
        public var end: Int { start + max(length, 0) }
    }

    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The length of the header at the start of `raw` (the first data PostgreSQL sends).
    public static func headerLength(_ raw: UnsafeRawBufferPointer) throws(FormatError) -> Int {
        guard raw.count >= signature.count + 8, raw.prefix(signature.count).elementsEqual(signature) else {
            throw FormatError(description: "binary COPY data does not start with PGCOPY's signature")
        }
        let flags = int32(raw, signature.count)
        // Bit 16: OIDs included (never asked for here); the low 16 bits are critical and unknown.
        guard flags & 0x0001_FFFF == 0 else {
            throw FormatError(description: "binary COPY header with unknown flags \(flags)")
        }
        let extensionLength = Int(int32(raw, signature.count + 4))
        let length = signature.count + 8 + extensionLength
        guard extensionLength >= 0, length <= raw.count else {
            throw FormatError(description: "binary COPY header cut short")
        }
        return length
    }

    /// Reads the row at `offset` of `raw` into `fields`; false when it is the trailer.
    public static func fields(
        _ raw: UnsafeRawBufferPointer, from offset: Int, into fields: inout [Field]
    ) throws(FormatError) -> Bool {
        fields.removeAll(keepingCapacity: true)
        guard offset + 2 <= raw.count else { throw FormatError(description: "binary COPY row cut short") }
        let count = Int(Int16(bitPattern: UInt16(raw[offset]) << 8 | UInt16(raw[offset + 1])))
        if count == -1 { return false }
        var at = offset + 2
        for _ in 0..<max(count, 0) {
            guard at + 4 <= raw.count else { throw FormatError(description: "binary COPY row cut short") }
            let length = Int(int32(raw, at))
            at += 4
            guard length >= -1, at + max(length, 0) <= raw.count else {
                throw FormatError(description: "binary COPY field longer than its row")
            }
            fields.append(Field(start: at, length: length))
            at += max(length, 0)
        }
        guard at == raw.count else {
            throw FormatError(description: "binary COPY row with \(raw.count - at) bytes after its fields")
        }
        return true
    }

    @inline(__always)
    public static func int64(_ raw: UnsafeRawBufferPointer, _ at: Int) -> Int64 {
        Int64(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
    }

    @inline(__always)
    public static func int32(_ raw: UnsafeRawBufferPointer, _ at: Int) -> Int32 {
        Int32(bitPattern: UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
    }
}

extension PostgresConnection {
    /// Runs `COPY ... TO STDOUT (FORMAT binary)` (`sql` says so) and hands each row to `onRow` with
    /// where its fields are in it, as it arrives; the header (before the first row's fields) and the
    /// trailer are read here.
    public func copyOutBinary(
        _ sql: String, _ onRow: (UnsafeRawBufferPointer, [CopyBinary.Field]) throws -> Void
    ) throws {
        var fields: [CopyBinary.Field] = []
        var started = false
        var ended = false
        try copyOut(sql) { raw in
            var offset = 0
            if !started {
                offset = try CopyBinary.headerLength(raw)
                started = true
            }
            guard !ended else { throw CopyBinary.FormatError(description: "binary COPY data after its trailer") }
            guard try CopyBinary.fields(raw, from: offset, into: &fields) else {
                ended = true
                return
            }
            try onRow(raw, fields)
        }
        guard ended else { throw CopyBinary.FormatError(description: "binary COPY data ended without its trailer") }
    }
}
