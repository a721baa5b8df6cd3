import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LedgerPostgres
import Synchronization

/// A loopback TCP proxy in front of the test server. Once armed, it lets a client's COMMIT reach
/// the server and, when the server answers that it committed, closes the connection instead of
/// passing the answer on: the transaction is committed, and the client sees only a broken
/// connection. The one fault a retry cannot tell apart by itself.
final class CommitDroppingProxy: Sendable {
    enum Upstream: Sendable {
        case tcp(host: String, port: UInt16)
        case unix(path: String)
    }

    /// One client connection and its connection to the server.
    private final class Pair: Sendable {
        let client: Int32
        let server: Int32
        /// The client sent a COMMIT while the proxy was armed.
        let commitSent = Atomic<Bool>(false)
        /// The directions still copying; the last to stop closes both sockets.
        private let running = Atomic<Int>(2)
        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }
        /// Ends both directions: the other one's `recv` returns, and the last closes the sockets.
        func cut() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            if running.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 {
                open.withLock { open in
                    Glibc.close(client)
                    Glibc.close(server)
                    open = false
                }
            }
        }
        /// Whether the sockets are still open. Anything done to them from outside the pumps holds
        /// this lock and checks it: once closed, their numbers may belong to another connection of
        /// this process (another test's), which must never be touched.
        let open = Mutex<Bool>(true)
        var closed: Bool { !open.withLock { $0 } }
    }

    private struct State {
        var armed = false
        var dropped = 0
        var pairs: [Pair] = []
    }

    let port: UInt16
    private let listener: Int32
    private let upstream: Upstream
    private let state = Mutex(State())

    /// A proxy in front of the server `admin` is connected to (over TCP or its Unix socket).
    static func inFront(of admin: PostgresConnection) async throws -> CommitDroppingProxy {
        let r = try await admin.query(
            """
            SELECT host(inet_server_addr()), current_setting('port'), split_part(current_setting('unix_socket_directories'), ',', 1)
            """)
        let port = UInt16(r.string(0, 1) ?? "") ?? 5432
        if let host = r.string(0, 0) { return try CommitDroppingProxy(upstream: .tcp(host: host, port: port)) }
        let directory = (r.string(0, 2) ?? "").trimmingCharacters(in: .whitespaces)
        return try CommitDroppingProxy(upstream: .unix(path: "\(directory)/.s.PGSQL.\(port)"))
    }

    init(upstream: Upstream) throws {
        self.upstream = upstream
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// `connectionString` (a URL or keywords) pointed at this proxy, in plain text (no TLS or GSS
    /// encryption, so the proxy can read the messages).
    func connectionString(_ connectionString: String) -> String {
        let settings = ["host": "127.0.0.1", "port": String(port), "sslmode": "disable", "gssencmode": "disable"]
        if connectionString.contains("://") {
            return connectionString + (connectionString.contains("?") ? "&" : "?")
                + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        }
        return connectionString + " "
            + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// The next COMMIT the server confirms is not passed on.
    func arm() { state.withLock { $0.armed = true } }

    /// Closes every connection open through the proxy, as a server whose backends were killed
    /// does: no error message, the socket just ends (libpq: "server closed the connection
    /// unexpectedly", with no SQLSTATE). New connections still go through.
    /// With `crashNotice`, first sends each (idle) client the warning a backend sends when the
    /// postmaster ends it after another backend crashed (57P02), as PostgreSQL does.
    /// With `reset`, the client's socket is closed with a reset (as the kernel does for a killed
    /// process that left data unread), and this returns once it is: the client's next write then
    /// fails ("server closed the connection unexpectedly" from the write, before libpq has read the end).
    func cutAll(crashNotice: Bool = false, reset: Bool = false) async throws {
        let pairs = state.withLock { s in
            defer { s.pairs = [] }
            return s.pairs
        }
        for pair in pairs {
            pair.open.withLock { open in
                guard open else { return }
                if reset {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    _ = setsockopt(
                        pair.client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                if crashNotice {
                    let message = Self.notice([
                        "S": "WARNING", "V": "WARNING", "C": "57P02",
                        "M": "terminating connection because of crash of another server process",
                    ])
                    _ = message.withUnsafeBytes { send(pair.client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                shutdown(pair.client, Int32(SHUT_RDWR))
                shutdown(pair.server, Int32(SHUT_RDWR))
            }
        }
        guard reset else { return }
        var polls = 0
        while !pairs.allSatisfy(\.closed) && polls < 6000 {
            polls += 1
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(20))  // the reset reaches the client's socket (loopback)
    }

    /// A NoticeResponse message with these fields.
    private static func notice(_ fields: [String: String]) -> [UInt8] {
        var body: [UInt8] = []
        for (code, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += Array(code.utf8) + Array(value.utf8) + [0]
        }
        body.append(0)
        let length = UInt32(body.count + 4)
        return [UInt8(ascii: "N")] + withUnsafeBytes(of: length.bigEndian) { Array($0) } + body
    }

    /// How many confirmed COMMITs the proxy has kept from their clients.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Stops accepting connections (those open stay until their ends close them).
    /// The accepting thread sees `accept` fail and closes the socket itself, so its number cannot be
    /// reused (by another test's proxy) while that thread may still call `accept` on it.
    func close() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = connectUpstream()
            guard server >= 0 else {
                Glibc.close(client)
                continue
            }
            let pair = Pair(client: client, server: server)
            state.withLock { s in
                s.pairs.removeAll { $0.closed }
                s.pairs.append(pair)
            }
            Thread.detachNewThread { [self] in pump(pair, fromClient: true) }
            Thread.detachNewThread { [self] in pump(pair, fromClient: false) }
        }
    }

    private func connectUpstream() -> Int32 {
        switch upstream {
        case .tcp(let host, let port) where host.contains(":"):
            let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                Glibc.close(fd)
                return -1
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
            if connected != 0 {
                Glibc.close(fd)
                return -1
            }
            return fd
        case .tcp(let host, let port):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                Glibc.close(fd)
                return -1
            }
            address.sin_port = port.bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if connected != 0 {
                Glibc.close(fd)
                return -1
            }
            return fd
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                Glibc.close(fd)
                return -1
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected != 0 {
                Glibc.close(fd)
                return -1
            }
            return fd
        }
    }

    /// `COMMIT` and its terminating zero: the query text of a COMMIT (simple or extended protocol)
    /// and the tag of the server's CommandComplete for it.
    private static let commit = Array("COMMIT\0".utf8)

    /// Copies one direction until either end closes. A match may straddle two reads, so the last
    /// few bytes of the previous read are searched again with the next.
    private func pump(_ pair: Pair, fromClient: Bool) {
        let from = fromClient ? pair.client : pair.server
        let to = fromClient ? pair.server : pair.client
        var buffer = [UInt8](repeating: 0, count: 65536)
        var carry: [UInt8] = []
        defer { pair.cut() }
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            let window = carry + buffer[0..<n]
            let found = Self.contains(window, Self.commit)
            carry = Array(window.suffix(Self.commit.count - 1))
            if fromClient {
                if found && state.withLock({ $0.armed }) {
                    pair.commitSent.store(true, ordering: .sequentiallyConsistent)
                }
            } else if found && pair.commitSent.load(ordering: .sequentiallyConsistent) {
                let drop = state.withLock { s in
                    guard s.armed else { return false }
                    s.armed = false
                    s.dropped += 1
                    return true
                }
                if drop { return }
            }
            var sent = 0
            while sent < n {
                let m = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, n - sent, Int32(MSG_NOSIGNAL)) }
                if m < 0 && errno == EINTR { continue }
                guard m > 0 else { return }
                sent += m
            }
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }

    struct ProxyError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
