import CLibPQ

/// `COPY ... FROM STDIN` and `COPY ... TO STDOUT`, streamed.
extension PostgresConnection {
    /// Runs `COPY ... FROM STDIN` and sends `chunks` (rows in the COPY's format). Returns rows copied.
    @discardableResult
    public func copyIn<S: Sequence>(_ sql: String, chunks: S) throws -> Int where S.Element == [UInt8] {
        let conn = try connected()
        guard let start = PQexec(conn, sql) else { throw connectionFailure(conn, sql) }
        let status = PQresultStatus(start)
        if status != PGRES_COPY_IN {
            defer { PQclear(start) }
            try check(start, conn, sql)
            throw PostgresError(
                kind: .protocolViolation, message: "expected COPY IN state", statement: Self.firstLine(sql))
        }
        PQclear(start)
        var sendError: String?
        for chunk in chunks where !chunk.isEmpty {
            let ok = chunk.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { PQputCopyData(conn, $0.baseAddress, Int32($0.count)) }
            }
            if ok != 1 {
                sendError = Self.trimmed(PQerrorMessage(conn))
                break
            }
        }
        if PQputCopyEnd(conn, sendError) != 1 { throw connectionFailure(conn, sql) }
        var copied = 0
        var failure: (any Error)?
        while let res = PQgetResult(conn) {
            if let error = errorIfFailed(res, conn, sql), failure == nil { failure = error }
            if let n = Int(String(cString: PQcmdTuples(res))) { copied = n }
            PQclear(res)
        }
        if let failure { throw failure }
        if let sendError { throw PostgresError(kind: .connection, message: sendError, statement: Self.firstLine(sql)) }
        return copied
    }

    /// Runs `COPY ... TO STDOUT` and hands each row (in the COPY's format, with its newline) to
    /// `onRow` as it arrives: memory stays bounded whatever the size of the result.
    public func copyOut(_ sql: String, _ onRow: (UnsafeRawBufferPointer) throws -> Void) throws {
        let conn = try connected()
        guard let start = PQexec(conn, sql) else { throw connectionFailure(conn, sql) }
        if PQresultStatus(start) != PGRES_COPY_OUT {
            defer { PQclear(start) }
            try check(start, conn, sql)
            throw PostgresError(
                kind: .protocolViolation, message: "expected COPY OUT state", statement: Self.firstLine(sql))
        }
        PQclear(start)
        var callbackError: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = PQgetCopyData(conn, &buffer, 0)
            if n > 0, let buffer {
                defer { PQfreemem(buffer) }
                if callbackError == nil {
                    do { try onRow(UnsafeRawBufferPointer(start: buffer, count: Int(n))) } catch {
                        callbackError = error
                        // Stop the server from sending more: cancel and drain.
                        if let cancel = PQgetCancel(conn) {
                            var err = [CChar](repeating: 0, count: 256)
                            _ = PQcancel(cancel, &err, 256)
                            PQfreeCancel(cancel)
                        }
                    }
                }
                continue
            }
            if n == -1 { break }
            throw connectionFailure(conn, sql)
        }
        var failure: (any Error)?
        while let res = PQgetResult(conn) {
            if let error = errorIfFailed(res, conn, sql), failure == nil { failure = error }
            PQclear(res)
        }
        if let callbackError { throw callbackError }
        if let failure { throw failure }
    }
}
