import Foundation
import LedgerCore

/// An event already in the log, as a retry is compared with it.
struct StoredEvent: Sendable, Hashable {
    /// 0 for an event committed but still pending (not yet sealed).
    var position: Int64
    var eventId: UUID
    var key: String?
    var stream: String
    var version: Int64
    var type: String
    var schemaVersion: Int32
    var payloadText: String
}

/// What an append transaction read (the head under the append lock when it holds it): everything
/// its decisions depend on.
struct AppendSnapshot: Sendable {
    var lastPosition: Int64
    var lastHash: [UInt8]
    var lastRecordedAt: Timestamp
    /// The database clock when the transaction began.
    var clock: Timestamp
    /// The current version of each of the group's streams that exists.
    var streamVersions: [String: Int64]
    /// The stored events carrying one of the group's event ids or idempotency keys; nil on the fast
    /// path, which does not look for them and lets the unique constraints find retries.
    var stored: [StoredEvent]?
    /// Whether this transaction holds the append lock (it was free): the rows go straight into
    /// `events` at the positions planned; otherwise they are claimed with their content (pending) and the planned
    /// positions are replaced by the sealed ones.
    var holdsLock = true
}

/// The log's head after a write.
struct LogHead: Sendable, Hashable {
    var position: Int64
    var hash: [UInt8]
    var recordedAt: Timestamp
}

/// One new row of `events`, with everything computed (for a pending row, position 0 and no hash:
/// the sealer gives them).
struct PlannedRow: Sendable {
    var prepared: PreparedEvent
    var position: Int64
    var version: Int64
    var hash: [UInt8]
}

/// The decisions of one group append, as a value computed without a database: for each request
/// its outcome (the events' positions, already stored or new, or a typed conflict), and what the
/// transaction must do. ``AppendTransaction`` reads the snapshot and runs the step.
///
/// Requests are decided in order as if each were its own transaction: a refused request writes
/// nothing and changes nothing for the requests after it.
struct AppendPlan: Sendable {
    enum Step: Sendable {
        /// On the fast path a request failed a check; it may be a retry of stored events (whose
        /// expected version no longer holds), so roll back and plan again with them looked up.
        case lookUpStored
        /// Nothing new to write (all stored already, or all refused): roll back, then answer.
        case rollBack
        /// Insert the rows (positions, versions and hashes in commit order), move the head to
        /// `head`, notify, commit; then answer.
        case write(rows: [PlannedRow], head: LogHead, recordedAt: Timestamp)
    }

    var step: Step
    /// Each request's outcome, in request order; final unless `step` is ``Step/lookUpStored``.
    var outcomes: [Result<[AppendedEvent], LedgerError>]

    init(requests: [[PreparedEvent]], snapshot: AppendSnapshot) {
        var decider = RequestDecider(snapshot)
        let decided = requests.map { decider.decide($0) }
        let firstPosition = snapshot.lastPosition + 1
        let recordedAt = max(snapshot.clock, snapshot.lastRecordedAt)
        var rows: [PlannedRow] = []
        rows.reserveCapacity(decider.newRows.count)
        var previous = snapshot.lastHash
        for (i, row) in decider.newRows.enumerated() {
            // Without the lock the rows go to pending: the sealer gives positions and hashes.
            guard snapshot.holdsLock else {
                rows.append(PlannedRow(prepared: row.prepared, position: 0, version: row.version, hash: []))
                continue
            }
            let position = firstPosition + Int64(i)
            previous = EventChain.hash(
                previous: previous, canonical: Self.canonicalBytes(row, position: position, recordedAt: recordedAt))
            rows.append(PlannedRow(prepared: row.prepared, position: position, version: row.version, hash: previous))
        }
        // A row is new for the first event that asked for it; the same event again in this group
        // (two identical lines of one batch) is already stored by then.
        var reported = Set<Int>()
        outcomes = decided.map { result in
            result.map { slots in
                slots.map { slot in
                    switch slot {
                    case .stored(let s):
                        return AppendedEvent(
                            eventId: s.eventId, stream: s.stream, version: s.version, position: s.position,
                            alreadyStored: true)
                    case .new(let i):
                        let row = rows[i]
                        return AppendedEvent(
                            eventId: row.prepared.event.eventId, stream: row.prepared.event.stream,
                            version: row.version,
                            position: row.position, alreadyStored: !reported.insert(i).inserted)
                    }
                }
            }
        }
        let refused = decided.contains { if case .failure = $0 { return true } else { return false } }
        if snapshot.stored == nil, refused {
            step = .lookUpStored
        } else if let last = rows.last {
            step = .write(
                rows: rows, head: LogHead(position: last.position, hash: last.hash, recordedAt: recordedAt),
                recordedAt: recordedAt)
        } else {
            step = .rollBack
        }
    }

