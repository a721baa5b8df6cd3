import Foundation
import LedgerCore
import LedgerPostgres

/// What the log holds for one appended event.
public struct AppendedEvent: Sendable, Hashable {
    public var eventId: UUID
    public var stream: String
    public var version: Int64
    public var position: Int64
    /// True when the event was already stored (an idempotent retry): the values are the original ones.
    public var alreadyStored: Bool

    public init(eventId: UUID, stream: String, version: Int64, position: Int64, alreadyStored: Bool) {
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.position = position
        self.alreadyStored = alreadyStored
    }
}

/// A validated event with its canonical texts computed once.
struct PreparedEvent: Sendable {
    var event: NewEvent
    var payloadText: String
    var metadataText: String

    init(_ event: NewEvent) {
        self.event = event
        self.payloadText = event.payload.canonicalText
        self.metadataText = event.metadata.json.canonicalText
    }
}

/// Runs an ``AppendPlan`` over libpq: one transaction for a group of independent requests
/// (group commit). Reads the snapshot the plan needs, then does what the plan says.
///
/// Under the append lock (a transaction advisory lock per schema, held to COMMIT) appends are serialized, so
/// positions are assigned in commit order with no gaps: a reader that has seen position N has seen
/// everything before it. Duplicate and version checks run under the same lock and are backed by
/// the unique and foreign-key constraints of `events`, which stay the final word for any writer.
enum AppendTransaction {
    /// Groups at most this many events use one multi-row INSERT; larger ones use COPY.
    static let insertThreshold = 32

    /// Thrown by the fast path when a request failed its version check: it may be a retry of stored
    /// events (whose expected version no longer holds), so the group is decided again with lookups.
    struct LookUpStoredAndRetry: Error {}

    /// The unique constraints whose violation means "an event of this group is already stored".
    static let duplicateConstraints: Set<String> = ["events_event_id_key", "events_idempotency_key_key"]

    /// Runs one group. With `lookUpStored` false (the fast path) it does not look for stored events
    /// and lets the unique constraints on event id and idempotency key find retries: a violation
    /// aborts the transaction and the caller runs the group again with `lookUpStored` true, which
    /// returns the stored events' original positions (or a typed conflict).
    static func run(
        requests: [[PreparedEvent]], schema: String, channel: String, lookUpStored: Bool, on conn: isolated PostgresConnection
    ) throws -> [Result<[AppendedEvent], LedgerError>] {
        let s = quoteIdentifier(schema)
        let snapshot = try readSnapshot(requests, schema: schema, lookUpStored: lookUpStored, on: conn)
        let plan = AppendPlan(requests: requests, snapshot: snapshot)
        switch plan.step {
        case .lookUpStored:
            try conn.execute("ROLLBACK")
            throw LookUpStoredAndRetry()
        case .rollBack:
            try conn.execute("ROLLBACK")
        case .write(let rows, let head, let recordedAt):
            // The head is moved by the database (trigger `events_advance_head`, migration 0004),
            // which also checks that the rows follow the head and carry the server's clock.
            let finish: [Statement] = [
                Statement("SELECT pg_notify($1, $2)", [.text(channel), .text(String(head.position))], prepared: true),
                Statement("COMMIT"),
            ]
            do {
                if rows.count <= insertThreshold {
                    try conn.pipeline([insertStatement(rows, recordedAt: recordedAt, schema: s)] + finish)
                } else {
                    try conn.copyIn("COPY \(s).events (\(EventRows.insertColumns)) FROM STDIN", chunks: copyChunks(rows, recordedAt: recordedAt))
                    try conn.pipeline(finish)
                }
            } catch {
                if conn.isConnected { try? conn.execute("ROLLBACK") }
                throw error
            }
        }
        return plan.outcomes
    }

