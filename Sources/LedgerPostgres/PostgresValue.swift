/// A statement parameter with an explicit type OID. Scalars go in binary where that is cheaper
/// for the server to decode (integers, bytea, uuid, timestamptz); text, jsonb and arrays go as text.
public enum PostgresValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int4(Int32)
    case int8(Int64)
    case text(String)
    case jsonb(String)
    case bytea([UInt8])
    /// 16 raw bytes.
    case uuid([UInt8])
    /// Microseconds since 1970-01-01T00:00:00Z.
    case timestamptz(microsecondsSince1970: Int64)
    case textArray([String?])
    case int8Array([Int64])
    /// Each element is a canonical UUID string.
    case uuidArray([String])
    /// A one-dimensional array of any element type, each element given in its text input form,
    /// with the array type's OID (e.g. `OID.jsonbArray`).
    case arrayOfLiterals([String?], arrayOID: UInt32)

    public enum OID {
        public static let bool: UInt32 = 16
        public static let bytea: UInt32 = 17
        public static let int8: UInt32 = 20
        public static let int4: UInt32 = 23
        public static let text: UInt32 = 25
        public static let jsonb: UInt32 = 3802
        public static let uuid: UInt32 = 2950
        public static let timestamptz: UInt32 = 1184
        public static let textArray: UInt32 = 1009
        public static let int8Array: UInt32 = 1016
        public static let uuidArray: UInt32 = 2951
        public static let int4Array: UInt32 = 1007
        public static let byteaArray: UInt32 = 1001
        public static let jsonbArray: UInt32 = 3807
        public static let timestamptzArray: UInt32 = 1185
    }

    /// Microseconds between 1970-01-01 and PostgreSQL's epoch, 2000-01-01, which binary
    /// timestamps (parameters and binary COPY) count from.
    public static let postgresEpochOffset: Int64 = 946_684_800_000_000

    var oid: UInt32 {
        switch self {
        case .null: return 0
        case .bool: return OID.bool
        case .int4: return OID.int4
        case .int8: return OID.int8
        case .text: return OID.text
        case .jsonb: return OID.jsonb
        case .bytea: return OID.bytea
        case .uuid: return OID.uuid
        case .timestamptz: return OID.timestamptz
        case .textArray: return OID.textArray
        case .int8Array: return OID.int8Array
        case .uuidArray: return OID.uuidArray
        case .arrayOfLiterals(_, let oid): return oid
        }
    }

    /// (bytes, isBinary); nil bytes is SQL NULL.
    func encoded() -> (bytes: [UInt8]?, binary: Bool) {
        switch self {
        case .null: return (nil, false)
        case .bool(let b): return ([b ? 1 : 0], true)
        case .int4(let v): return (bigEndianBytes(UInt32(bitPattern: v)), true)
        case .int8(let v): return (bigEndianBytes(UInt64(bitPattern: v)), true)
        case .text(let s), .jsonb(let s): return (Array(s.utf8), false)
        case .bytea(let b): return (b, true)
        case .uuid(let b): return (b, true)
        case .timestamptz(let micros):
            return (bigEndianBytes(UInt64(bitPattern: micros - Self.postgresEpochOffset)), true)
        case .textArray(let items):
            return (Self.arrayLiteral(items), false)
        case .int8Array(let items):
            return (Array(("{" + items.map(String.init).joined(separator: ",") + "}").utf8), false)
        case .uuidArray(let items):
            return (Array(("{" + items.joined(separator: ",") + "}").utf8), false)
        case .arrayOfLiterals(let items, _):
            return (Self.arrayLiteral(items), false)
        }
    }

    /// A PostgreSQL array literal with every element quoted, in UTF-8. Quotes and backslashes
    /// are single bytes in UTF-8, so they are escaped byte by byte.
    static func arrayLiteral(_ items: [String?]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(2 + items.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            guard let item else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            for byte in item.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

@inline(__always)
func bigEndianBytes<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
    withUnsafeBytes(of: v.bigEndian) { Array($0) }
}
