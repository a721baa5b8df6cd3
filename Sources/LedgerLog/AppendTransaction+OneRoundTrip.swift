import Foundation
import LedgerCore
import LedgerPostgres

// A group answered at its commit under a sealer, in one round trip (AppendTransaction.swift): its
// events committed pending, with no snapshot read first.
extension AppendTransaction {
    /// The versions a group's events take when nothing is read before they are written: each
    /// stream as its first event in the group expects it. The insert reads each stream's last
    /// committed claim, as the reading path's snapshot would: an event's version is that one plus
    /// its place among its stream's events here, and a stream whose first event expects a version
    /// (`exact`, or `noStream`) that is not the one committed makes the insert fail (a version of
    /// -1, refused by `event_claims_stream_version_check`). A version a concurrent writer claims
    /// meanwhile is a unique violation. Either sends the group to the path that reads what is
    /// stored and decides on it. (Read from what is committed, a successor's claim always comes
    /// after its predecessor's in claim order, the order the sealer gives positions in; a claim
    /// that only waited, in the foreign key's check, for a predecessor claimed after it would not.)
    struct Presumption {
        /// The snapshot the group is planned on: the streams whose first event expects a version
        /// (`exact`) have it; the others have none.
        var snapshot: AppendSnapshot
        /// The streams whose first event expects nothing (`any`).
        var computed: Set<String>

        /// Nil when a stream's version must be known to decide the group: an event after the
        /// first one of its stream expects a version, and the first expects none; or when an
        /// expected version leaves no room for the group's events (no stream comes near it, and
        /// the versions after it would overflow: the reading path refuses it).
        init?(_ requests: [[PreparedEvent]]) {
            var versions: [String: Int64] = [:]
            var computed: Set<String> = []
            var seen: Set<String> = []
            let events = requests.reduce(0) { $0 + $1.count }
            for p in requests.joined() {
                let e = p.event
                guard seen.insert(e.stream).inserted else {
                    if computed.contains(e.stream), e.expectedVersion != .any { return nil }
                    continue
                }
                switch e.expectedVersion {
                case .any: computed.insert(e.stream)
                case .noStream: break
                case .exact(let v):
                    guard v < Int64.max - Int64(events) else { return nil }
                    versions[e.stream] = v
                }
            }
            let never = Timestamp(microsecondsSince1970: 0)
            snapshot = AppendSnapshot(
                lastPosition: 0, lastHash: [], lastRecordedAt: never, clock: never, streamVersions: versions,
                stored: nil, holdsLock: false)
            self.computed = computed
        }
    }

    /// The constraints whose violation means "the presumed versions do not hold": a stream whose
    /// last committed version is not the one expected (the insert writes -1), or a version a
    /// concurrent writer claimed first. (The predecessor's foreign key cannot fail: every version
    /// follows one committed, or one of the same insert.)
    static let presumptionConstraints: Set<String> = [
        "event_claims_stream_version_check", "event_claims_stream_version_key",
    ]

    /// Commits the group's events pending, in one round trip: `BEGIN` and the transaction's id,
    /// then the claims and `COMMIT`, two segments of one pipeline. Nil when the group is too
    /// large for one statement (it goes by COPY, after a snapshot). Throws
    /// ``LookUpStoredAndRetry`` when a presumed version does not hold or a request is refused on
    /// them, and a unique violation on an event id or key for a retry: the caller then decides
    /// the group on what is stored.
    static func appendInOneRoundTrip(
        _ requests: [[PreparedEvent]], _ presumption: Presumption, schema s: String,
        on conn: isolated PostgresConnection
    ) throws -> [Result<[AppendedEvent], LedgerError>]? {
        let plan = AppendPlan(requests: requests, snapshot: presumption.snapshot)
        let rows: [PlannedRow]
        switch plan.step {
        case .lookUpStored: throw LookUpStoredAndRetry()
        case .rollBack: return plan.outcomes
        case .write(let planned, _, _): rows = planned
        }
        guard rows.count <= insertThreshold else { return nil }
        // The version each stream's first event expects to be the last committed one (-1 for none;
        // nil: any). The plan's versions follow it; a stream that expects nothing was planned from
        // none (0, 1...), so its events take the last committed version plus one more than that.
        let expected = rows.map { row -> String? in
            let stream = row.prepared.event.stream
            return presumption.computed.contains(stream)
                ? nil : String(presumption.snapshot.streamVersions[stream] ?? -1)
        }
        let insert = Statement(
            """
            INSERT INTO \(s).event_claims (\(pendingColumns))
            SELECT u.id, u.st,
                   CASE WHEN u.expected IS NULL THEN c.version + 1 + u.v
                        WHEN u.expected::int8 = c.version THEN u.v
                        ELSE -1 END,
                   u.ty, u.sv, u.pl, u.md, u.oa, u.ik
            FROM unnest($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::jsonb[], $7::jsonb[],
                        $8::timestamptz[], $9::text[], $10::text[]) AS u(id, st, v, ty, sv, pl, md, oa, ik, expected)
            CROSS JOIN LATERAL (SELECT coalesce(max(c.stream_version), -1) AS version
                                FROM \(s).event_claims c WHERE c.stream_id = u.st) AS c
            RETURNING event_id, stream_version
            """,
            contentParameters(rows) + [
                .textArray(rows.map { $0.prepared.event.idempotencyKey }), .textArray(expected),
            ],
            prepared: true)
        var transaction: String?
        let claimed: QueryResult
        do {
            // The server sends the first segment's answers before it runs the second: if the
            // connection breaks after the COMMIT ran, the transaction's id came first.
            claimed = try conn.pipeline(
                segments: [
                    [Statement("BEGIN"), Statement("SELECT pg_current_xact_id()::text", prepared: true)],
                    [insert, Statement("COMMIT")],
                ],
                received: { results in
                    if transaction == nil, results.count == 2 { transaction = results[1].string(0, 0) }
                })[1][0]
        } catch let error as PostgresError where error.isConnectionFailure {
            // Without its id (the first segment's answer lost too), the caller runs the group
            // again: a committed attempt's events are then found stored, and reported so.
            guard let transaction else { throw error }
            throw OutcomeUnknown(
                transaction: transaction, written: Set(rows.map(\.prepared.event.eventId)), error: error)
        } catch let error as PostgresError where presumptionConstraints.contains(error.constraint ?? "") {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw LookUpStoredAndRetry()
        } catch {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw error
        }
        var versions: [String: Int64] = [:]
        for r in 0..<claimed.count {
            if let id = claimed.string(r, 0), let v = claimed.int64(r, 1) { versions[id] = v }
        }
        return plan.outcomes.map { outcome in
            outcome.map { events in
                events.map { e in
                    var e = e
                    if let v = versions[e.eventId.lowercased] { e.version = v }
                    return e
                }
            }
        }
    }
}
