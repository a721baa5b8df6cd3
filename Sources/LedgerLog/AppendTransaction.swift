import Foundation
import LedgerCore
import LedgerPostgres

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
    static func run(
        requests: [[PreparedEvent]], schema: String, channel: String, lookUpStored: Bool, on conn: isolated PostgresConnection
    ) throws -> [Result<[AppendedEvent], LedgerError>] {
        let s = quoteIdentifier(schema)
        let (snapshot, transaction) = try readSnapshot(requests, schema: schema, lookUpStored: lookUpStored, on: conn)
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
            if hasPending(plan.outcomes) {
                return try withSealedPositions(plan.outcomes, sealed: try conn.pipeline([sealEvents(plan.outcomes, schema: s)])[0])
            }
        case .write(let rows, let head, let recordedAt):
            do {
                if snapshot.holdsLock {
                    // The head is moved by the database (trigger `events_advance_head`, migration 0004),
                    // which also checks that the rows follow the head and carry the server's clock.
                    let finish: [Statement] = [
                        Statement("SELECT pg_notify($1, $2)", [.text(channel), .text(String(head.position))], prepared: true),
                        Statement("COMMIT"),
                    ]
                    if rows.count <= insertThreshold {
                        try conn.pipeline([claimStatement(rows, schema: s), insertStatement(rows, recordedAt: recordedAt, schema: s)] + finish)
                    } else {
                        try conn.copyIn("COPY \(s).event_claims (\(claimColumns)) FROM STDIN", chunks: claimChunks(rows))
                        try conn.copyIn("COPY \(s).events (\(EventRows.insertColumns)) FROM STDIN", chunks: copyChunks(rows, recordedAt: recordedAt))
                        try conn.pipeline(finish)
                    }
                    // A retry of an event another writer committed as pending after this one sealed.
                    if hasPending(plan.outcomes) {
                        return try withSealedPositions(plan.outcomes, sealed: try conn.pipeline([sealEvents(plan.outcomes, schema: s)])[0])
                    }
                } else {
                    // Committed as pending, then sealed (by this session or the one sealing now).
                    let seal = [Statement("COMMIT"), sealEvents(plan.outcomes, schema: s)]
                    let sealed: QueryResult
                    do {
                        if rows.count <= insertThreshold {
                            sealed = try conn.pipeline([claimStatement(rows, schema: s), pendingStatement(rows, schema: s)] + seal)[3]
                        } else {
                            try conn.copyIn("COPY \(s).event_claims (\(claimColumns)) FROM STDIN", chunks: claimChunks(rows))
                            try conn.copyIn("COPY \(s).pending_events (\(pendingColumns)) FROM STDIN", chunks: pendingChunks(rows))
                            sealed = try conn.pipeline(seal)[1]
                        }
                    } catch let error as PostgresError
                        where (error.sqlState == .lockNotAvailable || error.isRetryableTransactionFailure)
                            && error.statement?.contains(sealEventsCall) == true {
                        // `seal_events` (or its commit, at the pipeline's sync point) runs after
                        // the COMMIT: this attempt's rows are stored.
                        throw SealFailed(written: Set(rows.map(\.prepared.event.eventId)), error: error)
                    }
                    return try withSealedPositions(plan.outcomes, sealed: sealed)
                }
            } catch let error as PostgresError where error.isConnectionFailure {
                // The COMMIT may have run: the caller asks the database how this transaction ended.
                throw OutcomeUnknown(transaction: transaction, written: Set(rows.map(\.prepared.event.eventId)), error: error)
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
        } catch let error as PostgresError where error.sqlState == .invalidParameterValue && error.message.contains("in the future") {
            return false
        }
        switch status {
        case "committed": return true
        case "in progress": return nil
        default: return false // aborted, or too old to know (null): not committed by this attempt
        }
    }

    /// Whether an outcome names an event still pending (position 0).
    private static func hasPending(_ outcomes: [Result<[AppendedEvent], LedgerError>]) -> Bool {
        outcomes.contains { (try? $0.get())?.contains { $0.position == 0 } ?? false }
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

    /// `seal_events` for every event of the outcomes (new or already stored).
    private static func sealEvents(_ outcomes: [Result<[AppendedEvent], LedgerError>], schema s: String) -> Statement {
        let ids = outcomes.flatMap { (try? $0.get()) ?? [] }.map { $0.eventId.lowercased }
        return Statement("SELECT event_id, position FROM \(s).\(sealEventsCall)$1::uuid[])", [.uuidArray(ids)], prepared: true)
    }

    /// The outcomes with each event's sealed position (`seal_events`'s rows: event id, position).
    private static func withSealedPositions(
        _ outcomes: [Result<[AppendedEvent], LedgerError>], sealed: QueryResult
    ) throws -> [Result<[AppendedEvent], LedgerError>] {
        var positions: [UUID: Int64] = [:]
        for r in 0..<sealed.count {
            if let id = sealed.string(r, 0).flatMap(UUID.init(uuidString:)), let p = sealed.int64(r, 1) { positions[id] = p }
        }
        return try outcomes.map { outcome in
            guard case .success(let events) = outcome else { return outcome }
            return .success(try events.map { e in
                guard let p = positions[e.eventId] else {
                    throw LedgerError.migration("event \(e.eventId.lowercased) is committed but seal_events did not return its position; it is kept, pending until sealed: append the same event again to get its position")
                }
                var sealed = e
                sealed.position = p
                return sealed
            })
        }
    }

    /// Begins the transaction, locks the head and reads what the plan needs (in one pipeline).
    private static func readSnapshot(
        _ requests: [[PreparedEvent]], schema: String, lookUpStored: Bool, on conn: isolated PostgresConnection
    ) throws -> (AppendSnapshot, transaction: String) {
        let s = quoteIdentifier(schema)
        let events = requests.joined()
        let streams = Array(Set(events.map(\.event.stream)))
        var statements = [
            Statement("BEGIN"),
            // Versions from the claims (sealed and pending events), read before anything is sealed.
            Statement("""
                SELECT st, (SELECT max(stream_version) FROM \(s).event_claims WHERE stream_id = st)
                FROM unnest($1::text[]) AS st
                """, [.textArray(streams)], prepared: true),
            // The append lock if it is free, with what is pending sealed; false when another
            // session holds it (the group then commits as pending).
            Statement("SELECT \(s).try_seal_pending()", prepared: true),
            Statement("SELECT last_position, last_hash, last_recorded_at FROM \(s).log_head", prepared: true),
            // This transaction's id, to ask how it ended if the connection breaks.
            Statement("SELECT clock_timestamp(), pg_current_xact_id()::text", prepared: true),
        ]
        if lookUpStored {
            // One unique-index probe per id and per key, whatever the table's statistics say
            // (a prepared OR of two ANY() can settle on a sequential scan while the table is young).
            // Pending events have no position yet (0 here; their sealed one comes from seal_events).
            statements.append(Statement("""
                SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                FROM unnest($1::uuid[]) AS k(id) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE event_id = k.id) AS e
                UNION ALL
                SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE idempotency_key = k.key) AS e
                UNION ALL
                SELECT 0, p.event_id, p.idempotency_key, p.stream_id, p.stream_version, p.event_type, p.schema_version, p.payload::text
                FROM unnest($1::uuid[]) AS k(id) CROSS JOIN LATERAL (SELECT * FROM \(s).pending_events WHERE event_id = k.id) AS p
                UNION ALL
                SELECT 0, p.event_id, p.idempotency_key, p.stream_id, p.stream_version, p.event_type, p.schema_version, p.payload::text
                FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM \(s).pending_events WHERE idempotency_key = k.key) AS p
                """, [.uuidArray(events.map { $0.event.eventId.lowercased }), .textArray(events.compactMap(\.event.idempotencyKey))], prepared: true))
        }
        let lookups: [QueryResult]
        do {
            lookups = try conn.pipeline(statements)
        } catch {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw error
        }
        let head = lookups[3]
        guard head.count == 1, let lastPosition = head.int64(0, 0), let lastHash = head.bytea(0, 1),
              let lastRecorded = head.string(0, 2).flatMap(Timestamp.init), let clock = lookups[4].string(0, 0).flatMap(Timestamp.init),
              let transaction = lookups[4].string(0, 1)
        else {
            try? conn.execute("ROLLBACK")
            throw LedgerError.migration("the log head of schema \(schema) is missing; run `ledger migrate`")
        }
        var versions: [String: Int64] = [:]
        let current = lookups[1]
        for r in 0..<current.count {
            if let v = current.int64(r, 1) { versions[current.string(r, 0)!] = v }
        }
        let snapshot = AppendSnapshot(lastPosition: lastPosition, lastHash: lastHash, lastRecordedAt: lastRecorded, clock: clock,
                                      streamVersions: versions, stored: lookUpStored ? storedEvents(lookups[5]) : nil,
                                      holdsLock: lookups[2].bool(0, 0) == true)
        return (snapshot, transaction)
    }

    private static func storedEvents(_ found: QueryResult) -> [StoredEvent] {
        (0..<found.count).map { r in
            StoredEvent(position: found.int64(r, 0)!, eventId: UUID(uuidString: found.string(r, 1)!)!, key: found.string(r, 2),
                        stream: found.string(r, 3)!, version: found.int64(r, 4)!, type: found.string(r, 5)!,
                        schemaVersion: Int32(found.string(r, 6)!)!, payloadText: found.string(r, 7)!)
        }
    }

    /// The group's claims: ids, keys and stream versions, held by their unique constraints.
    private static func claimStatement(_ rows: [PlannedRow], schema s: String) -> Statement {
        Statement("""
            INSERT INTO \(s).event_claims (event_id, idempotency_key, stream_id, stream_version)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int8[])
            """, [
                .uuidArray(rows.map { $0.prepared.event.eventId.lowercased }),
                .textArray(rows.map { $0.prepared.event.idempotencyKey }),
                .textArray(rows.map { $0.prepared.event.stream }),
                .int8Array(rows.map { $0.version }),
            ], prepared: true)
    }

    static let claimColumns = "event_id, idempotency_key, stream_id, stream_version"

    /// Claims (``claimColumns``) in COPY text format.
    private static func claimChunks(_ rows: [PlannedRow]) -> [[UInt8]] {
        chunked(rows) { row, out in
            let e = row.prepared.event
            out.append(contentsOf: e.eventId.lowercased.utf8); out.append(0x09)
            if let k = e.idempotencyKey { CopyText.appendEscaped(k, into: &out) } else { CopyText.appendNull(into: &out) }
            out.append(0x09)
            CopyText.appendEscaped(e.stream, into: &out); out.append(0x09)
            out.append(contentsOf: String(row.version).utf8)
            out.append(0x0A)
        }
    }

    static let pendingColumns = """
        event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, idempotency_key
        """

    private static func pendingStatement(_ rows: [PlannedRow], schema s: String) -> Statement {
        Statement("""
            INSERT INTO \(s).pending_events (\(pendingColumns))
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::jsonb[], $7::jsonb[],
                                 $8::timestamptz[], $9::text[])
            """, contentParameters(rows) + [.textArray(rows.map { $0.prepared.event.idempotencyKey })], prepared: true)
    }

    /// The parameters both inserts share: event id, stream, version, type, schema version, payload,
    /// metadata and occurredAt, one array each.
    private static func contentParameters(_ rows: [PlannedRow]) -> [PostgresValue] {
        [
            .uuidArray(rows.map { $0.prepared.event.eventId.lowercased }),
            .textArray(rows.map { $0.prepared.event.stream }),
            .int8Array(rows.map { $0.version }),
            .textArray(rows.map { $0.prepared.event.type }),
            .arrayOfLiterals(rows.map { String($0.prepared.event.schemaVersion) }, arrayOID: PostgresValue.OID.int4Array),
            .arrayOfLiterals(rows.map { $0.prepared.payloadText }, arrayOID: PostgresValue.OID.jsonbArray),
            .arrayOfLiterals(rows.map { $0.prepared.metadataText }, arrayOID: PostgresValue.OID.jsonbArray),
            .arrayOfLiterals(rows.map { $0.prepared.event.occurredAt.iso8601 }, arrayOID: PostgresValue.OID.timestamptzArray),
        ]
    }

    /// Pending rows (``pendingColumns``) in COPY text format.
    private static func pendingChunks(_ rows: [PlannedRow]) -> [[UInt8]] {
        chunked(rows) { row, out in
            let e = row.prepared.event
            out.append(contentsOf: e.eventId.lowercased.utf8); out.append(0x09)
            CopyText.appendEscaped(e.stream, into: &out); out.append(0x09)
            out.append(contentsOf: String(row.version).utf8); out.append(0x09)
            out.append(contentsOf: e.type.utf8); out.append(0x09)
            out.append(contentsOf: String(e.schemaVersion).utf8); out.append(0x09)
            CopyText.appendEscaped(row.prepared.payloadText, into: &out); out.append(0x09)
            CopyText.appendEscaped(row.prepared.metadataText, into: &out); out.append(0x09)
            out.append(contentsOf: e.occurredAt.iso8601.utf8); out.append(0x09)
            if let k = e.idempotencyKey { CopyText.appendEscaped(k, into: &out) } else { CopyText.appendNull(into: &out) }
            out.append(0x0A)
        }
    }

    private static func insertStatement(_ rows: [PlannedRow], recordedAt: Timestamp, schema s: String) -> Statement {
        let recorded = recordedAt.iso8601
        return Statement("""
            INSERT INTO \(s).events (\(EventRows.insertColumns))
            SELECT * FROM unnest($1::int8[], $2::uuid[], $3::text[], $4::int8[], $5::text[], $6::int4[], $7::jsonb[],
                                 $8::jsonb[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::bytea[])
            """, [.int8Array(rows.map(\.position))] + contentParameters(rows) + [
                .arrayOfLiterals(rows.map { _ in recorded }, arrayOID: PostgresValue.OID.timestamptzArray),
                .textArray(rows.map { $0.prepared.event.idempotencyKey }),
                .arrayOfLiterals(rows.map { "\\x" + $0.hash.hexString }, arrayOID: PostgresValue.OID.byteaArray),
            ], prepared: true)
    }

    /// `events` rows in COPY text format.
    private static func copyChunks(_ rows: [PlannedRow], recordedAt: Timestamp) -> [[UInt8]] {
        let recorded = Array(recordedAt.iso8601.utf8)
        return chunked(rows) { row, out in
            let e = row.prepared.event
            EventRows.appendCopyRow(position: row.position, eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
                                    type: e.type, schemaVersion: e.schemaVersion, payloadText: row.prepared.payloadText,
                                    metadataText: row.prepared.metadataText, occurredAt: e.occurredAt, recordedAt: recorded,
                                    idempotencyKey: e.idempotencyKey, hash: row.hash, into: &out)
        }
    }

    /// COPY text rows written by `row`, in chunks of about 256 KiB.
    private static func chunked(_ rows: [PlannedRow], _ row: (PlannedRow, inout [UInt8]) -> Void) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var out: [UInt8] = []
        out.reserveCapacity(300 * 1024)
        for r in rows {
            row(r, &out)
            if out.count >= 256 * 1024 {
                chunks.append(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { chunks.append(out) }
        return chunks
    }
}
