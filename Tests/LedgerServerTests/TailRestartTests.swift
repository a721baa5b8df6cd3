import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection
import LedgerPostgres
@testable import LedgerServer
import LedgerTesting
import Testing

/// Tails (a subscription, as `read --follow` runs it, and the projector, as `project --follow` runs
/// it) across real restarts of a private server: they reconnect and resume, nothing skipped or
/// repeated. Bounded by counts (appends, restarts); the time limit only catches a hang.
@Suite("Tails survive server restarts", .timeLimit(.minutes(3)))
struct TailRestartTests {
    static let rounds = 3
    static let perRound = 60

    @Test func subscriptionAndProjectorResumeAfterEachRestart() async throws {
        try await EmbeddedPostgres.withPrivateCluster("tails") { try await run($0) }
    }

    private func run(_ db: EmbeddedPostgres) async throws {
        let url = try await db.start()
        let owner = LedgerConfiguration(
            connectionString: url, schema: "ledger", validation: EventValidation(allowUnknownTypes: true))
        _ = try await EventStore.migrate(owner, migrations: try Migration.eventLogAndReadModels())
        let total = Self.rounds * Self.perRound
        let reader = try await EventStore.open(owner.connecting(as: .reader))
        let projectorStore = try await EventStore.open(owner.connecting(as: .projector))
        let retries = Locked(0), restarts = Locked(0)

        let tail = Task {
            var seen: [Int64] = []
            for try await e in reader.subscribe(
                after: 0, pollInterval: .milliseconds(200),
                backoff: Backoff(first: .milliseconds(50), maximum: .milliseconds(500)),
                onRetry: { _, _ in retries.withLock { $0 += 1 } })
            {
                seen.append(e.position)
                if seen.count == total { break }
            }
            return seen
        }
        let projecting = Task {
            try await Projector.followSurvivingRestarts(
                projectorStore, pollInterval: .milliseconds(200),
                backoff: Backoff(first: .milliseconds(50), maximum: .milliseconds(500)),
                onRestart: { _, _ in restarts.withLock { $0 += 1 } })
        }

        let writer = try await EventStore.open(owner.connecting(as: .writer))
        for round in 0..<Self.rounds {
            for i in 0..<Self.perRound {
                _ = try await writer.append([testEvent(stream: "order:\(round)-\(i % 7)", type: "OrderCreated")])
            }
            try await db.stop()
            try await db.start()
        }
        let seen = try await tail.value
        #expect(seen == Array(1...Int64(total)), "the tail skipped or repeated")
        #expect(retries.withLock { $0 } > 0, "the tail never met the server away: the test did not test a reconnect")

        // The projector's checkpoints reach the head (it wakes on NOTIFY or polls every 200 ms).
        let admin = try await PostgresConnection.connect(url, applicationName: "ledger-test-admin")
        var low: Int64 = 0
        while low < Int64(total) {
            try await Task.sleep(for: .milliseconds(50))
            low =
                try await admin.query("SELECT coalesce(min(position), 0) FROM ledger.projection_checkpoints").int64(
                    0, 0) ?? 0
        }
        projecting.cancel()
        _ = try? await projecting.value
        #expect(restarts.withLock { $0 } > 0, "the projector never met the server away")
        // Nothing applied twice or skipped: the tables equal a rebuild from the log.
        let ownerStore = try await EventStore.open(owner)
        let report = try await LogReplay(ownerStore).rebuild(RebuildOptions(verify: true))
        #expect(report.tables.allSatisfy { $0.matches }, "\(report.tables.flatMap(\.differences))")
        await admin.close()
        await ownerStore.close()
        await writer.close()
        await reader.close()
        await projectorStore.close()
    }
}