    static func canonicalBytes(_ row: RequestDecider.NewRow, position: Int64, recordedAt: Timestamp) -> [UInt8] {
        let e = row.prepared.event
        return EventChain.canonicalBytes(
            position: position, eventId: e.eventId.lowercased, stream: e.stream, version: row.version,
            type: e.type, schemaVersion: e.schemaVersion, occurredAt: e.occurredAt, recordedAt: recordedAt,
            idempotencyKey: e.idempotencyKey, payloadText: row.prepared.payloadText,
            metadataText: row.prepared.metadataText)
    }
}

/// Decides a group's requests one after another, remembering what earlier requests added.
struct RequestDecider {
    struct NewRow {
        var prepared: PreparedEvent
        var version: Int64
    }

    /// Where an event of a request ends up: already stored, or the group's new row at this index.
    enum Slot {
        case stored(StoredEvent)
        case new(Int)
    }

    /// The original of a retried event: stored, or new earlier in this group.
    struct Original {
        var position: Int64
        var eventId: UUID
        var key: String?
        var stream: String
        var type: String
        var schemaVersion: Int32
        var payloadText: String
        var slot: Slot
    }

    /// The rows of the requests accepted so far, in commit order.
    private(set) var newRows: [NewRow] = []
    private var versions: [String: Int64]
    private var storedById: [UUID: StoredEvent] = [:]
    // Keys are compared as bytes, as PostgreSQL's unique index does.
    private var storedByKey: [[UInt8]: StoredEvent] = [:]
    private var newById: [UUID: Int] = [:]
    private var newByKey: [[UInt8]: Int] = [:]
    /// The position the group's first new row takes; nil when the rows go to pending (the sealer
    /// gives positions).
    private let firstPosition: Int64?
    /// The first new row of the request being decided (rows before it belong to accepted requests).
    private var requestStart = 0

    init(_ snapshot: AppendSnapshot) {
        firstPosition = snapshot.holdsLock ? snapshot.lastPosition + 1 : nil
        versions = snapshot.streamVersions
        for s in snapshot.stored ?? [] {
            storedById[s.eventId] = s
            if let k = s.key { storedByKey[Array(k.utf8)] = s }
        }
    }

    /// Decides one request; when accepted, its new rows join the group, and when refused the
    /// group is as it was before it.
    mutating func decide(_ request: [PreparedEvent]) -> Result<[Slot], LedgerError> {
        let start = newRows.count
        requestStart = start
        var versionsBefore: [String: Int64?] = [:]
        var slots: [Slot] = []
        for p in request {
            switch decide(p, versionsBefore: &versionsBefore) {
            case .success(let slot): slots.append(slot)
            case .failure(let error):
                undo(from: start, versionsBefore: versionsBefore)
                return .failure(error)
            }
        }
        return .success(slots)
    }

