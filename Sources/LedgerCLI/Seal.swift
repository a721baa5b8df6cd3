import ArgumentParser
import Dispatch
import Foundation
import LedgerLog
import Synchronization

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
            the round it is sealing and gives up the election (a round waits for the append lock while another
            session holds it: a second signal stops it at once). Stopping it, even by a kill, loses nothing: another candidate
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
                let (stop, sources) = Self.stopSignals()
                for await _ in stop { break }
                // Closing waits for the round in flight (which waits for the append lock while
                // another session holds it); the session's end gives up the election.
                await store.close()
                sources.forEach { $0.cancel() }
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

extension Seal {
    /// SIGTERM and SIGINT for a sealer that follows: the first is yielded to the stream (stop,
    /// once the round in flight ends); another, while it waits for that round, ends the process at
    /// once (exit 128 + the signal). Its session ends with it, and with the session its term; what
    /// is pending stays stored and claimed, for the next candidate or writer.
    static func stopSignals() -> (AsyncStream<Void>, [any DispatchSourceSignal]) {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let received = SignalCount()
        let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if received.next() == 1 {
                    continuation.yield()
                } else {
                    Diagnostics.say(
                        "ledger: stopped before the round in flight ended; what is pending stays stored, for the next sealer"
                    )
                    Foundation.exit(128 + number)
                }
            }
            source.resume()
            return source
        }
        return (stream, sources)
    }
}

/// How many stop signals have come.
private final class SignalCount: Sendable {
    private let count = Mutex(0)
    func next() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}
