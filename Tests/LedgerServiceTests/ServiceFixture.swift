import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerService
import LedgerTesting
import Logging
import NIOCore

/// A service over a fresh schema of the real PostgreSQL, its roles least-privileged as in
/// production, with one token per scope and one with all of them.
struct ServiceFixture: Sendable {
    let owner: LedgerConfiguration
    let service: LedgerService
    let appendToken: String
    let readToken: String
    let auditToken: String
    let allToken: String

    static func with<T: Sendable>(_ label: String, configure: (inout LedgerService.Configuration) -> Void = { _ in },
                                  _ body: @Sendable (ServiceFixture) async throws -> T) async throws -> T {
        try await TestDatabase.withSchema(label) { base in
            var owner = base
            owner.validation = FactCatalogue.validation()
            var lines: [String] = []
            var tokens: [String] = []
            for (name, scopes) in [("billing", Set([Scope.append])), ("dashboard", [.read]), ("finance", [.audit]), ("admin", Set(Scope.allCases))] {
                let (token, line) = TokenTable.issue(name: name, scopes: scopes)
                tokens.append(token)
                lines.append(line)
            }
            var config = LedgerService.Configuration()
            config.host = "127.0.0.1"
            config.port = 0
            config.tokens = try TokenTable(parsing: lines.joined(separator: "\n"))
            configure(&config)
            let o = owner
            let stores = try await LedgerStores.open({ o.connecting(as: $0) }, logger: Logger(label: "test"))
            let fixture = ServiceFixture(owner: owner, service: LedgerService(configuration: config, stores: stores),
                                         appendToken: tokens[0], readToken: tokens[1], auditToken: tokens[2], allToken: tokens[3])
            do {
                let value = try await body(fixture)
                await stores.close()
                return value
            } catch {
                await stores.close()
                throw error
            }
        }
    }

    /// Runs `body` against the router (no network).
    func test<T: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        let app = Application(router: service.router())
        return try await app.test(.router) { client in try await body(client) }
    }

    func rows() async throws -> Int64 { try await TestDatabase.storedEventRows(owner) }

    static func bearer(_ token: String, _ more: HTTPFields = [:]) -> HTTPFields {
        var h = more
        h[.authorization] = "Bearer " + token
        return h
    }

    /// An OrderCreated fact line.
    static func orderLine(_ order: String, user: String = "u_1", expected: String = "\"no-stream\"", eventId: String? = nil) -> String {
        let id = eventId.map { "\"eventId\":\"\($0)\"," } ?? ""
        return "{\(id)\"stream\":\"order:\(order)\",\"type\":\"OrderCreated\",\"payload\":{\"orderId\":\"\(order)\",\"userId\":\"\(user)\",\"channel\":\"appstore\",\"productId\":\"com.example.coins100\",\"amount\":600,\"currency\":\"CNY\"},\"occurredAt\":\"2026-03-31T08:15:00Z\",\"idempotencyKey\":\"order:\(order):created\",\"metadata\":{\"source\":\"order-service\"},\"expectedVersion\":\(expected)}"
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: JSONValue? { try? JSONValue.parse(text) }
}

extension ByteBuffer {
    init(lines: [String]) { self.init(string: lines.joined(separator: "\n") + "\n") }
}
