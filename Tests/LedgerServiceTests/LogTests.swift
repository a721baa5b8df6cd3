import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerCore
import LedgerService
import LedgerTesting
import Logging
import Synchronization
import Testing

/// `ledger serve --log-format json`: one JSON object per line, the request's id on each line
/// written while answering it and on the answer (`Request-Id`).
@Suite("JSON logs", .timeLimit(.minutes(2)))
struct LogTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func aLineIsOneJSONObjectWithItsFieldsFirstAndTheRequestIdNamed() throws {
        let lines = Lines()
        var logger = Logger(label: "ledger-serve") { JSONLogHandler(label: $0, write: lines.append) }
        logger[metadataKey: "hb.request.id"] = "abc123"
        logger.warning("a \"quoted\"\nmessage", metadata: ["zeta": "1", "alpha": ["x", "y"]])
        let all = lines.all
        #expect(all.count == 1)
        let line = try #require(all.first)
        #expect(line.hasSuffix("}\n") && !line.dropLast().contains("\n"))
        #expect(line.hasPrefix("{\"time\":\""))
        let object = try JSONValue.parse(String(line.dropLast()))
        #expect(object["level"] == .string("warning"))
        #expect(object["logger"] == .string("ledger-serve"))
        #expect(object["message"] == .string("a \"quoted\"\nmessage"))
        #expect(object["requestId"] == .string("abc123"))
        #expect(object["hb.request.id"] == nil)
        #expect(object["alpha"] == .array([.string("x"), .string("y")]))
        // time, level, logger, message, then the metadata by name.
        let order = ["\"time\"", "\"level\"", "\"logger\"", "\"message\"", "\"alpha\"", "\"requestId\"", "\"zeta\""]
        let offsets = order.map { line.range(of: $0)!.lowerBound }
        #expect(offsets == offsets.sorted())
        #expect(object["time"]?.stringValue?.hasSuffix("Z") == true)
    }

    @Test func everyAnswerAndItsLogLineCarryTheSameRequestId() async throws {
        try await ServiceFixture.with("httplogs") { base in
            let lines = Lines()
            let logger = Logger(label: "ledger-serve") { JSONLogHandler(label: $0, write: lines.append) }
            let f = ServiceFixture(
                owner: base.owner,
                service: LedgerService(
                    configuration: base.service.configuration, stores: base.service.stores, logger: logger),
                appendToken: base.appendToken, readToken: base.readToken, auditToken: base.auditToken,
                allToken: base.allToken)
            let token = f.allToken
            let ids: [String] = try await f.serving { port, _ in
                var out: [String] = []
                for (method, path, body) in [
                    ("GET", "/v1/orders/nope", nil), ("POST", "/v1/events", "{\"x\":1}"), ("GET", "/healthz", nil),
                ] {
                    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
                    request.httpMethod = method
                    request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
                    request.httpBody = body.map { Data($0.utf8) }
                    let (_, response) = try await URLSession.shared.exchange(request)
                    out.append((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Request-Id") ?? "")
                }
                return out
            }
            #expect(ids.allSatisfy { $0.count >= 16 } && Set(ids).count == 3, "\(ids)")
            let answered = try lines.all.map { try JSONValue.parse(String($0.dropLast())) }.filter {
                $0["message"] == .string("answered")
            }
            #expect(answered.compactMap { $0["requestId"]?.stringValue } == ids)
            #expect(answered.compactMap { $0["status"]?.stringValue } == ["404", "422", "200"])
            #expect(answered.compactMap { $0["route"]?.stringValue } == ["/v1/orders/{id}", "/v1/events", "/healthz"])
        }
    }
}
