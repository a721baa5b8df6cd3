import Foundation
import LedgerCore
import LedgerPostgres

// The statements an append transaction sends (AppendTransaction.swift): the snapshot it reads, the
// claims, the pending or sealed rows, and their COPY chunks.
extension AppendTransaction {
    /// Begins the transaction, locks the head and reads what the plan needs (in one pipeline).
    static func readSnapshot(
        _ requests: [[PreparedEvent]], schema: String, lookUpStored: Bool, tryLock: Bool,
        on conn: isolated PostgresConnection
    ) throws -> (AppendSnapshot, transaction: String) {
        let s = quoteIdentifier(schema)
        let events = requests.joined()
        let streams = Array(Set(events.map(\.event.stream)))
        var statements = [
            Statement("BEGIN"),
            // Versions from the claims (sealed and pending events), read before anything is sealed.
            Statement(
                """
                SELECT st, (SELECT max(stream_version) FROM \(s).event_claims WHERE stream_id = st)
                FROM unnest($1::text[]) AS st
                """, [.textArray(streams)], prepared: true),
        ]
        let lock: Int? = tryLock ? statements.count : nil
        if tryLock {
            // The append lock if it is free, with what is pending sealed; false when another
            // session holds it (the group then commits as pending). Not tried when a sealer seals
            // (``Sealing/sealer``) and no request waits for its positions: the group commits as
            // pending. Before the head is read: the seal moves it.
            statements.append(Statement("SELECT \(s).try_seal_pending()", prepared: true))
        }
        let headAt = statements.count
        statements += [
            Statement("SELECT last_position, last_hash, last_recorded_at FROM \(s).log_head", prepared: true),
            // This transaction's id, to ask how it ended if the connection breaks.
            Statement("SELECT clock_timestamp(), pg_current_xact_id()::text", prepared: true),
        ]
        if lookUpStored {
            // One unique-index probe per id and per key, whatever the table's statistics say
            // (a prepared OR of two ANY() can settle on a sequential scan while the table is young).
            // Pending events (claims with content, not in `events`) have no position yet (0 here;
            // their sealed one comes from seal_events).
            statements.append(
                Statement(
                    """
                    SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                    FROM unnest($1::uuid[]) AS k(id) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE event_id = k.id) AS e
                    UNION ALL
                    SELECT e.position, e.event_id, e.idempotency_key, e.stream_id, e.stream_version, e.event_type, e.schema_version, e.payload::text
                    FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM \(s).events WHERE idempotency_key = k.key) AS e
                    UNION ALL
                    SELECT 0, p.event_id, p.idempotency_key, p.stream_id, p.stream_version, p.event_type, p.schema_version, p.payload::text
                    FROM unnest($1::uuid[]) AS k(id) CROSS JOIN LATERAL (SELECT * FROM \(s).event_claims WHERE event_id = k.id) AS p
                    WHERE p.payload IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(s).events WHERE event_id = p.event_id)
                    UNION ALL
                    SELECT 0, p.event_id, p.idempotency_key, p.stream_id, p.stream_version, p.event_type, p.schema_version, p.payload::text
                    FROM unnest($2::text[]) AS k(key) CROSS JOIN LATERAL (SELECT * FROM \(s).event_claims WHERE idempotency_key = k.key) AS p
                    WHERE p.payload IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(s).events WHERE event_id = p.event_id)
                    """,
                    [
                        .uuidArray(events.map { $0.event.eventId.lowercased }),
                        .textArray(events.compactMap(\.event.idempotencyKey)),
                    ], prepared: true))
        }
        let lookups: [QueryResult]
        do {
            lookups = try conn.pipeline(statements)
        } catch {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw error
        }
        let head = lookups[headAt]
        guard head.count == 1, let lastPosition = head.int64(0, 0), let lastHash = head.bytea(0, 1),
            let lastRecorded = head.string(0, 2).flatMap(Timestamp.init),
            let clock = lookups[headAt + 1].string(0, 0).flatMap(Timestamp.init),
            let transaction = lookups[headAt + 1].string(0, 1)
        else {
            try? conn.execute("ROLLBACK")
            throw LedgerError.migration("the log head of schema \(schema) is missing; run `ledger migrate`")
        }
        var versions: [String: Int64] = [:]
        let current = lookups[1]
        for r in 0..<current.count {
            if let v = current.int64(r, 1) { versions[current.string(r, 0)!] = v }
        }
        let snapshot = AppendSnapshot(
            lastPosition: lastPosition, lastHash: lastHash, lastRecordedAt: lastRecorded, clock: clock,
            streamVersions: versions, stored: lookUpStored ? storedEvents(lookups[headAt + 2]) : nil,
            holdsLock: lock.map { lookups[$0].bool(0, 0) == true } ?? false)
        return (snapshot, transaction)
    }

    static func storedEvents(_ found: QueryResult) -> [StoredEvent] {
        (0..<found.count).map { r in
            StoredEvent(
                position: found.int64(r, 0)!, eventId: UUID(uuidString: found.string(r, 1)!)!, key: found.string(r, 2),
                stream: found.string(r, 3)!, version: found.int64(r, 4)!, type: found.string(r, 5)!,
                schemaVersion: Int32(found.string(r, 6)!)!, payloadText: found.string(r, 7)!)
        }
    }

