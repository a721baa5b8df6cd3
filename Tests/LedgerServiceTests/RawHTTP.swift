import Foundation
import LedgerService
#if canImport(Glibc)
import Glibc
#endif

/// A client that writes bytes as given (malformed requests too) to the service on 127.0.0.1 and
/// reads what comes back until the server closes or `timeout` (a hang guard) passes.
struct RawHTTP {
    let fd: Int32
    let timeout: Int

    init(port: Int, timeout: Int = 30) throws {
        self.timeout = timeout
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure("connect: errno \(errno)")
        }
    }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads without blocking a thread (the tests' threads run the service too): polls every
    /// 10 ms, at most `timeout` seconds' worth of polls (a hang guard).
    private func poll(untilClosed: Bool) async -> (text: String, closed: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<(timeout * 100) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                out += buffer[0..<n]
                if !untilClosed { break }
                continue
            }
            if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
            if errno == EINTR { continue }
            if errno != EAGAIN && errno != EWOULDBLOCK { return (String(decoding: out, as: UTF8.self), true) }
            if !untilClosed && !out.isEmpty { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (String(decoding: out, as: UTF8.self), false)
    }

    /// What the server sent until it closed the connection (or the hang guard passed: then
    /// `closed` is false).
    func readAll() async -> (text: String, closed: Bool) { await poll(untilClosed: true) }

    /// Reads until `marker` has come (true), or the server closed or the hang guard passed (false).
    func readUntil(_ marker: String) async -> Bool {
        var text = ""
        for _ in 0..<(timeout * 100) {
            let (more, closed) = await poll(untilClosed: false)
            text += more
            if text.contains(marker) { return true }
            if closed && more.isEmpty { return false }
        }
        return false
    }

    /// What the server has sent so far, waiting at most the timeout for the first bytes ("" when nothing came).
    func readSome() async -> String { await poll(untilClosed: false).text }

    /// The status code of the first response in `text`.
    static func status(_ text: String) -> Int? {
        guard text.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }

    func close() { Glibc.close(fd) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