    private mutating func decide(
        _ p: PreparedEvent, versionsBefore: inout [String: Int64?]
    ) -> Result<Slot, LedgerError> {
        let e = p.event
        let byId = original(id: e.eventId)
        let byKey = e.idempotencyKey.flatMap { original(key: $0) }
        if let original = byId ?? byKey {
            if let reason = Self.retryConflict(byId: byId, byKey: byKey, event: e, payloadText: p.payloadText) {
                return .failure(
                    .idempotencyConflict(
                        key: byKey != nil ? e.idempotencyKey : nil, eventId: e.eventId,
                        storedPosition: original.position, reason: reason))
            }
            return .success(original.slot)
        }
        let current = versions[e.stream]
        switch e.expectedVersion {
        case .any: break
        case .noStream:
            if current != nil {
                return .failure(
                    .versionConflict(stream: e.stream, expected: .noStream, actual: current, eventId: e.eventId))
            }
        case .exact(let v):
            if current != v {
                return .failure(
                    .versionConflict(stream: e.stream, expected: .exact(v), actual: current, eventId: e.eventId))
            }
        }
        if versionsBefore.index(forKey: e.stream) == nil { versionsBefore[e.stream] = .some(current) }
        let index = newRows.count
        versions[e.stream] = (current ?? -1) + 1
        newById[e.eventId] = index
        if let k = e.idempotencyKey { newByKey[Array(k.utf8)] = index }
        newRows.append(NewRow(prepared: p, version: (current ?? -1) + 1))
        return .success(.new(index))
    }

    /// Forgets the rows from `start` on (their ids and keys were new: a known one is a retry).
    private mutating func undo(from start: Int, versionsBefore: [String: Int64?]) {
        for row in newRows[start...] {
            newById[row.prepared.event.eventId] = nil
            if let k = row.prepared.event.idempotencyKey { newByKey[Array(k.utf8)] = nil }
        }
        newRows.removeSubrange(start...)
        for (stream, version) in versionsBefore { versions[stream] = version }
    }

    private func original(id: UUID) -> Original? {
        if let s = storedById[id] { return Self.original(s) }
        return newById[id].map(original(row:))
    }

    private func original(key: String) -> Original? {
        let bytes = Array(key.utf8)
        if let s = storedByKey[bytes] { return Self.original(s) }
        return newByKey[bytes].map(original(row:))
    }

    private static func original(_ s: StoredEvent) -> Original {
        Original(
            position: s.position, eventId: s.eventId, key: s.key, stream: s.stream, type: s.type,
            schemaVersion: s.schemaVersion, payloadText: s.payloadText, slot: .stored(s))
    }

    /// A row of a request accepted earlier in the group has its position (unless the group goes to
    /// pending); a row of the same request (the batch repeats an id or key) has none, reported as
    /// position 0.
    private func original(row i: Int) -> Original {
        let p = newRows[i].prepared
        return Original(
            position: i < requestStart ? firstPosition.map { $0 + Int64(i) } ?? 0 : 0, eventId: p.event.eventId,
            key: p.event.idempotencyKey, stream: p.event.stream, type: p.event.type,
            schemaVersion: p.event.schemaVersion, payloadText: p.payloadText, slot: .new(i))
    }

    /// Why a retry is not the same event as its original (nil when it is).
    static func retryConflict(byId: Original?, byKey: Original?, event e: NewEvent, payloadText: String) -> String? {
        guard let d = byId ?? byKey else { return nil }
        if let a = byId, let b = byKey, a.eventId != b.eventId {
            return "the event id and the idempotency key belong to two different stored events"
        } else if byId != nil, !sameBytes(d.key, e.idempotencyKey) {
            return
                "stored with idempotency key \(d.key.map { "\"\(Echo.shown($0))\"" } ?? "none"), retried with \(e.idempotencyKey.map { "\"\(Echo.shown($0))\"" } ?? "none")"
        } else if !sameBytes(d.stream, e.stream) {
            return "stored on stream \"\(d.stream)\", retried on \"\(e.stream)\""
        } else if d.type != e.type || d.schemaVersion != e.schemaVersion {
            return "stored as \(d.type) v\(d.schemaVersion), retried as \(e.type) v\(e.schemaVersion)"
        } else if !sameBytes(d.payloadText, payloadText) {
            return "the payload differs"
        }
        return nil
    }

    /// Byte equality (Swift's String == treats canonically equivalent text as equal; PostgreSQL does not).
    static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return a.utf8.elementsEqual(b.utf8)
        default: return false
        }
    }
}
