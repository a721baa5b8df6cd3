import ArgumentParser
import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection

struct AnchorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anchor",
        abstract: "Print the log's head (position, hash, time) as JSON, to keep outside the database.",
        discussion: paragraphs(
            """
            Keep anchors where the database's owner cannot change them (another system, a signed commit, a
            printout). `ledger verify-chain --anchor FILE...` then proves each anchored event is still in the log
            with the same hash: a removed tail, a rewritten and re-chained history or an inserted row shows.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .shortAndLong, help: "Write the anchor to this file instead of stdout.")
    var output: String?

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            defer { Task { await store.close() } }
            let anchor = try await store.anchor()
            let text = anchor.json.compactText + "\n"
            if let output {
                try writeOutput(text, to: output)
                Diagnostics.say("ledger: anchored position \(anchor.position) (hash \(anchor.hash)) in \(output)")
            } else {
                print(text, terminator: "")
            }
        }
    }
}
