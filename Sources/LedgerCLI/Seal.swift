import ArgumentParser
import LedgerLog

struct Seal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seal events a writer committed as pending and left unsealed; print how many.",
        discussion: paragraphs(
            """
            A writer that finds the append lock taken commits its events as pending and asks for them to be sealed into
            the log; one that stops in between leaves them pending (kept, claimed, not yet in the log). The next append
            of any writer seals them, and `ledger serve` does every two seconds; this does it now (as the writer role),
            for a quiet log or a script. `verify-chain` reports how many are pending.
            """))

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .writer))
            defer { Task { await store.close() } }
            let sealed = try await store.sealPending()
            let head = try await store.headPosition()
            print("{\"sealed\":\(sealed),\"head\":\(head)}")
            Diagnostics.say("ledger: sealed \(sealed) pending event(s); the log's head is \(head)")
        }
    }
}
