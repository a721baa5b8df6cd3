import Foundation
import LedgerService
import LedgerTesting
import Testing

/// Clients that send what no well-behaved client sends, against the real server on 127.0.0.1.
@Suite("Hostile clients", .timeLimit(.minutes(2)))
struct HostileClientTests {
    @Test("a chunked body with a chunk size that is not hexadecimal is a 400, nothing written")
    func aBadChunkSizeIs400() async throws {
        try await ServiceFixture.with("httpchunk") { f in
            let token = f.appendToken
            try await f.serving { port, _ in
                let client = try RawHTTP(port: port)
                defer { client.close() }
                client.send(
                    "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n" + "ZZ\r\n{\"stream\":\"x\"}\r\n0\r\n\r\n")
                let answer = await client.readAll()
                #expect(RawHTTP.status(answer.text) == 400, "\(answer.text.prefix(300))")
            }
            #expect(try await f.rows() == 0)
        }
    }

    static func shortTimeouts(_ c: inout LedgerService.Configuration) {
        c.limits.timeouts.header = .milliseconds(300)
        c.limits.timeouts.body = .milliseconds(300)
        c.limits.timeouts.idle = .milliseconds(300)
    }

    @Test("a client that never finishes its request's head (a byte at a time) is cut off at the header deadline")
    func aSlowHeadIsCutOff() async throws {
        try await ServiceFixture.with("httpslowhead", configure: Self.shortTimeouts) { f in
            try await f.serving { port, _ in
                let client = try RawHTTP(port: port)
                defer { client.close() }
                client.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                var sent = 0
                // A header byte every 50 ms, at most 400: the server must close before they run out.
                // The deadline is 300 ms; the bound only catches a server that never closes (at 100,
                // 5 s, a suite run on two loaded cores once saw the close come after the last byte).
                let bound = 400
                while sent < bound && client.send("X") {
                    sent += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(await client.readAll().closed, "the server still holds a request whose head never ends")
                #expect(sent < bound, "\(sent) header bytes sent and the server had not closed")
            }
        }
    }

    @Test("a body that stops arriving is cut off at the body deadline, nothing written")
    func aStalledBodyIsCutOff() async throws {
        try await ServiceFixture.with("httpslowbody", configure: Self.shortTimeouts) { f in
            let token = f.appendToken
            try await f.serving { port, _ in
                let client = try RawHTTP(port: port)
                defer { client.close() }
                client.send(
                    "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Length: 1000\r\n\r\n{\"stream\""
                )
                let answer = await client.readAll()
                #expect(answer.closed, "the server still waits for a body that stopped")
            }
            #expect(try await f.rows() == 0)
        }
    }

    @Test("a kept-alive connection with no next request is closed at the idle deadline, after its answer")
    func anIdleConnectionIsClosed() async throws {
        try await ServiceFixture.with("httpidle", configure: Self.shortTimeouts) { f in
            try await f.serving { port, _ in
                let client = try RawHTTP(port: port)
                defer { client.close() }
                client.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let answer = await client.readAll()
                #expect(RawHTTP.status(answer.text) == 200 && answer.closed, "\(answer)")
            }
        }
    }

    @Test("connections past the cap wait until one closes")
    func connectionsPastTheCapWait() async throws {
        try await ServiceFixture.with("httpcap", configure: { $0.limits.maximumConnections = 2 }) { f in
            try await f.serving { port, _ in
                let a = try RawHTTP(port: port), b = try RawHTTP(port: port)
                // Both taken by the server (each answers), then held open.
                for c in [a, b] { c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }
                for c in [a, b] { #expect(RawHTTP.status(await c.readSome()) == 200) }
                let third = try RawHTTP(port: port, timeout: 1)
                defer { third.close() }
                third.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(await third.readSome().isEmpty, "a third connection was served past the cap of two")
                a.close()
                var answer = ""
                for _ in 0..<30 where answer.isEmpty { answer = await third.readSome() }
                #expect(RawHTTP.status(answer) == 200, "the waiting connection was not served once one closed")
                b.close()
            }
        }
    }
}
