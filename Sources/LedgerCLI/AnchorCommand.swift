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

            With --position, the anchor of an earlier event as the log stores it now: the last event of a range
            about to be archived, say. Run a full `verify-chain` first: such an anchor is worth what the log is
            worth when it is taken.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .shortAndLong, help: "Write the anchor to this file instead of stdout.")
    var output: String?

    @Option(help: "Anchor the event at this position (at most the head) instead of the head.")
    var position: Int64?

    func run() async throws {
        try await runReportingErrors {
            if let position, position < 0 { throw InputProblem("--position \(position): a position is 0 or more") }
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            defer { Task { await store.close() } }
            let anchor: Anchor
            if let position {
                guard let found = try await store.anchor(at: position) else {
                    throw InputProblem(
                        "--position \(position): the log has no event there; its head is \(try await store.headPosition()), so give a position from 0 to that"
                    )
                }
                anchor = found
            } else {
                anchor = try await store.anchor()
            }
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
