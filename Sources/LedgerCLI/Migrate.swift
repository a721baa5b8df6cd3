import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerReport
import LedgerServer

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply the SQL migrations of schema/migrations (a re-run is a no-op).")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runReportingErrors {
            let config = try await connection.configuration(as: nil)
            let outcome = try await EventStore.migrate(config, migrations: try Migration.eventLogAndReadModels())
            for m in outcome.applied { Diagnostics.say("ledger: applied \(m.name)") }
            for m in outcome.rechecked {
                Diagnostics.say(
                    "ledger: recorded \(m)'s text as it is now (its SQL functions moved to files of their own; same effect)"
                )
            }
            if !outcome.functionsApplied.isEmpty {
                Diagnostics.say(
                    "ledger: applied the current text of \(outcome.functionsApplied.count) SQL functions (\(outcome.functionsApplied.joined(separator: ", ")))"
                )
            }
            Diagnostics.say(
                "ledger: schema \(config.schema) is up to date (\(outcome.applied.count) applied now, \(outcome.alreadyApplied) before)"
            )
        }
    }
}
