import Foundation
import LedgerCore
import LedgerPostgres

/// Runs an ``AppendPlan`` over libpq: one transaction for a group of independent requests
/// (group commit). Reads the snapshot the plan needs, then does what the plan says.
///
/// Positions and the hash chain are given under the append lock (a transaction advisory lock per
/// schema), so a reader that has seen position N has seen everything before it. Uniqueness and
/// versions do not need the lock: every event is claimed in `event_claims` (migration 0013),
/// whose unique and foreign-key constraints are the final word for any writer.
///
/// When the lock is free, the transaction takes it, seals what other writers left pending, and
/// writes its rows straight into `events` (one commit). When another session holds it, the
/// transaction does not wait: it commits its rows as pending, then asks `seal_events` for their
/// positions, which seals them together with every other writer's pending rows (or waits for the
/// session that is doing so). Independent writers thus share one sealing transaction instead of
/// queuing one by one behind a lock held across each commit. A request answered at its commit
/// (``EventStore/appendAtCommit(_:)``) does not ask: its events wait pending for the next writer
/// that takes the lock, or for its own store's coordinator when it has nothing more to append.
enum AppendTransaction {
    /// The writer connection's settings. Its statements are prepared once and run with array
    /// parameters of a few elements; left to choose, PostgreSQL plans them again at every execution
    /// (a custom plan for those few elements looks cheaper than the generic one), and so the
    /// statements `seal_events` and the triggers run. The generic plans are the index probes the
    /// statements are written for.
    static let sessionSettings = ["plan_cache_mode": "force_generic_plan"]

    /// Groups at most this many events use one multi-row INSERT; larger ones use COPY.
    static let insertThreshold = 32

    /// Thrown by the fast path when a request failed its version check: it may be a retry of stored
    /// events (whose expected version no longer holds), so the group is decided again with lookups.
    struct LookUpStoredAndRetry: Error {}

    /// The unique constraints whose violation means "an event of this group is already stored".
    static let duplicateConstraints: Set<String> = [
        "events_event_id_key", "events_idempotency_key_key", "event_claims_pkey", "event_claims_idempotency_key_key",
    ]

    /// How many times a group is decided again after losing a version to a concurrent writer
    /// before the conflict is reported (each retry reads what that writer committed).
    static let maximumVersionRaces = 100

    /// The unique constraints whose violation means "a concurrent writer took a version this group
    /// planned": the group is decided again on a new snapshot.
    static let versionRaceConstraints: Set<String> = ["event_claims_stream_version_key", "events_stream_version_key"]