    /// The group's claims: ids, keys and stream versions, held by their unique constraints.
    static func claimStatement(_ rows: [PlannedRow], schema s: String) -> Statement {
        Statement(
            """
            INSERT INTO \(s).event_claims (event_id, idempotency_key, stream_id, stream_version)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int8[])
            """,
            [
                .uuidArray(rows.map { $0.prepared.event.eventId.lowercased }),
                .textArray(rows.map { $0.prepared.event.idempotencyKey }),
                .textArray(rows.map { $0.prepared.event.stream }),
                .int8Array(rows.map { $0.version }),
            ], prepared: true)
    }

    static let claimColumns = "event_id, idempotency_key, stream_id, stream_version"

    /// Claims (``claimColumns``) in COPY text format.
    static func claimChunks(_ rows: [PlannedRow]) -> [[UInt8]] {
        chunked(rows) { row, out in
            let e = row.prepared.event
            out.append(contentsOf: e.eventId.lowercased.utf8)
            out.append(0x09)
            CopyText.appendEscaped(e.idempotencyKey, into: &out)
            out.append(0x09)
            CopyText.appendEscaped(e.stream, into: &out)
            out.append(0x09)
            out.append(contentsOf: String(row.version).utf8)
            out.append(0x0A)
        }
    }

    static let pendingColumns = """
        event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, occurred_at, idempotency_key
        """

    /// Pending events: each is its claim, with its content (``pendingColumns``); the claim's seq and
    /// writer_xid come from their defaults.
    static func pendingStatement(_ rows: [PlannedRow], schema s: String) -> Statement {
        Statement(
            """
            INSERT INTO \(s).event_claims (\(pendingColumns))
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::jsonb[], $7::jsonb[],
                                 $8::timestamptz[], $9::text[])
            """, contentParameters(rows) + [.textArray(rows.map { $0.prepared.event.idempotencyKey })], prepared: true)
    }

    /// The parameters both inserts share: event id, stream, version, type, schema version, payload,
    /// metadata and occurredAt, one array each.
    static func contentParameters(_ rows: [PlannedRow]) -> [PostgresValue] {
        [
            .uuidArray(rows.map { $0.prepared.event.eventId.lowercased }),
            .textArray(rows.map { $0.prepared.event.stream }),
            .int8Array(rows.map { $0.version }),
            .textArray(rows.map { $0.prepared.event.type }),
            .arrayOfLiterals(
                rows.map { String($0.prepared.event.schemaVersion) }, arrayOID: PostgresValue.OID.int4Array),
            .arrayOfLiterals(rows.map { $0.prepared.payloadText }, arrayOID: PostgresValue.OID.jsonbArray),
            .arrayOfLiterals(rows.map { $0.prepared.metadataText }, arrayOID: PostgresValue.OID.jsonbArray),
            .arrayOfLiterals(
                rows.map { $0.prepared.event.occurredAt.iso8601 }, arrayOID: PostgresValue.OID.timestamptzArray),
        ]
    }

    /// Pending claims (``pendingColumns``) in COPY text format.
    static func pendingChunks(_ rows: [PlannedRow]) -> [[UInt8]] {
        chunked(rows) { row, out in
            let e = row.prepared.event
            out.append(contentsOf: e.eventId.lowercased.utf8)
            out.append(0x09)
            CopyText.appendEscaped(e.stream, into: &out)
            out.append(0x09)
            out.append(contentsOf: String(row.version).utf8)
            out.append(0x09)
            out.append(contentsOf: e.type.utf8)
            out.append(0x09)
            out.append(contentsOf: String(e.schemaVersion).utf8)
            out.append(0x09)
            CopyText.appendEscaped(row.prepared.payloadText, into: &out)
            out.append(0x09)
            CopyText.appendEscaped(row.prepared.metadataText, into: &out)
            out.append(0x09)
            out.append(contentsOf: e.occurredAt.iso8601.utf8)
            out.append(0x09)
            CopyText.appendEscaped(e.idempotencyKey, into: &out)
            out.append(0x0A)
        }
    }

    static func insertStatement(_ rows: [PlannedRow], recordedAt: Timestamp, schema s: String) -> Statement {
        let recorded = recordedAt.iso8601
        return Statement(
            """
            INSERT INTO \(s).events (\(EventRows.insertColumns))
            SELECT * FROM unnest($1::int8[], $2::uuid[], $3::text[], $4::int8[], $5::text[], $6::int4[], $7::jsonb[],
                                 $8::jsonb[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::bytea[])
            """,
            [.int8Array(rows.map(\.position))] + contentParameters(rows) + [
                .arrayOfLiterals(rows.map { _ in recorded }, arrayOID: PostgresValue.OID.timestamptzArray),
                .textArray(rows.map { $0.prepared.event.idempotencyKey }),
                .arrayOfLiterals(rows.map { "\\x" + $0.hash.hexString }, arrayOID: PostgresValue.OID.byteaArray),
            ], prepared: true)
    }

    /// `events` rows in COPY text format.
    static func copyChunks(_ rows: [PlannedRow], recordedAt: Timestamp) -> [[UInt8]] {
        let recorded = Array(recordedAt.iso8601.utf8)
        return chunked(rows) { row, out in
            let e = row.prepared.event
            EventRows.appendCopyRow(
                position: row.position, eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
                type: e.type, schemaVersion: e.schemaVersion, payloadText: row.prepared.payloadText,
                metadataText: row.prepared.metadataText, occurredAt: e.occurredAt, recordedAt: recorded,
                idempotencyKey: e.idempotencyKey, hash: row.hash, into: &out)
        }
    }

    /// COPY text rows written by `row`, in chunks of about 256 KiB.
    static func chunked(_ rows: [PlannedRow], _ row: (PlannedRow, inout [UInt8]) -> Void) -> [[UInt8]] {
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
