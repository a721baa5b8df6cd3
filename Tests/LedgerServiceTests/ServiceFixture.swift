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
import ServiceLifecycle

/// A service over a fresh schema of the real PostgreSQL, its roles least-privileged as in
/// production, with one token per scope and one with all of them.
struct ServiceFixture: Sendable {
    let owner: LedgerConfiguration
    let service: LedgerService
    let appendToken: String
    let readToken: String
    let auditToken: String
    let allToken: String

    /// At most two services at once in this test bundle: each holds up to nine connections (three
    /// roles, each a writer connection and a pool of two), and the whole suite shares one server.
    static let slots = Slots(2)

    /// A service over a schema of its own; with `projector`, the projector runs inside it (`ledger serve --project`).
    static func with<T: Sendable>(
        _ label: String, projector: Bool = false, sealing: Sealing = .writers,
        configure: @Sendable (inout LedgerService.Configuration) -> Void = { _ in },
        _ body: @Sendable (ServiceFixture) async throws -> T
    ) async throws -> T {
        try await slots.run {
            try await withSchema(label, projector: projector, sealing: sealing, configure: configure, body)
        }
    }

    private static func withSchema<T: Sendable>(
        _ label: String, projector: Bool, sealing: Sealing,
        configure: @Sendable (inout LedgerService.Configuration) -> Void,
        _ body: @Sendable (ServiceFixture) async throws -> T
    ) async throws -> T {
        try await TestDatabase.withSchema(label) { base in
            var owner = base
            owner.validation = FactCatalogue.validation()
            owner.readConnections = 2
            var lines: [String] = []
            var tokens: [String] = []
            for (name, scopes) in [
                ("billing", Set([Scope.append])), ("dashboard", [.read]), ("finance", [.audit]),
                ("admin", Set(Scope.allCases)),
            ] {
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
            if projector { config.projector = try await EventStore.open(o.connecting(as: .projector)) }
            // The writer's sealing, as `ledger serve --sealing` sets it.
            let stores = try await LedgerStores.open(
                { role in
                    var c = o.connecting(as: role)
                    if role == .writer { c.sealing = sealing }
                    return c
                }, logger: Logger(label: "test"))
            let fixture = ServiceFixture(
                owner: owner, service: LedgerService(configuration: config, stores: stores, logger: Self.quiet),
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

    /// Runs the service on 127.0.0.1 (an ephemeral port) under a ServiceGroup, as `ledger serve`
    /// does. `body` gets the port and the group (to shut the service down while it works); after it,
    /// the service is shut down gracefully (if it was not already) and its end awaited.
    func serving<T: Sendable>(
        _ body: @Sendable (_ port: Int, _ group: ServiceGroup) async throws -> T
    ) async throws -> T {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = ServiceGroup(
            configuration: .init(
                services: service.services(onListening: { continuation.yield($0) }),
                logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            running.cancel()
            throw ServiceDidNotStart()
        }
        do {
            let value = try await body(port, group)
            await group.triggerGracefulShutdown()
            try await running.value
            return value
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
    }

    struct ServiceDidNotStart: Error, CustomStringConvertible {
        var description: String { "the service did not report a listening port" }
    }

    /// Runs `body` against the router (no network).
    func test<T: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        let app = Application(router: service.router(), logger: Self.quiet)
        return try await app.test(.router) { client in try await body(client) }
    }

    func rows() async throws -> Int64 { try await TestDatabase.storedEventRows(owner) }

    /// The services' logger in tests: warnings and errors only (each answer is logged at info).
    static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }

    static func bearer(_ token: String, _ more: HTTPFields = [:]) -> HTTPFields {
        var h = more
        h[.authorization] = "Bearer " + token
        return h
    }

    /// An OrderCreated fact line (with the business idempotency key unless `businessKey` is false).
    static func orderLine(
        _ order: String, user: String = "u_1", expected: String = "\"no-stream\"", eventId: String? = nil,
        businessKey: Bool = true
    ) -> String {
        let id = eventId.map { "\"eventId\":\"\($0)\"," } ?? ""
        let key = businessKey ? "\"idempotencyKey\":\"order:\(order):created\"," : ""
        return
            "{\(id)\"stream\":\"order:\(order)\",\"type\":\"OrderCreated\",\"payload\":{\"orderId\":\"\(order)\",\"userId\":\"\(user)\",\"channel\":\"appstore\",\"productId\":\"com.example.coins100\",\"amount\":600,\"currency\":\"CNY\"},\"occurredAt\":\"2026-03-31T08:15:00Z\",\(key)\"metadata\":{\"source\":\"order-service\"},\"expectedVersion\":\(expected)}"
    }
}

/// A counting semaphore for async tests (waiters resume in order).
actor Slots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if free > 0 { free -= 1 } else { await withCheckedContinuation { waiting.append($0) } }
        defer {
            if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: JSONValue? { try? JSONValue.parse(text) }
}

extension ByteBuffer {
    init(lines: [String]) { self.init(string: lines.joined(separator: "\n") + "\n") }
}