    /// Runs one group. With `lookUpStored` false (the fast path) it does not look for stored events
    /// and lets the unique constraints on event id and idempotency key find retries: a violation
    /// aborts the transaction and the caller runs the group again with `lookUpStored` true, which
    /// returns the stored events' original positions (or a typed conflict).
    ///
    /// `waits[i]`: whether request `i` waits for its events' positions. One that does not is
    /// answered at its commit: an event committed as pending (or stored before and still pending)
    /// keeps position 0 in its outcome, and the next writer to take the append lock seals it.
    static func run(
        requests: [[PreparedEvent]], waits: [Bool], schema: String, channel: String, lookUpStored: Bool,
        sealing: Sealing = .writers, on conn: isolated PostgresConnection
    ) throws -> [Result<[AppendedEvent], LedgerError>] {
        let s = quoteIdentifier(schema)
        // With a sealer, a group none of whose requests waits for its positions never takes the
        // lock: it needs no snapshot when its versions can be presumed and checked by the claims.
        if sealing == .sealer, !lookUpStored, !waits.contains(true), let presumption = Presumption(requests),
            let outcomes = try appendInOneRoundTrip(requests, presumption, schema: s, on: conn)
        {
            return outcomes
        }
        let (snapshot, transaction) = try readSnapshot(
            requests, schema: schema, lookUpStored: lookUpStored, tryLock: sealing == .writers || waits.contains(true),
            on: conn)
        let plan = AppendPlan(requests: requests, snapshot: snapshot)
        // Nothing of the group's own to write: end the transaction. With the lock, it may have
        // sealed other writers' pending events (and the lookups may have returned their positions),
        // so it commits that; a rollback would undo the seal and leave those positions unsealed.
        let end = snapshot.holdsLock ? "COMMIT" : "ROLLBACK"
        switch plan.step {
        case .lookUpStored:
            try conn.execute(end)
            throw LookUpStoredAndRetry()
        case .rollBack:
            try conn.execute(end)
            // Retries of events still pending: their positions once sealed.
            if hasPending(plan.outcomes, waits) {
                return try withSealedPositions(
                    plan.outcomes, waits,
                    sealed: try conn.pipeline([sealEvents(plan.outcomes, waits, schema: s)])[0])
            }
        case .write(let rows, let head, let recordedAt):
            do {
                if snapshot.holdsLock {
                    // The head is moved by the database (trigger `events_advance_head`, migration 0004),
                    // which also checks that the rows follow the head and carry the server's clock.
                    let finish: [Statement] = [
                        Statement(
                            "SELECT pg_notify($1, $2)", [.text(channel), .text(String(head.position))], prepared: true),
                        Statement("COMMIT"),
                    ]
                    if rows.count <= insertThreshold {
                        try conn.pipeline(
                            [claimStatement(rows, schema: s), insertStatement(rows, recordedAt: recordedAt, schema: s)]
                                + finish)
                    } else {
                        try conn.copyIn(
                            "COPY \(s).event_claims (\(claimColumns)) FROM STDIN", chunks: claimChunks(rows))
                        try conn.copyIn(
                            "COPY \(s).events (\(EventRows.insertColumns)) FROM STDIN",
                            chunks: copyChunks(rows, recordedAt: recordedAt))
                        try conn.pipeline(finish)
                    }
                    // A retry of an event another writer committed as pending after this one sealed.
                    if hasPending(plan.outcomes, waits) {
                        return try withSealedPositions(
                            plan.outcomes, waits,
                            sealed: try conn.pipeline([sealEvents(plan.outcomes, waits, schema: s)])[0])
                    }
                } else {
                    // Committed as pending, then sealed (by this session or the one sealing now)
                    // for the requests that wait for their positions.
                    let waiting = waits.contains(true)
                    let seal = [Statement("COMMIT")] + (waiting ? [sealEvents(plan.outcomes, waits, schema: s)] : [])
                    let sealed: QueryResult?
                    do {
                        if rows.count <= insertThreshold {
                            let results = try conn.pipeline([pendingStatement(rows, schema: s)] + seal)
                            sealed = waiting ? results[2] : nil
                        } else {
                            try conn.copyIn(
                                "COPY \(s).event_claims (\(pendingColumns)) FROM STDIN", chunks: pendingChunks(rows))
                            let results = try conn.pipeline(seal)
                            sealed = waiting ? results[1] : nil
                        }
                    } catch let error as PostgresError
                        where (error.sqlState == .lockNotAvailable || error.isRetryableTransactionFailure)
                        && error.statement?.contains(sealEventsCall) == true
                    {
                        // `seal_events` (or its commit, at the pipeline's sync point) runs after
                        // the COMMIT: this attempt's rows are stored.
                        throw SealFailed(written: Set(rows.map(\.prepared.event.eventId)), error: error)
                    }
                    guard let sealed else { return plan.outcomes }
                    return try withSealedPositions(plan.outcomes, waits, sealed: sealed)
                }
            } catch let error as PostgresError where error.isConnectionFailure {
                // The COMMIT may have run: the caller asks the database how this transaction ended.
                throw OutcomeUnknown(
                    transaction: transaction, written: Set(rows.map(\.prepared.event.eventId)), error: error)
            } catch {
                if conn.isConnected { try? conn.execute("ROLLBACK") }
                throw error
            }
        }
        return plan.outcomes
    }

