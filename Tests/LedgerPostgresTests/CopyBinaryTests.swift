import LedgerPostgres
import Testing

/// The binary COPY reader on bytes as PostgreSQL sends them (the database tests read real ones).
@Suite("COPY binary format")
struct CopyBinaryTests {
    static let header: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]

    /// One row: 16-bit field count, then per field a 32-bit length (-1: NULL) and its bytes.
    static func row(_ fields: [[UInt8]?]) -> [UInt8] {
        var out: [UInt8] = [UInt8(fields.count >> 8), UInt8(fields.count & 0xFF)]
        for field in fields {
            let n = UInt32(bitPattern: Int32(field?.count ?? -1))
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
            out += field ?? []
        }
        return out
    }

    @Test func readsTheHeaderFieldsNullsAndTheTrailer() throws {
        let first = Self.header + Self.row([[0, 0, 0, 0, 0, 0, 0, 42], nil, Array("é".utf8), []])
        try first.withUnsafeBytes { raw in
            let offset = try CopyBinary.headerLength(raw)
            #expect(offset == Self.header.count)
            var fields: [CopyBinary.Field] = []
            #expect(try CopyBinary.fields(raw, from: offset, into: &fields))
            #expect(fields.map(\.isNull) == [false, true, false, false])
            #expect(CopyBinary.int64(raw, fields[0].start) == 42)
            #expect(Array(raw[fields[2].start..<fields[2].end]) == Array("é".utf8))
            #expect(fields[3].length == 0 && fields[3].start == fields[3].end)
        }
        let trailer: [UInt8] = [0xFF, 0xFF]
        let isRow = try trailer.withUnsafeBytes { raw in
            var fields: [CopyBinary.Field] = []
            return try CopyBinary.fields(raw, from: 0, into: &fields)
        }
        #expect(!isRow)
        let minusTwo: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFE]
        #expect(minusTwo.withUnsafeBytes { CopyBinary.int32($0, 0) } == -2)
    }

    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
    static let badHeaders: [(String, [UInt8])] = [
        ("not a COPY", Array("COPY text\n".utf8) + [UInt8](repeating: 0, count: 12)),
        ("unknown critical flag", signature + [0, 0, 0, 1] + [0, 0, 0, 0]),
        ("cut short", signature + [0, 0, 0, 0] + [0, 0, 0, 9]),
    ]

    @Test(arguments: badHeaders)
    func aBadHeaderIsRefused(_ label: String, _ bytes: [UInt8]) {
        #expect(throws: CopyBinary.FormatError.self, "\(label)") {
            try bytes.withUnsafeBytes { _ = try CopyBinary.headerLength($0) }
        }
    }

    static let badRows: [(String, [UInt8])] = [
        ("field longer than the row", [0, 1, 0, 0, 0, 8, 1, 2]),
        ("bytes after the fields", [0, 1, 0, 0, 0, 1, 7, 9]),
        ("count cut short", [0]),
        ("length below -1", [0, 1, 0xFF, 0xFF, 0xFF, 0xFE]),
    ]

    @Test(arguments: badRows)
    func aBadRowIsRefused(_ label: String, _ bytes: [UInt8]) {
        var fields: [CopyBinary.Field] = []
        #expect(throws: CopyBinary.FormatError.self, "\(label)") {
            try bytes.withUnsafeBytes { _ = try CopyBinary.fields($0, from: 0, into: &fields) }
        }
    }
}
