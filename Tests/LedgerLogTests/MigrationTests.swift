import LedgerLog
import LedgerProjection
import LedgerTesting
import Testing

/// The migrator on a whole ledger's migrations (the event log's and the read models'), as
/// `ledger migrate` and every test schema apply them.
@Suite("Migrations", .timeLimit(.minutes(2)))
struct MigrationTests {
    @Test func rerunIsANoOp() async throws {
        try await TestDatabase.withSchema("rerun") { config in
            let outcome = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
            #expect(outcome.applied.isEmpty)
            #expect(outcome.alreadyApplied == (try Migration.eventLogAndReadModels()).count)
        }
    }

    @Test func anEditedAppliedMigrationIsRefused() async throws {
        try await TestDatabase.withSchema("edited") { config in
            var edited = try Migration.eventLogAndReadModels()
            edited[0] = Migration(
                version: edited[0].version, name: edited[0].name, sql: edited[0].sql + "\n-- edited\n")
            await #expect {
                _ = try await EventStore.migrate(config, migrations: edited)
            } throws: { error in
                guard case .migration(let message)? = error as? LedgerError else { return false }
                return message.contains("was edited after it was applied") && message.contains(edited[0].name)
            }
        }
    }

    @Test func concurrentMigratorsDoNotRace() async throws {
        try await TestDatabase.withSchema("racing", migrate: false) { config in
            try await withThrowingTaskGroup(of: Migrator.Outcome.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
                    }
                }
                var applied = 0
                for try await outcome in group { applied += outcome.applied.count }
                #expect(applied == (try Migration.eventLogAndReadModels()).count)
            }
        }
    }
}
