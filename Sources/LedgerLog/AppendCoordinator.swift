import Foundation
import LedgerPostgres
import Logging

/// Serializes appends onto one writer connection and commits concurrent requests together.
///
/// An append answered at its commit may leave its events pending, when another writer held the
/// append lock. Every writer's next transaction seals what is pending if it can take the lock, so
/// under load they seal each other's. When this writer has been idle for ``idleBeforeSealing``
/// and left events pending that no transaction of its own has sealed since, it seals them itself:
/// it tries the lock (without waiting for it), and tries again later, at growing intervals, while
/// another writer holds it. An append that comes meanwhile runs at once (its own transaction
/// seals them if it takes the lock).
actor AppendCoordinator {
    private let configuration: LedgerConfiguration
    private let connection: PostgresConnection
    private let logger: Logger
    private var pending:
        [(request: [PreparedEvent], waits: Bool, continuation: CheckedContinuation<[AppendedEvent], any Error>)] = []
    private var flushing = false
    /// Whether this writer committed events as pending, answered at commit, that no later
    /// transaction of its own is known to have sealed.
    private var leftPending = false
    private var closed = false
    /// The idle moment after which this writer seals what it left pending: an append that comes
    /// sooner seals it anyway, in its own transaction.
    static let idleBeforeSealing = Duration.milliseconds(2)

    /// This store's candidate sealer, when a sealer seals (``Sealing/sealer``): told whenever a
    /// group leaves events pending.
    private let sealer: Sealer?

    init(configuration: LedgerConfiguration, connection: PostgresConnection, sealer: Sealer?, logger: Logger) {
        self.configuration = configuration
        self.connection = connection
        self.sealer = sealer
        self.logger = logger
    }

    /// Seals what this writer left pending (waiting for the append lock, a moment at most while
    /// another writer commits), then closes the connection.
    func close() async {
        closed = true
        if leftPending {
            // One statement, its own transaction: seal_pending waits for the lock, which the
            // transaction's end releases.
            do {
                _ = try await connection.query("SELECT \(quoteIdentifier(configuration.schema)).seal_pending()")
                leftPending = false
            } catch {
                logger.warning(
                    "append: could not seal the events this writer left pending before closing; they are stored, and the next append of any writer seals them (or run `ledger seal`)",
                    metadata: ["error": "\(error)"])
            }
        }
        await connection.close()
    }

    func backendPID() async -> Int32 { await connection.backendPID }

    /// `waits`: whether the append waits for its events' positions (false: answered at commit, an
    /// event still pending with position 0).
    func submit(_ request: [PreparedEvent], waits: Bool = true) async throws -> [AppendedEvent] {
        try await withCheckedThrowingContinuation { continuation in
            pending.append((request, waits, continuation))
            if !flushing {
                flushing = true
                Task { await self.flush() }
            }
        }
    }

    private func flush() async {
        while !pending.isEmpty {
            var take = 0
            var events = 0
            while take < pending.count,
                take == 0 || events + pending[take].request.count <= configuration.maximumGroupEvents
            {
                events += pending[take].request.count
                take += 1
            }
            let group = Array(pending.prefix(take))
            pending.removeFirst(take)
            let outcomes = await run(group.map(\.request), waits: group.map(\.waits))
            noteLeftPending(outcomes)
            if leftPending, let sealer {
                // The sealer seals them (this store's, when elected; another store's otherwise);
                // this store's close seals what is still pending then.
                await sealer.nudge()
            }
            for (entry, outcome) in zip(group, outcomes) {
                entry.continuation.resume(with: outcome)
            }
        }
        flushing = false
        if leftPending && sealer == nil { sealWhenIdle(after: Self.idleBeforeSealing) }
    }

    /// Seals what this writer left pending after `delay`, unless it is appending again by then or
    /// what it left has been sealed; while another writer holds the append lock, tries again after
    /// twice the delay (at most a second: that writer seals what was committed before it took it),
    /// for about half a minute in all, then leaves them to the next writer that takes the lock.
    private func sealWhenIdle(after delay: Duration, waited: Duration = .zero) {
        Task {
            try? await Task.sleep(for: delay)
            guard leftPending, !flushing, !closed else { return }
            flushing = true
            let sealed = await sealLeftPending()
            flushing = false
            if !pending.isEmpty {
                flushing = true
                Task { await self.flush() }
            } else if !sealed {
                let waited = waited + delay
                guard waited < Self.sealingPatience else {
                    logger.warning(
                        "append: the append lock stayed taken for \(Self.sealingPatience); the events this writer left pending are stored and wait for the next writer that takes it (or `ledger seal`)"
                    )
                    leftPending = false
                    return
                }
                sealWhenIdle(after: min(delay * 2, .seconds(1)), waited: waited)
            }
        }
    }

    /// How long an idle writer keeps trying to seal what it left pending while the lock is taken.
    static let sealingPatience = Duration.seconds(30)

    /// Keeps ``leftPending`` up to date after a group. A group that wrote an event into the log
    /// sealed everything committed before (it held the append lock and sealed what was pending
    /// first, or it waited in `seal_events`, which seals every pending event); one that only left
    /// events pending, answered at commit, leaves them to be sealed.
    private func noteLeftPending(_ outcomes: [Result<[AppendedEvent], any Error>]) {
        let events = outcomes.flatMap { (try? $0.get()) ?? [] }
        if events.contains(where: { $0.position > 0 && !$0.alreadyStored }) {
            leftPending = false
        } else if events.contains(where: { $0.position == 0 }) {
            leftPending = true
        }
    }

    /// Seals every pending event if the append lock is free now; false when another writer holds
    /// it. An error is logged and ends the attempt: the events are stored, and the next append of
    /// any writer (or `ledger serve`, or `ledger seal`) seals them.
    private func sealLeftPending() async -> Bool {
        do {
            // One statement, its own transaction: the lock try_seal_pending takes ends with it.
            let sealed =
                try await connection.query(
                    "SELECT \(quoteIdentifier(configuration.schema)).try_seal_pending()", prepared: true
                ).bool(0, 0) == true
            if sealed { leftPending = false }
            return sealed
        } catch {
            logger.warning(
                "append: could not seal the events this writer left pending; they are stored, and the next append of any writer seals them (or run `ledger seal`)",
                metadata: ["error": "\(error)"])
            leftPending = false
            return true
        }
    }

    /// Runs one group; on a server error with several requests, runs each alone so that one
    /// request's failure never fails another's.
    private func run(_ requests: [[PreparedEvent]], waits: [Bool]) async -> [Result<[AppendedEvent], any Error>] {
        do {
            return try await runWithReconnect(requests, waits: waits).map { $0.mapError { $0 as any Error } }
        } catch let error as PostgresError where requests.count > 1 && !error.isConnectionFailure {
            var out: [Result<[AppendedEvent], any Error>] = []
            for (r, w) in zip(requests, waits) { out.append(contentsOf: await run([r], waits: [w])) }
            return out
        } catch let error as PostgresError {
            return requests.map { _ in .failure(LedgerError.database(error)) }
        } catch {
            return requests.map { _ in .failure(error) }
        }
    }

    private func runWithReconnect(
        _ requests: [[PreparedEvent]], waits: [Bool]
    ) async throws -> [Result<[AppendedEvent], LedgerError>] {
        let deadline = ContinuousClock.now + configuration.reconnectTimeout
        let schema = configuration.schema
        let channel = configuration.channel
        let sealing = configuration.sealing
        var delay = Duration.milliseconds(50)
        // Events an earlier attempt of this append committed (before its seal timed out, or before
        // the connection broke): asking again finds them stored, and they are still its own.
        var written: Set<UUID> = []
        // An attempt cut off by a lost connection, whose transaction's end is not known yet.
        var unknown: AppendTransaction.OutcomeUnknown?
        while true {
            do {
                if let attempt = unknown {
                    // Before running the group again: did the cut-off attempt commit?
                    guard
                        let committed = try await connection.withIsolation({
                            try AppendTransaction.committed(attempt.transaction, on: $0)
                        })
                    else {
                        // Its server process still runs it: ask again shortly.
                        guard ContinuousClock.now < deadline else { throw attempt.error }
                        try? await Task.sleep(for: .milliseconds(20))
                        continue
                    }
                    if committed { written.formUnion(attempt.written) }
                    unknown = nil
                }
                let outcomes = try await connection.withIsolation { conn in
                    var lookUpStored = false
                    var races = 0
                    while true {
                        do {
                            return try AppendTransaction.run(
                                requests: requests, waits: waits, schema: schema, channel: channel,
                                lookUpStored: lookUpStored, sealing: sealing, on: conn)
                        } catch let error as PostgresError
                            where error.isUniqueViolation
                            && AppendTransaction.duplicateConstraints.contains(error.constraint ?? "") && !lookUpStored
                        {
                            // A retry of stored events: decide again, knowing what is stored.
                            lookUpStored = true
                        } catch is AppendTransaction.LookUpStoredAndRetry where !lookUpStored {
                            lookUpStored = true
                        } catch let error as PostgresError
                            where error.isUniqueViolation
                            && AppendTransaction.versionRaceConstraints.contains(error.constraint ?? "")
                            && races < AppendTransaction.maximumVersionRaces
                        {
                            // Another writer claimed a version this group planned: decide again on
                            // what is stored now (an expected version may no longer hold).
                            races += 1
                        }
                    }
                }
                return written.isEmpty ? outcomes : Self.reportingAsWritten(written, outcomes)
            } catch {
                // Retried within the same deadline:
                // - a lost connection (reconnecting first): the outcome of an interrupted COMMIT is
                //   unknown; running the group again is safe because stored events are recognized
                //   by id and key and returned, never written twice. After a write
                //   (`OutcomeUnknown`), the attempt's transaction is asked how it ended: committed,
                //   its events are reported as this append's own, not as stored before;
                // - a serialization failure or deadlock, or lock_timeout before or at the commit
                //   (waiting on a row another writer is inserting, or on the lock NOTIFY takes at
                //   commit): nothing was written;
                // - such an error in `seal_events` or its commit, after the pending rows' commit
                //   (`SealFailed`): the events are kept, and running the group again finds them
                //   and asks for their positions.
                let failure: PostgresError
                if let sealFailed = error as? AppendTransaction.SealFailed {
                    written.formUnion(sealFailed.written)
                    failure = sealFailed.error
                } else if let cutOff = error as? AppendTransaction.OutcomeUnknown {
                    unknown = cutOff
                    failure = cutOff.error
                } else if let error = error as? PostgresError,
                    error.isConnectionFailure || error.isRetryableTransactionFailure
                        || error.sqlState == .lockNotAvailable
                {
                    failure = error
                } else {
                    throw error
                }
                guard ContinuousClock.now < deadline else { throw failure }
                if failure.isConnectionFailure {
                    logger.warning("append: connection lost, reconnecting", metadata: ["error": "\(failure.message)"])
                } else if failure.sqlState == .lockNotAvailable {
                    logger.warning(
                        "append: lock_timeout (waiting for the append lock, or at commit); asking again",
                        metadata: ["error": "\(failure.message)"])
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
                if failure.isConnectionFailure { try? await connection.reconnect() }
            }
        }
    }

    /// The outcomes with the first report of each event in `written` as this append's own write
    /// (`alreadyStored` false), as the attempt that committed it would have reported it.
    static func reportingAsWritten(
        _ written: Set<UUID>, _ outcomes: [Result<[AppendedEvent], LedgerError>]
    ) -> [Result<[AppendedEvent], LedgerError>] {
        var reported: Set<UUID> = []
        return outcomes.map { outcome in
            outcome.map { events in
                events.map { e in
                    var e = e
                    if written.contains(e.eventId), reported.insert(e.eventId).inserted { e.alreadyStored = false }
                    return e
                }
            }
        }
    }
}
