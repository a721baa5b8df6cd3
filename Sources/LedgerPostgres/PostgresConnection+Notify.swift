import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `LISTEN` / `NOTIFY`: waiting for the notifications of a channel.
extension PostgresConnection {
    /// `LISTEN` on a channel (quoted as an identifier).
    public func listen(_ channel: String) throws {
        try execute("LISTEN \(quoteIdentifier(channel))")
    }

    /// Waits up to `timeoutMilliseconds` for notifications and returns those that arrived (maybe none).
    public func waitForNotifications(timeoutMilliseconds: Int32) throws -> [PostgresNotification] {
        let conn = try connected()
        var received = drainNotifications(conn)
        if !received.isEmpty { return received }
        var pfd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, timeoutMilliseconds)
        if ready < 0, errno != EINTR {
            throw PostgresError(kind: .connection, message: "poll failed on the notification socket (errno \(errno))")
        }
        if ready > 0 {
            guard PQconsumeInput(conn) == 1 else { throw connectionFailure(conn, "LISTEN") }
            received = drainNotifications(conn)
        }
        return received
    }

    private func drainNotifications(_ conn: OpaquePointer) -> [PostgresNotification] {
        _ = PQconsumeInput(conn)
        var out: [PostgresNotification] = []
        while let n = PQnotifies(conn) {
            out.append(
                PostgresNotification(
                    channel: String(cString: n.pointee.relname),
                    payload: String(cString: n.pointee.extra),
                    backendPID: n.pointee.be_pid))
            PQfreemem(n)
        }
        return out
    }
}
