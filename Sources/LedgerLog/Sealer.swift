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
/// Elected, it asks for a seal whenever a writer of its own store has left events pending, and
/// otherwise looks for pending events (other stores' and processes') at growing intervals, 1 ms to
/// ``longestIdle``. A round that sealed something is followed by the next after ``gathering``. Not
/// elected, it tries again every ``electionInterval``, and watches the elected one: when the same
/// event has stayed pending for ``takeOverAfter`` (the elected process frozen, or cut off by a
/// network that has not yet ended its session), it seals what is pending itself, if the append
/// lock is free. A lost connection ends its term: it reconnects and stands again.
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

    /// The longest wait between two looks for pending events when this store's writer has left
    /// none: how long another store's or process's events may wait.
    static let longestIdle = Duration.milliseconds(50)
    /// The pause after a round that sealed something, while more events gather for the next: a
    /// round is a transaction with a commit of its own, and one a writer's commit would double
    /// the server's work for a writer alone.
    static let gathering = Duration.milliseconds(2)
    /// How often a candidate not elected tries again.
    static let electionInterval = Duration.milliseconds(500)
    /// How long a candidate not elected lets one event stay pending before it seals in the elected
    /// one's stead.
    static let takeOverAfter = Duration.seconds(2)
    /// The first pending event a candidate not elected saw (its claim's `seq`), and since when.
    private var oldestPending: (seq: Int64, since: ContinuousClock.Instant)?
    /// A candidate not elected that has stood in for the elected one stands in again after one
    /// ``electionInterval`` rather than ``takeOverAfter``, until the elected one seals again.
    private var standingIn = false
    /// The most passes of 5,000 events a round seals: rounds that find a full pass double their
    /// passes up to this (one read of the pending claims for all of them), and a round that finds
    /// less goes back to one.
    static let mostPasses = 8
    /// How many passes of 5,000 a round seals at most (`seal_pending_passes`), one when there is no
    /// backlog, at most ``mostPasses``.
    private var passes = 1

    init(configuration: LedgerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The session advisory lock that elects the log's sealer, for the schema `$1`: one 64-bit key,
    /// 4244 then the schema's oid (unique in its database, where a hash of its name could be
    /// shared by two schemas; the append lock is a transaction lock under a pair of keys).
    static let electionLock = "SELECT pg_try_advisory_lock((4244::bigint << 32) | to_regnamespace($1)::oid::bigint)"

    /// Settings of the sealer's session: TCP keepalives, so that the session of a sealer cut off by
    /// the network ends (and its election with it) within about half a minute, not the system's two
    /// hours (no effect over a Unix socket).
    static let sessionSettings = AppendTransaction.sessionSettings.merging([
        "tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3",
    ]) { $1 }

    /// Why the connection's role cannot seal `schema` (nil when it can): a candidate that could not
    /// would be elected, fail, and leave every event pending. Asked once, when a store that seals
    /// opens.
    static func problem(on conn: PostgresConnection, schema: String) async throws -> LedgerError? {
        let r = try await conn.query(
            """
            SELECT to_regnamespace($1) IS NOT NULL,
                   to_regprocedure(format('%I.seal_pending_passes(integer)', $1)) IS NOT NULL
                       AND to_regprocedure(format('%I.try_seal_pending_passes(integer)', $1)) IS NOT NULL,
                   to_regclass(format('%I.pending_events', $1)) IS NOT NULL
            """, [.text(schema)])
        guard r.bool(0, 0) == true, r.bool(0, 1) == true, r.bool(0, 2) == true else {
            return .migration(
                "schema \(schema) has no seal_pending_passes(integer), try_seal_pending_passes(integer) or pending_events to seal (it does not exist, or is not migrated): run `ledger migrate`"
            )
        }
        let may = try await conn.query(
            """
            SELECT has_function_privilege(format('%I.seal_pending_passes(integer)', $1), 'EXECUTE'),
                   has_function_privilege(format('%I.try_seal_pending_passes(integer)', $1), 'EXECUTE'),
                   has_function_privilege(format('%I.pending_claims()', $1), 'EXECUTE'),
                   has_table_privilege(format('%I.pending_events', $1), 'SELECT')
            """, [.text(schema)])
        guard (0..<4).allSatisfy({ may.bool(0, $0) == true }) else {
            let role = try await conn.query("SELECT current_user").string(0, 0) ?? "?"
            return .database(
                PostgresError(
                    kind: .client, sqlState: .insufficientPrivilege,
                    message:
                        "role \(role) may not seal schema \(schema): a sealer needs EXECUTE on seal_pending_passes(integer), try_seal_pending_passes(integer) and pending_claims() and SELECT on pending_events, as ledger_writer has"
                ))
        }
        return nil
    }

    /// Starts standing for election and sealing.
    func start() {
        guard loop == nil else { return }
        loop = Task { await self.run() }
    }

    /// This store's writer committed events pending: seal soon.
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
                if Task.isCancelled { break }
                let s = quoteIdentifier(configuration.schema)
                if !elected {
                    elected = try await conn.query(Self.electionLock, [.text(configuration.schema)]).bool(0, 0) == true
                    if !elected {
                        try await watchTheElected(conn, schema: s)
                        await sleep(Self.electionInterval, wakeable: false)
                        continue
                    }
                    oldestPending = nil
                    standingIn = false
                    passes = 1
                    logger.info("sealer: elected for schema \(configuration.schema)")
                }
                // The look costs an index probe; the seal (its own transaction, waiting for the
                // append lock while a writer that waits for its positions holds it) runs only when
                // something is pending, a few passes of at most 5,000 events a transaction: writers
                // that never take the lock never stop adding, and sealing until none is left would
                // keep one transaction, and every position it gives, for as long as they write.
                let n =
                    try await conn.query(
                        "SELECT CASE WHEN EXISTS (SELECT 1 FROM \(s).pending_events) THEN \(s).seal_pending_passes($1) ELSE 0 END",
                        [.int4(Int32(passes))], prepared: true
                    ).int64(0, 0) ?? 0
                failures = 0
                // A backlog (every pass full): the next round seals more of it from one read.
                passes = n >= Int64(passes) * 5_000 ? min(passes * 2, Self.mostPasses) : 1
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
                    "sealer: \(error); the events left pending are stored, and a candidate (this one once reconnected, or another) seals them; if this repeats, `ledger seal` seals them now and `ledger verify-chain` counts what waits",
                    metadata: ["failures": "\(failures)"])
                if let c = connection { await c.close() }
                connection = nil
                await sleep(.milliseconds(min(1000, 50 << min(failures, 5))), wakeable: false)
            }
        }
    }

    /// Not elected: seals what is pending, if the append lock is free, once the same event has
    /// stayed pending for ``takeOverAfter`` (or one ``electionInterval`` after this candidate last
    /// stood in), at most ``mostPasses`` passes a transaction: writers that never take the lock
    /// never stop adding.
    private func watchTheElected(_ conn: PostgresConnection, schema s: String) async throws {
        let oldestQuery = "SELECT min(seq) FROM \(s).pending_claims()"
        let oldest = try await conn.query(oldestQuery, prepared: true).int64(0, 0)
        guard let oldest else {
            // Nothing pending (sealed by this one's stand-in, or by the elected one): a candidate
            // that stood in stays ready to again, until it sees the elected one seal.
            oldestPending = nil
            return
        }
        guard let seen = oldestPending, seen.seq == oldest else {
            // The oldest it saw was sealed by another: the elected one seals again.
            if oldestPending != nil { standingIn = false }
            oldestPending = (oldest, .now)
            return
        }
        guard ContinuousClock.now - seen.since >= (standingIn ? Self.electionInterval : Self.takeOverAfter) else {
            return
        }
        if !standingIn {
            logger.warning(
                "sealer: an event has stayed pending for \(Self.takeOverAfter) while another candidate holds the election (frozen, or cut off); sealing in its stead"
            )
        }
        let sealed = try await conn.query(
            "SELECT \(s).try_seal_pending_passes($1)", [.int4(Int32(Self.mostPasses))], prepared: true
        ).bool(0, 0)
        if sealed == true {
            standingIn = true
            oldestPending = try await conn.query(oldestQuery, prepared: true).int64(0, 0).map { ($0, .now) }
        }
    }

    private func connected() async throws -> PostgresConnection {
        if let c = connection { return c }
        let c = try await PostgresConnection.connect(
            configuration.connectionString, applicationName: "ledger-sealer",
            settings: Self.sessionSettings, logger: logger)
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
