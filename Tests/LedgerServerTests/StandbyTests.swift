import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
import LedgerProjection
@testable import LedgerServer
import LedgerTesting
import Testing

/// Readers off the primary: a real hot standby (pg_basebackup, streaming replication) of a
/// private primary. The audit of the standby equals the primary's; a position it has not replayed
/// is refused, never quietly replaced by the standby's head; it takes no appends.
@Suite("Hot standby", .timeLimit(.minutes(3)))
struct StandbyTests {
    @Test func auditsAStandbyAndRefusesWhatItHasNotReplayed() async throws {
        let base = URL(fileURLWithPath: "/tmp/ledger-standby-\(UUID().uuidString.prefix(8))")
        let primary = EmbeddedPostgres(root: base.appendingPathComponent("primary"))
        let standby = EmbeddedPostgres(root: base.appendingPathComponent("standby"))
        defer { try? FileManager.default.removeItem(at: base) }
        do {
            try await exercise(primary, standby)
        } catch {
            try? await standby.stop()
            try? await primary.stop()
            throw error
        }
        try await standby.stop()
        try await primary.stop()
    }

    private func exercise(_ primary: EmbeddedPostgres, _ standby: EmbeddedPostgres) async throws {
        let validation = EventValidation(allowUnknownTypes: true)
        let primaryConfig = LedgerConfiguration(
            connectionString: try await primary.start(), schema: "ledger", validation: validation)
        _ = try await EventStore.migrate(primaryConfig, migrations: try Migration.eventLogAndReadModels())
        let writer = try await EventStore.open(primaryConfig)
        for k in 1...5 {
            _ = try await writer.append([
                testEvent(stream: "order:\(k)", type: "OrderCreated", key: "order:\(k):created")
            ])
        }

        let standbyConfig = LedgerConfiguration(
            connectionString: try await standby.startStandby(of: primary), schema: "ledger", validation: validation)
        let reader = try await EventStore.open(standbyConfig)
        #expect(try await reader.standbyState().isStandby)
        #expect(try await !writer.standbyState().isStandby)
        try await caughtUp(reader, to: try await writer.headPosition())

        // The same audit on both: same position, same head hash, same findings.
        let onPrimary = try await LogReplay(writer).audit(), onStandby = try await LogReplay(reader).audit()
        #expect(onStandby.position == 5 && onStandby.position == onPrimary.position)
        #expect(onStandby.headHash == onPrimary.headHash)
        #expect(onStandby.findings == onPrimary.findings)
        #expect(try await reader.verifyChain().isIntact)

        // A standby takes no appends.
        await #expect(throws: (any Error).self) {
            _ = try await reader.append([testEvent(stream: "order:9", type: "OrderCreated", key: "order:9:created")])
        }

        // Replay paused: the primary moves on, the standby is behind, and says so.
        _ = try await standby.superuserQuery("SELECT pg_wal_replay_pause()")
        for k in 6...8 {
            _ = try await writer.append([
                testEvent(stream: "order:\(k)", type: "OrderCreated", key: "order:\(k):created")
            ])
        }
        let head = try await writer.headPosition()
        #expect(head == 8)
        do {
            _ = try await LogReplay(reader).audit(through: head)
            Issue.record("the standby audited position \(head) it has not replayed")
        } catch let e as PositionNotReached {
            #expect(e.head == 5 && e.standby.isStandby)
            #expect(e.description.contains("hot standby that has replayed the log only to position 5"))
            #expect(e.code == .positionNotReached)
        }

        // Replay resumed: it catches up and audits the new head like the primary.
        _ = try await standby.superuserQuery("SELECT pg_wal_replay_resume()")
        try await caughtUp(reader, to: head)
        let after = try await LogReplay(reader).audit(through: head)
        #expect(after.headHash == (try await LogReplay(writer).audit()).headHash)
        await reader.close()
        await writer.close()
    }

    /// Waits until the standby has replayed `position` (polling; the suite's time limit catches a hang).
    private func caughtUp(_ reader: EventStore, to position: Int64) async throws {
        for _ in 0..<2_000 {
            if (try? await reader.headPosition()) ?? 0 >= position { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the standby did not replay position \(position)")
    }
}

extension EmbeddedPostgres {
    /// Runs one statement as the cluster's superuser on its `ledger` database.
    func superuserQuery(_ sql: String) async throws -> QueryResult {
        let conn = try await PostgresConnection.connect(url, applicationName: "ledger-test")
        defer { Task { await conn.close() } }
        return try await conn.query(sql)
    }
}
