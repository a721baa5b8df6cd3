import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerServer
import LedgerService
import LedgerTesting
import Logging
import Testing

/// The live tail across real restarts of a private PostgreSQL: the stream does not end, it waits
/// while the database is away and goes on from where it was, nothing skipped or repeated. Bounded
/// by counts (appends, restarts); the time limit only catches a hang.
@Suite("Live tail across database restarts", .timeLimit(.minutes(3)))
struct EventTailRestartTests {
    static let rounds = 3
    static let perRound = 5

    @Test func theStreamGoesOnAcrossRestarts() async throws {
        try await EmbeddedPostgres.withPrivateCluster("sse") { try await run($0) }
    }

    private func run(_ db: EmbeddedPostgres) async throws {
        let url = try await db.start()
        var owner = LedgerConfiguration(connectionString: url, schema: "ledger", validation: FactCatalogue.validation())
        owner.readConnections = 2
        _ = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
        let (token, line) = TokenTable.issue(name: "reader", scopes: [.read])
        var config = LedgerService.Configuration()
        config.host = "127.0.0.1"
        config.port = 0
        config.tokens = try TokenTable(parsing: line)
        let o = owner
        let stores = try await LedgerStores.open({ o.connecting(as: $0) }, logger: Logger(label: "test"))
        let f = ServiceFixture(
            owner: owner, service: LedgerService(configuration: config, stores: stores),
            appendToken: token, readToken: token, auditToken: token, allToken: token)
        let writer = try await EventStore.open(owner.connecting(as: .writer))
        let total = Self.rounds * Self.perRound + Self.perRound
        let seen: [Int64] = try await f.serving { port, _ in
            let client = try RawHTTP(port: port, timeout: 90)
            defer { client.close() }
            client.send(EventTailTests.request(token, from: "?from=1"))
            var n = 0
            for _ in 0..<Self.rounds {
                for _ in 0..<Self.perRound {
                    n += 1
                    _ = try await writer.append([EventTailTests.order("r\(n)")])
                }
                try await db.stop()
                _ = try await db.start()
            }
            for _ in 0..<Self.perRound {
                n += 1
                _ = try await writer.append([EventTailTests.order("r\(n)")])
            }
            // Read until every event has come (at most 2,000 reads, each waiting for some bytes).
            var text = ""
            var ids: [Int64] = []
            for _ in 0..<2000 where ids.count < total {
                text += await client.readSome()
                ids = text.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
                    .compactMap { $0.hasPrefix("id: ") ? Int64($0.dropFirst(4)) : nil }
            }
            return ids
        }
        #expect(seen == Array(1...Int64(total)), "skipped, repeated or out of order across restarts: \(seen)")
        await writer.close()
        await stores.close()
    }
}