    /// Begins the transaction, locks the head and reads what the plan needs (in one pipeline).
    private static func readSnapshot(
        _ requests: [[PreparedEvent]], schema: String, lookUpStored: Bool, on conn: isolated PostgresConnection
    ) throws -> AppendSnapshot {
        let s = quoteIdentifier(schema)
        let events = requests.joined()
        let streams = Array(Set(events.map(\.event.stream)))
        var statements = [
            Statement("BEGIN"),
            // The writer may not lock the head row (that needs UPDATE on it): appends serialize on
            // a per-schema advisory lock instead; the trigger that moves the head locks the row.
            Statement("SELECT pg_advisory_xact_lock(4243, hashtext($1))", [.text("ledger-append:" + schema)], prepared: true),
            Statement("SELECT last_position, last_hash, last_recorded_at FROM \(s).log_head", prepared: true),
            Statement("SELECT clock_timestamp()", prepared: true),
            Statement("""
                SELECT st, (SELECT max(stream_version) FROM \(s).events WHERE stream_id = st)
                FROM unnest($1::text[]) AS st
                """, [.textArray(streams)], prepared: true),
        ]
        if lookUpStored {
            // One unique-index probe per id and per key, whatever the table's statistics say
            // (a prepared OR of two ANY() can settle on a sequential scan while the table is young).
            statements.append(Statement("""
                SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                FROM unnest($1::uuid[]) AS k(id) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE event_id = k.id) AS e
                UNION ALL
                SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE idempotency_key = k.key) AS e
                """, [.uuidArray(events.map { $0.event.eventId.lowercased }), .textArray(events.compactMap(\.event.idempotencyKey))], prepared: true))
        }
        let lookups: [QueryResult]
        do {
            lookups = try conn.pipeline(statements)
        } catch {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw error
        }
        let head = lookups[2]
        guard head.count == 1, let lastPosition = head.int64(0, 0), let lastHash = head.bytea(0, 1),
              let lastRecorded = head.string(0, 2).flatMap(Timestamp.init), let clock = lookups[3].string(0, 0).flatMap(Timestamp.init)
        else {
            try? conn.execute("ROLLBACK")
            throw LedgerError.migration("the log head of schema \(schema) is missing; run `ledger migrate`")
        }
        var versions: [String: Int64] = [:]
        let current = lookups[4]
        for r in 0..<current.count {
            if let v = current.int64(r, 1) { versions[current.string(r, 0)!] = v }
        }
        return AppendSnapshot(lastPosition: lastPosition, lastHash: lastHash, lastRecordedAt: lastRecorded, clock: clock,
                              streamVersions: versions, stored: lookUpStored ? storedEvents(lookups[5]) : nil)
    }

    private static func storedEvents(_ found: QueryResult) -> [StoredEvent] {
        (0..<found.count).map { r in
            StoredEvent(position: found.int64(r, 0)!, eventId: UUID(uuidString: found.string(r, 1)!)!, key: found.string(r, 2),
                        stream: found.string(r, 3)!, version: found.int64(r, 4)!, type: found.string(r, 5)!,
                        schemaVersion: Int32(found.string(r, 6)!)!, payloadText: found.string(r, 7)!)
        }
    }

    private static func insertStatement(_ rows: [PlannedRow], recordedAt: Timestamp, schema s: String) -> Statement {
        let recorded = recordedAt.iso8601
        return Statement("""
            INSERT INTO \(s).events (\(EventRows.insertColumns))
            SELECT * FROM unnest($1::int8[], $2::uuid[], $3::text[], $4::int8[], $5::text[], $6::int4[], $7::jsonb[],
                                 $8::jsonb[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::bytea[])
            """, [
                .int8Array(rows.map(\.position)),
                .uuidArray(rows.map { $0.prepared.event.eventId.lowercased }),
                .textArray(rows.map { $0.prepared.event.stream }),
                .int8Array(rows.map { $0.version }),
                .textArray(rows.map { $0.prepared.event.type }),
                .arrayOfLiterals(rows.map { String($0.prepared.event.schemaVersion) }, arrayOID: PostgresValue.OID.int4Array),
                .arrayOfLiterals(rows.map { $0.prepared.payloadText }, arrayOID: PostgresValue.OID.jsonbArray),
                .arrayOfLiterals(rows.map { $0.prepared.metadataText }, arrayOID: PostgresValue.OID.jsonbArray),
                .arrayOfLiterals(rows.map { $0.prepared.event.occurredAt.iso8601 }, arrayOID: PostgresValue.OID.timestamptzArray),
                .arrayOfLiterals(rows.map { _ in recorded }, arrayOID: PostgresValue.OID.timestamptzArray),
                .textArray(rows.map { $0.prepared.event.idempotencyKey }),
                .arrayOfLiterals(rows.map { "\\x" + $0.hash.hexString }, arrayOID: PostgresValue.OID.byteaArray),
            ], prepared: true)
    }

    /// COPY text rows, in chunks of about 256 KiB.
    private static func copyChunks(_ rows: [PlannedRow], recordedAt: Timestamp) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var out: [UInt8] = []
        out.reserveCapacity(300 * 1024)
        let recorded = Array(recordedAt.iso8601.utf8)
        for row in rows {
            let e = row.prepared.event
            EventRows.appendCopyRow(position: row.position, eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
                                    type: e.type, schemaVersion: e.schemaVersion, payloadText: row.prepared.payloadText,
                                    metadataText: row.prepared.metadataText, occurredAt: e.occurredAt, recordedAt: recorded,
                                    idempotencyKey: e.idempotencyKey, hash: row.hash, into: &out)
            if out.count >= 256 * 1024 {
                chunks.append(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { chunks.append(out) }
        return chunks
    }
}