    /// The connection broke while this attempt wrote `written`: its COMMIT may or may not have
    /// run. `transaction` (the attempt's id, `pg_current_xact_id()`) tells, once reconnected:
    /// committed, the events are this append's own, as ``SealFailed``'s are.
    struct OutcomeUnknown: Error {
        let transaction: String
        let written: Set<UUID>
        let error: PostgresError
    }

    /// How the transaction `id` ended, asked on a new connection after ``OutcomeUnknown``: true
    /// when it committed, false when it aborted, nil while the old session still runs it (its
    /// server process has not yet seen the connection close). After a crash the server may not
    /// know the id at all ("transaction ID N is in the future", 22023): ids are handed out
    /// before they reach the WAL, and recovery restarts from the last one that did, so such a
    /// transaction never wrote its commit: not committed.
    static func committed(_ id: String, on conn: isolated PostgresConnection) throws -> Bool? {
        let status: String?
        do {
            status = try conn.query("SELECT pg_xact_status($1::xid8)", [.text(id)], prepared: true).string(0, 0)
        } catch let error as PostgresError
            where error.sqlState == .invalidParameterValue && error.message.contains("in the future")
        {
            return false
        }
        switch status {
        case "committed": return true
        case "in progress": return nil
        default: return false  // aborted, or too old to know (null): not committed by this attempt
        }
    }

    /// Whether the outcome of a request that waits for its positions names an event still pending
    /// (position 0).
    private static func hasPending(_ outcomes: [Result<[AppendedEvent], LedgerError>], _ waits: [Bool]) -> Bool {
        zip(outcomes, waits).contains { outcome, waits in
            waits && ((try? outcome.get())?.contains { $0.position == 0 } ?? false)
        }
    }

    /// `seal_events`, or the commit of what it sealed, failed with an error worth asking again
    /// (lock_timeout waiting for the append lock or for the lock NOTIFY takes at commit, a
    /// serialization failure, a deadlock) after this attempt had committed `written` as pending:
    /// the events are stored, their positions not known yet. Asking again reports them as stored
    /// before; the append reports them as its own (``AppendCoordinator``).
    struct SealFailed: Error {
        let written: Set<UUID>
        let error: PostgresError
    }

    /// How the statement that asks for positions names the function (to tell its errors apart).
    static let sealEventsCall = "seal_events("

    /// `seal_events` for every event (new or already stored) of the requests that wait for their
    /// positions.
    private static func sealEvents(
        _ outcomes: [Result<[AppendedEvent], LedgerError>], _ waits: [Bool], schema s: String
    ) -> Statement {
        let ids = zip(outcomes, waits).flatMap { outcome, waits in waits ? (try? outcome.get()) ?? [] : [] }
            .map { $0.eventId.lowercased }
        return Statement(
            "SELECT event_id, position FROM \(s).\(sealEventsCall)$1::uuid[])", [.uuidArray(ids)], prepared: true)
    }

    /// The outcomes of the requests that wait for their positions with each event's sealed
    /// position (`seal_events`'s rows: event id, position); the others as they are.
    private static func withSealedPositions(
        _ outcomes: [Result<[AppendedEvent], LedgerError>], _ waits: [Bool], sealed: QueryResult
    ) throws -> [Result<[AppendedEvent], LedgerError>] {
        var positions: [UUID: Int64] = [:]
        for r in 0..<sealed.count {
            if let id = sealed.string(r, 0).flatMap(UUID.init(uuidString:)), let p = sealed.int64(r, 1) {
                positions[id] = p
            }
        }
        return try zip(outcomes, waits).map { outcome, waits in
            guard waits, case .success(let events) = outcome else { return outcome }
            return .success(
                try events.map { e in
                    guard let p = positions[e.eventId] else {
                        throw LedgerError.migration(
                            "event \(e.eventId.lowercased) is committed but seal_events did not return its position; it is kept, pending until sealed: append the same event again to get its position"
                        )
                    }
                    var sealed = e
                    sealed.position = p
                    return sealed
                })
        }
    }
}
