import Foundation
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
                client.send("POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n" + "ZZ\r\n{\"stream\":\"x\"}\r\n0\r\n\r\n")
                let answer = client.readAll()
                #expect(RawHTTP.status(answer.text) == 400, "\(answer.text.prefix(300))")
            }
            #expect(try await f.rows() == 0)
        }
    }
}
