import Foundation
import LedgerCore
import LedgerPostgres

// A group answered at its commit under a sealer, in one round trip (AppendTransaction.swift): its
// events committed pending, with no snapshot read first.
extension AppendTransaction {
    /// The versions a group's events take when nothing is read before they are written: each
    /// stream as its first event in the group expects it. The claims' constraints check the
    /// presumption as the events are written: a version already claimed is a unique violation, a
    /// version whose predecessor is not claimed a foreign-key violation (`event_claims_contiguous_version`).
    /// Either sends the group to the path that reads what is stored and decides on it.
    struct Presumption {
        /// The snapshot the group is planned on: the streams whose first event expects a version
        /// (`exact`) have it; the others have none.
        var snapshot: AppendSnapshot
        /// The streams whose first event expects nothing (`any`): their events' versions are the
        /// stream's last claimed version plus their place in the group, which the insert reads.
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

    /// The constraints whose violation means "the presumed versions do not hold": a version
    /// already claimed (by a retry of these events, another writer, or a stream that exists), or
    /// one whose predecessor is not claimed (the stream is shorter than expected).
    static let presumptionConstraints: Set<String> = [
        "event_claims_stream_version_key", "event_claims_contiguous_version",
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
        // 0 for a version given; for a computed one, its place among its stream's events here
        // (1 for the first), added to the stream's last claimed version.
        let places = rows.map { presumption.computed.contains($0.prepared.event.stream) ? $0.version + 1 : 0 }
        let insert = Statement(
            """
            INSERT INTO \(s).event_claims (\(pendingColumns))
            SELECT u.id, u.st,
                   CASE WHEN u.place = 0 THEN u.v
                        ELSE coalesce((SELECT max(c.stream_version) FROM \(s).event_claims c WHERE c.stream_id = u.st), -1)
                             + u.place END,
                   u.ty, u.sv, u.pl, u.md, u.oa, u.ik
            FROM unnest($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::jsonb[], $7::jsonb[],
                        $8::timestamptz[], $9::text[], $10::int8[]) AS u(id, st, v, ty, sv, pl, md, oa, ik, place)
            RETURNING event_id, stream_version
            """,
            contentParameters(rows) + [.textArray(rows.map { $0.prepared.event.idempotencyKey }), .int8Array(places)],
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
        guard !presumption.computed.isEmpty else { return plan.outcomes }
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
