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

/// One append transaction for a group of independent requests (group commit).
///
/// Under the head-row lock (`SELECT ... FOR UPDATE`, held to COMMIT) appends are serialized, so
/// positions are assigned in commit order with no gaps: a reader that has seen position N has seen
/// everything before it. Duplicate and version checks run under the same lock and are backed by
/// the unique and foreign-key constraints of `events`, which stay the final word for any writer.
enum AppendTransaction {
    /// Groups at most this many events use one multi-row INSERT; larger ones use COPY.
    static let insertThreshold = 32

    private struct Stored {
        var position: Int64
        var eventId: UUID
        var key: String?
        var stream: String
        var version: Int64
        var type: String
        var schemaVersion: Int32
        var payloadText: String
    }

    /// Where a retried event already is: stored, or earlier in this group (index into `newRows`).
    private enum Match {
        case stored(Stored)
        case pending(Int)
    }

    private struct NewRow {
        var prepared: PreparedEvent
        var version: Int64
    }

    private enum Slot {
        case stored(Stored)
        case new(Int)
    }

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
        var ids: [String] = []
        var keys: [String?] = []
        var streams = Set<String>()
        for request in requests {
            for p in request {
                ids.append(p.event.eventId.lowercased)
                if let k = p.event.idempotencyKey { keys.append(k) }
                streams.insert(p.event.stream)
            }
        }
        let streamList = Array(streams)
        var statements = [
            Statement("BEGIN"),
            Statement("SELECT last_position, last_hash, last_recorded_at FROM \(s).log_head FOR UPDATE", prepared: true),
            Statement("SELECT clock_timestamp()", prepared: true),
            Statement("""
                SELECT st, (SELECT max(stream_version) FROM \(s).events WHERE stream_id = st)
                FROM unnest($1::text[]) AS st
                """, [.textArray(streamList)], prepared: true),
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
                """, [.uuidArray(ids), .textArray(keys)], prepared: true))
        }
        let lookups: [QueryResult]
        do {
            lookups = try conn.pipeline(statements)
        } catch {
            if conn.isConnected { try? conn.execute("ROLLBACK") }
            throw error
        }
        let head = lookups[1]
        guard head.count == 1, let lastPosition = head.int64(0, 0), let lastHash = head.bytea(0, 1),
              let lastRecorded = head.string(0, 2).flatMap(Timestamp.init), let clock = lookups[2].string(0, 0).flatMap(Timestamp.init)
        else {
            try? conn.execute("ROLLBACK")
            throw LedgerError.migration("the log head of schema \(schema) is missing; run `ledger migrate`")
        }
        var byId: [UUID: Stored] = [:]
        // Keys are compared as bytes, as PostgreSQL's unique index does.
        var byKey: [[UInt8]: Stored] = [:]
        let found = lookUpStored ? lookups[4] : QueryResult()
        for r in 0..<found.count {
            let stored = Stored(
                position: found.int64(r, 0)!, eventId: UUID(uuidString: found.string(r, 1)!)!, key: found.string(r, 2),
                stream: found.string(r, 3)!, version: found.int64(r, 4)!, type: found.string(r, 5)!,
                schemaVersion: Int32(found.string(r, 6)!)!, payloadText: found.string(r, 7)!)
            byId[stored.eventId] = stored
            if let k = stored.key { byKey[Array(k.utf8)] = stored }
        }
        var versions: [String: Int64] = [:]
        let current = lookups[3]
        for r in 0..<current.count {
            if let v = current.int64(r, 1) { versions[current.string(r, 0)!] = v }
        }

        // Decide each request in order, as if each were its own transaction.
        var newRows: [NewRow] = []
        var pendingById: [UUID: Int] = [:]
        var pendingByKey: [[UInt8]: Int] = [:]
        var slotsPerRequest: [[Slot]?] = []
        var results: [Result<[AppendedEvent], LedgerError>?] = []
        for request in requests {
            var overlay: [String: Int64] = [:]
            var localRows: [NewRow] = []
            var localById: [UUID: Int] = [:]
            var localByKey: [[UInt8]: Int] = [:]
            var slots: [Slot] = []
            var failure: LedgerError?
            for p in request {
                let e = p.event
                func lookup(_ id: UUID?, _ key: String?) -> Match? {
                    if let id {
                        if let s = byId[id] { return .stored(s) }
                        if let i = pendingById[id] { return .pending(i) }
                        if let i = localById[id] { return .pending(newRows.count + i) }
                    }
                    if let key = key.map({ Array($0.utf8) }) {
                        if let s = byKey[key] { return .stored(s) }
                        if let i = pendingByKey[key] { return .pending(i) }
                        if let i = localByKey[key] { return .pending(newRows.count + i) }
                    }
                    return nil
                }
                let byIdMatch = lookup(e.eventId, nil)
                let byKeyMatch = e.idempotencyKey.flatMap { lookup(nil, $0) }
                if byIdMatch != nil || byKeyMatch != nil {
                    func describe(_ m: Match) -> (Int64, UUID, String?, String, String, Int32, String) {
                        switch m {
                        case .stored(let s): return (s.position, s.eventId, s.key, s.stream, s.type, s.schemaVersion, s.payloadText)
                        case .pending(let i):
                            let row = i < newRows.count ? newRows[i] : localRows[i - newRows.count]
                            let pe = row.prepared
                            return (0, pe.event.eventId, pe.event.idempotencyKey, pe.event.stream, pe.event.type, pe.event.schemaVersion, pe.payloadText)
                        }
                    }
                    let m = byIdMatch ?? byKeyMatch!
                    let d = describe(m)
                    var reason: String?
                    if let a = byIdMatch, let b = byKeyMatch, describe(a).1 != describe(b).1 {
                        reason = "the event id and the idempotency key belong to two different stored events"
                    } else if byIdMatch != nil, !sameBytes(d.2, e.idempotencyKey) {
                        reason = "stored with idempotency key \(d.2.map { "\"\($0)\"" } ?? "none"), retried with \(e.idempotencyKey.map { "\"\($0)\"" } ?? "none")"
                    } else if !sameBytes(d.3, e.stream) {
                        reason = "stored on stream \"\(d.3)\", retried on \"\(e.stream)\""
                    } else if d.4 != e.type || d.5 != e.schemaVersion {
                        reason = "stored as \(d.4) v\(d.5), retried as \(e.type) v\(e.schemaVersion)"
                    } else if !sameBytes(d.6, p.payloadText) {
                        reason = "the payload differs"
                    }
                    if let reason {
                        failure = .idempotencyConflict(key: byKeyMatch != nil ? e.idempotencyKey : nil, eventId: e.eventId,
                                                       storedPosition: d.0, reason: reason)
                        break
                    }
                    switch m {
                    case .stored(let st): slots.append(.stored(st))
                    case .pending(let i): slots.append(.new(i))
                    }
                    continue
                }
                let currentVersion: Int64? = overlay[e.stream] ?? versions[e.stream]
                switch e.expectedVersion {
                case .any: break
                case .noStream:
                    if currentVersion != nil { failure = .versionConflict(stream: e.stream, expected: .noStream, actual: currentVersion, eventId: e.eventId) }
                case .exact(let v):
                    if currentVersion != v { failure = .versionConflict(stream: e.stream, expected: .exact(v), actual: currentVersion, eventId: e.eventId) }
                }
                if failure != nil { break }
                let version = (currentVersion ?? -1) + 1
                overlay[e.stream] = version
                localById[e.eventId] = localRows.count
                if let k = e.idempotencyKey { localByKey[Array(k.utf8)] = localRows.count }
                slots.append(.new(newRows.count + localRows.count))
                localRows.append(NewRow(prepared: p, version: version))
            }
            if let failure {
                results.append(.failure(failure))
                slotsPerRequest.append(nil)
                continue
            }
            for (stream, v) in overlay { versions[stream] = v }
            for (id, i) in localById { pendingById[id] = newRows.count + i }
            for (k, i) in localByKey { pendingByKey[k] = newRows.count + i }
            newRows.append(contentsOf: localRows)
            slotsPerRequest.append(slots)
            results.append(nil)
        }

        if !lookUpStored, results.contains(where: { if case .failure = $0 { return true }; return false }) {
            try conn.execute("ROLLBACK")
            throw LookUpStoredAndRetry()
        }
        if newRows.isEmpty {
            try conn.execute("ROLLBACK")
        } else {
            // Positions, database time and the hash chain, in commit order.
            let recordedAt = max(clock, lastRecorded)
            var previous = lastHash
            var hashes: [[UInt8]] = []
            hashes.reserveCapacity(newRows.count)
            for (i, row) in newRows.enumerated() {
                let e = row.prepared.event
                let canonical = EventChain.canonicalBytes(
                    position: lastPosition + 1 + Int64(i), eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
                    type: e.type, schemaVersion: e.schemaVersion, occurredAt: e.occurredAt, recordedAt: recordedAt,
                    idempotencyKey: e.idempotencyKey, payloadText: row.prepared.payloadText, metadataText: row.prepared.metadataText)
                previous = EventChain.hash(previous: previous, canonical: canonical)
                hashes.append(previous)
            }
            let newLast = lastPosition + Int64(newRows.count)
            let finish: [Statement] = [
                Statement("UPDATE \(s).log_head SET last_position = $1, last_hash = $2, last_recorded_at = $3",
                          [.int8(newLast), .bytea(previous), .timestamptz(microsecondsSince1970: recordedAt.microseconds)], prepared: true),
                Statement("SELECT pg_notify($1, $2)", [.text(channel), .text(String(newLast))], prepared: true),
                Statement("COMMIT"),
            ]
            do {
                if newRows.count <= insertThreshold {
                    try conn.pipeline([insertStatement(newRows, hashes, firstPosition: lastPosition + 1, recordedAt: recordedAt, schema: s)] + finish)
                } else {
                    try conn.copyIn("COPY \(s).events (\(EventRows.insertColumns)) FROM STDIN",
                                    chunks: copyChunks(newRows, hashes, firstPosition: lastPosition + 1, recordedAt: recordedAt))
                    try conn.pipeline(finish)
                }
            } catch {
                if conn.isConnected { try? conn.execute("ROLLBACK") }
                throw error
            }
        }

        return zip(results, slotsPerRequest).map { result, slots in
            if let result { return result }
            return .success(slots!.map { slot in
                switch slot {
                case .stored(let st):
                    return AppendedEvent(eventId: st.eventId, stream: st.stream, version: st.version, position: st.position, alreadyStored: true)
                case .new(let i):
                    let row = newRows[i]
                    return AppendedEvent(eventId: row.prepared.event.eventId, stream: row.prepared.event.stream, version: row.version,
                                         position: lastPosition + 1 + Int64(i), alreadyStored: false)
                }
            })
        }
    }

    /// Byte equality (Swift's String == treats canonically equivalent text as equal; PostgreSQL does not).
    private static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return a.utf8.elementsEqual(b.utf8)
        default: return false
        }
    }

    private static func insertStatement(_ rows: [NewRow], _ hashes: [[UInt8]], firstPosition: Int64, recordedAt: Timestamp, schema s: String) -> Statement {
        let recorded = recordedAt.iso8601
        return Statement("""
            INSERT INTO \(s).events (\(EventRows.insertColumns))
            SELECT * FROM unnest($1::int8[], $2::uuid[], $3::text[], $4::int8[], $5::text[], $6::int4[], $7::jsonb[],
                                 $8::jsonb[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::bytea[])
            """, [
                .int8Array(rows.indices.map { firstPosition + Int64($0) }),
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
                .arrayOfLiterals(hashes.map { "\\x" + $0.hexString }, arrayOID: PostgresValue.OID.byteaArray),
            ], prepared: true)
    }

    /// COPY text rows, in chunks of about 256 KiB.
    private static func copyChunks(_ rows: [NewRow], _ hashes: [[UInt8]], firstPosition: Int64, recordedAt: Timestamp) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var out: [UInt8] = []
        out.reserveCapacity(300 * 1024)
        let recorded = Array(recordedAt.iso8601.utf8)
        for (i, row) in rows.enumerated() {
            let e = row.prepared.event
            EventRows.appendCopyRow(position: firstPosition + Int64(i), eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
                                    type: e.type, schemaVersion: e.schemaVersion, payloadText: row.prepared.payloadText,
                                    metadataText: row.prepared.metadataText, occurredAt: e.occurredAt, recordedAt: recorded,
                                    idempotencyKey: e.idempotencyKey, hash: hashes[i], into: &out)
            if out.count >= 256 * 1024 {
                chunks.append(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { chunks.append(out) }
        return chunks
    }
}
