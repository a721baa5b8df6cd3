import ArgumentParser
import LedgerLog
import Logging
import ServiceLifecycle

struct Seal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seal events a writer committed as pending and left unsealed; print how many.",
        discussion: paragraphs(
            """
            A writer that finds the append lock taken commits its events as pending and asks for them to be sealed into
            the log; one that stops in between leaves them pending (kept, claimed, not yet in the log). The next append
            of any writer seals them, and `ledger serve` does every two seconds; this does it now (as the writer role),
            for a quiet log or a script. `verify-chain` reports how many are pending.

            With --follow it keeps sealing until stopped: it stands as the log's sealer (one is elected among the
            processes that run one: stores opened with Sealing.sealer, `ledger serve --sealing sealer`, this), and once
            elected seals what any writer leaves pending, within 50 ms. SIGTERM or SIGINT stops it: it finishes
            the round it is sealing and gives up the election. Stopping it, even by a kill, loses nothing: another candidate
            takes over, or the writers seal.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Keep sealing, as the log's elected sealer, until stopped.")
    var follow = false

    func run() async throws {
        try await runReportingErrors {
            if follow {
                var config = try await connection.configuration(as: .writer)
                config.sealing = .sealer
                let store = try await EventStore.open(config)
                // The store's sealer logs its election, and what ends a term.
                Diagnostics.say("ledger: standing as the sealer of schema \(config.schema) until stopped")
                let group = ServiceGroup(
                    configuration: .init(
                        services: [UntilStopped()], gracefulShutdownSignals: [.sigterm, .sigint],
                        logger: Logger(label: "ledger")))
                do { try await group.run() } catch {
                    await store.close()
                    throw error
                }
                // Closing waits for the round in flight; the session's end gives up the election.
                await store.close()
                Diagnostics.say("ledger: stopped; no longer a candidate sealer of schema \(config.schema)")
                return
            }
            let store = try await EventStore.open(try await connection.configuration(as: .writer))
            defer { Task { await store.close() } }
            let sealed = try await store.sealPending()
            let head = try await store.headPosition()
            print("{\"sealed\":\(sealed),\"head\":\(head)}")
            Diagnostics.say("ledger: sealed \(sealed) pending event(s); the log's head is \(head)")
        }
    }
}

/// Waits for SIGTERM or SIGINT (the service group's graceful shutdown).
private struct UntilStopped: Service {
    func run() async throws { try? await gracefulShutdown() }
}
