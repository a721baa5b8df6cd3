import CLibPQ
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Preparing statements, binding parameters and reading errors: what every statement of
// PostgresConnection.swift goes through.
extension PostgresConnection {
    /// The name of `sql` prepared with these parameters' types, preparing it on first use.
    func prepare(_ sql: String, _ parameters: [PostgresValue], _ conn: OpaquePointer) throws -> String {
        let key = PreparedKey(sql: sql, types: parameters.map(\.oid))
        if let name = preparedStatements[key] { return name }
        let name = "ledger_s\(preparedStatements.count + 1)"
        let res = key.types.withUnsafeBufferPointer { types in
            PQprepare(conn, name, sql, Int32(types.count), types.baseAddress)
        }
        guard let res else { throw connectionFailure(conn, sql) }
        defer { PQclear(res) }
        try check(res, conn, sql)
        preparedStatements[key] = name
        return name
    }

    func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (
            Int32, UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        let count = parameters.count
        if count == 0 { return try body(0, nil, nil, nil, nil) }
        guard count <= 65535 else {
            throw PostgresError(kind: .client, message: "\(count) parameters exceed PostgreSQL's limit of 65535")
        }
        // Explicit buffers: nothing points into a temporary array.
        let types = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
        let values = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: count)
        let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        let formats = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        var owned: [UnsafeMutableRawPointer] = []
        owned.reserveCapacity(count)
        defer {
            types.deallocate()
            values.deallocate()
            lengths.deallocate()
            formats.deallocate()
            for p in owned { p.deallocate() }
        }
        for (i, parameter) in parameters.enumerated() {
            let (bytes, binary) = parameter.encoded()
            types[i] = parameter.oid
            formats[i] = binary ? 1 : 0
            if let bytes {
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: bytes.count + 1, alignment: 1)
                owned.append(buffer)
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                buffer.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
                values[i] = UnsafePointer(buffer.assumingMemoryBound(to: CChar.self))
                lengths[i] = Int32(bytes.count)
            } else {
                values[i] = nil
                lengths[i] = 0
            }
        }
        return try body(Int32(count), types, values, lengths, formats)
    }

    static func extract(_ res: OpaquePointer) -> QueryResult {
        let nrows = Int(PQntuples(res))
        let ncols = Int(PQnfields(res))
        var columns: [String] = []
        columns.reserveCapacity(ncols)
        for c in 0..<ncols { columns.append(String(cString: PQfname(res, Int32(c)))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(nrows)
        for r in 0..<nrows {
            var row: [String?] = []
            row.reserveCapacity(ncols)
            for c in 0..<ncols {
                if PQgetisnull(res, Int32(r), Int32(c)) == 1 {
                    row.append(nil)
                } else {
                    row.append(String(cString: PQgetvalue(res, Int32(r), Int32(c))))
                }
            }
            rows.append(row)
        }
        let affected = Int(String(cString: PQcmdTuples(res))) ?? 0
        return QueryResult(columns: columns, rows: rows, affectedRows: affected)
    }

    func check(_ res: OpaquePointer, _ conn: OpaquePointer, _ sql: String) throws {
        if let error = errorIfFailed(res, conn, sql) { throw error }
    }

    func errorIfFailed(_ res: OpaquePointer, _ conn: OpaquePointer, _ sql: String) -> PostgresError? {
        switch PQresultStatus(res) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_SINGLE_TUPLE,
            PGRES_PIPELINE_SYNC:
            return nil
        default:
            func field(_ code: UInt8) -> String? {
                guard let p = PQresultErrorField(res, Int32(code)) else { return nil }
                return String(cString: p)
            }
            let sqlState = field(UInt8(ascii: "C")).map { SQLState($0) }
            let primary = field(UInt8(ascii: "M")) ?? Self.trimmed(PQresultErrorMessage(res))
            // The server sends a SQLSTATE with every error; one without is libpq's own, and when
            // the connection is gone ("server closed the connection unexpectedly" after a backend
            // was killed) libpq may not have marked it bad yet: asking it to read says so.
            let broken =
                sqlState == nil
                && (PQstatus(conn) != CONNECTION_OK || PQconsumeInput(conn) == 0 || PQstatus(conn) != CONNECTION_OK)
            return PostgresError(
                kind: broken ? .connection : .server,
                sqlState: sqlState,
                constraint: field(UInt8(ascii: "n")),
                message: primary.isEmpty ? Self.trimmed(PQerrorMessage(conn)) : primary,
                detail: field(UInt8(ascii: "D")),
                hint: field(UInt8(ascii: "H")),
                statement: Self.firstLine(sql))
        }
    }

    func connectionFailure(_ conn: OpaquePointer, _ sql: String) -> PostgresError {
        let message = Self.trimmed(PQerrorMessage(conn))
        return PostgresError(
            kind: PQstatus(conn) == CONNECTION_OK ? .protocolViolation : .connection,
            message: message.isEmpty ? "libpq returned no result" : message,
            statement: Self.firstLine(sql))
    }

    static func trimmed(_ p: UnsafePointer<CChar>?) -> String {
        guard let p else { return "" }
        var s = String(cString: p)
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return s
    }

    static func firstLine(_ sql: String) -> String {
        let line = sql.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? sql
        return line.count > 120 ? String(line.prefix(120)) + "..." : line
    }
}
