import Foundation
import LedgerPostgres
import Logging

/// How the events appended answered at commit (``EventStore/appendAtCommit(_:)``) reach the log.
public enum Sealing: String, Sendable, CaseIterable {
    /// The writers seal: an append answered at commit takes the append lock when it is free and
    /// writes its events into the log itself (sealing what others left pending first); only when
    /// another writer holds the lock does it commit them pending, for the next writer that takes it.
    /// One writer alone gets its positions at once. The default.
    case writers
    /// A sealer seals: an append answered at commit never takes the append lock. It commits its
    /// events pending (one row each, its claim) and is answered; a sealer positions and chains
    /// what every writer left, many events a transaction. Every store opened with this setting is
    /// a candidate sealer, and one per log is elected among them (a session advisory lock): when its
    /// process ends, its session's lock is released and another candidate takes over. Appends that
    /// wait for their positions are unchanged.
    case sealer
}

/// A candidate sealer: one connection of its own that tries to become the log's sealer, and once
/// elected seals what is pending, round after round.
///
/// Elected, it asks for a seal whenever a writer of its own process has left events pending, and
/// otherwise looks for pending events (from other processes) at growing intervals, 1 ms to
/// ``longestIdle``. A round that sealed something is followed at once by the next. Not elected, it
/// tries again every ``electionInterval``. A lost connection ends its term: it reconnects and
/// stands again.
actor Sealer {
    private let configuration: LedgerConfiguration
    private let logger: Logger
    private var connection: PostgresConnection?
    private var elected = false
    private var loop: Task<Void, Never>?
    /// The loop's sleep, if it is sleeping: resumed when its time is up, or early by ``nudge()``
    /// (when `wakeable`) or ``stop()``. `number` tells one sleep's timer from a later sleep's.
    private var sleeping: (number: Int, wakeable: Bool, continuation: CheckedContinuation<Void, Never>)?
    private var sleeps = 0
    /// A nudge that came while the loop was not in a wakeable sleep: the next one is skipped.
    private var nudged = false

    /// The longest wait between two looks for pending events when none of this process's writers
    /// has left any: how long another process's events may wait.
    static let longestIdle = Duration.milliseconds(50)
    /// The pause after a round that sealed something, while more events gather for the next: a
    /// round is a transaction with a commit of its own, and one a writer's commit would double
    /// the server's work for a writer alone.
    static let gathering = Duration.milliseconds(2)
    /// How often a candidate not elected tries again.
    static let electionInterval = Duration.milliseconds(500)

    init(configuration: LedgerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The session advisory lock that elects the log's sealer, for the schema `$1` (the append lock
    /// is a transaction lock under key 4243).
    static let electionLock = "SELECT pg_try_advisory_lock(4244, hashtext('ledger-sealer:' || $1))"

    /// Starts standing for election and sealing.
    func start() {
        guard loop == nil else { return }
        loop = Task { await self.run() }
    }

    /// A writer of this process committed events pending: seal soon.
    func nudge() {
        if let z = sleeping, z.wakeable {
            sleeping = nil
            z.continuation.resume()
        } else {
            nudged = true
        }
    }

    /// Whether this candidate is the log's sealer now.
    func isElected() -> Bool { elected }

    /// Stops: the session ends, and with it this candidate's term (another candidate takes over).
    func stop() async {
        guard let loop else { return }
        loop.cancel()
        if let z = sleeping {
            sleeping = nil
            z.continuation.resume()
        }
        await loop.value
        self.loop = nil
        if let c = connection { await c.close() }
        connection = nil
        elected = false
    }

    private func run() async {
        var idle = Duration.milliseconds(1)
        var failures = 0
        while !Task.isCancelled {
            do {
                let conn = try await connected()
                if !elected {
                    elected = try await conn.query(Self.electionLock, [.text(configuration.schema)]).bool(0, 0) == true
                    if !elected {
                        await sleep(Self.electionInterval, wakeable: false)
                        continue
                    }
                    logger.info("sealer: elected for schema \(configuration.schema)")
                }
                let s = quoteIdentifier(configuration.schema)
                // The look costs an index probe; the seal (its own transaction, waiting for the
                // append lock while a writer that waits for its positions holds it) runs only when
                // something is pending.
                let n =
                    try await conn.query(
                        "SELECT CASE WHEN EXISTS (SELECT 1 FROM \(s).pending_events) THEN \(s).seal_pending() ELSE 0 END",
                        prepared: true
                    ).int64(0, 0) ?? 0
                failures = 0
                if n > 0 {
                    idle = .milliseconds(1)
                    await sleep(Self.gathering, wakeable: false)
                } else {
                    await sleep(idle, wakeable: true)
                    idle = min(idle * 2, Self.longestIdle)
                }
            } catch {
                if Task.isCancelled { break }
                failures += 1
                elected = false
                logger.warning(
                    "sealer: \(error); the events left pending are stored, and a candidate (this one once reconnected, or another) seals them",
                    metadata: ["failures": "\(failures)"])
                if let c = connection { await c.close() }
                connection = nil
                await sleep(.milliseconds(min(1000, 50 << min(failures, 5))), wakeable: false)
            }
        }
    }

    private func connected() async throws -> PostgresConnection {
        if let c = connection { return c }
        let c = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-sealer",
            settings: AppendTransaction.sessionSettings, logger: logger)
        connection = c
        return c
    }

    /// Sleeps for `duration`, or until ``nudge()`` when `wakeable` (a nudge that came since the
    /// last wakeable sleep skips it), or until ``stop()``.
    private func sleep(_ duration: Duration, wakeable: Bool) async {
        if wakeable && nudged {
            nudged = false
            return
        }
        if Task.isCancelled { return }
        sleeps += 1
        let number = sleeps
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            sleeping = (number, wakeable, c)
            Task {
                try? await Task.sleep(for: duration)
                self.timeUp(number)
            }
        }
    }

    private func timeUp(_ number: Int) {
        guard let z = sleeping, z.number == number else { return }  // woken already
        sleeping = nil
        z.continuation.resume()
    }
}
