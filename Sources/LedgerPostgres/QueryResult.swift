/// The rows of one statement, copied out of libpq (text format) so the `PGresult` is freed at once.
public struct QueryResult: Sendable {
    public var columns: [String]
    public var rows: [[String?]]
    /// Rows affected (INSERT/UPDATE/DELETE/COPY), from `PQcmdTuples`.
    public var affectedRows: Int

    public init(columns: [String] = [], rows: [[String?]] = [], affectedRows: Int = 0) {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
    }

    public var count: Int { rows.count }

    /// The value at `row`, `column`: nil for SQL NULL, and for a row or column the result does not
    /// have (a statement that found no row answers nil; it never stops the process).
    public func string(_ row: Int, _ column: Int) -> String? {
        guard rows.indices.contains(row), rows[row].indices.contains(column) else { return nil }
        return rows[row][column]
    }

    public func int64(_ row: Int, _ column: Int) -> Int64? {
        string(row, column).flatMap { Int64($0) }
    }

    public func bool(_ row: Int, _ column: Int) -> Bool? {
        string(row, column).map { $0 == "t" }
    }

    /// Decodes a bytea column in PostgreSQL's hex output format (`\x0a1b...`).
    public func bytea(_ row: Int, _ column: Int) -> [UInt8]? {
        string(row, column).flatMap(Self.decodeHexBytea)
    }

    public static func decodeHexBytea(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count >= 2, u[0] == UInt8(ascii: "\\"), u[1] == UInt8(ascii: "x"), u.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity((u.count - 2) / 2)
        var i = 2
        while i < u.count {
            guard let hi = hexValue(u[i]), let lo = hexValue(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    @inline(__always) static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A NOTIFY received on a LISTENing connection.
public struct PostgresNotification: Sendable, Hashable {
    public var channel: String
    public var payload: String
    public var backendPID: Int32
}

/// One statement of a pipeline.
public struct Statement: Sendable {
    public var sql: String
    public var parameters: [PostgresValue]
    /// Prepare once per connection and reuse the plan (for statements run again and again).
    public var prepared: Bool
    public init(_ sql: String, _ parameters: [PostgresValue] = [], prepared: Bool = false) {
        self.sql = sql
        self.parameters = parameters
        self.prepared = prepared
    }
}
