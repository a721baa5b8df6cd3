import Foundation
import LedgerPostgres
import Logging

/// Serializes appends onto one writer connection and commits concurrent requests together.
actor AppendCoordinator {
    private let configuration: LedgerConfiguration
    private let connection: PostgresConnection
    private let logger: Logger
    private var pending: [(request: [PreparedEvent], continuation: CheckedContinuation<[AppendedEvent], any Error>)] =
        []
    private var flushing = false

    init(configuration: LedgerConfiguration, connection: PostgresConnection, logger: Logger) {
        self.configuration = configuration
        self.connection = connection
        self.logger = logger
    }

    func close() async { await connection.close() }

    func backendPID() async -> Int32 { await connection.backendPID }

    func submit(_ request: [PreparedEvent]) async throws -> [AppendedEvent] {
        try await withCheckedThrowingContinuation { continuation in
            pending.append((request, continuation))
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
            let outcomes = await run(group.map(\.request))
            for (entry, outcome) in zip(group, outcomes) {
                entry.continuation.resume(with: outcome)
            }
        }
        flushing = false
    }

    /// Runs one group; on a server error with several requests, runs each alone so that one
    /// request's failure never fails another's.
    private func run(_ requests: [[PreparedEvent]]) async -> [Result<[AppendedEvent], any Error>] {
        do {
            return try await runWithReconnect(requests).map { $0.mapError { $0 as any Error } }
        } catch let error as PostgresError where requests.count > 1 && !error.isConnectionFailure {
            var out: [Result<[AppendedEvent], any Error>] = []
            for r in requests { out.append(contentsOf: await run([r])) }
            return out
        } catch let error as PostgresError {
            return requests.map { _ in .failure(LedgerError.database(error)) }
        } catch {
            return requests.map { _ in .failure(error) }
        }
    }

    private func runWithReconnect(_ requests: [[PreparedEvent]]) async throws -> [Result<[AppendedEvent], LedgerError>]
    {
        let deadline = ContinuousClock.now + configuration.reconnectTimeout
        let schema = configuration.schema
        let channel = configuration.channel
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
                                requests: requests, schema: schema, channel: channel, lookUpStored: lookUpStored,
                                on: conn)
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
