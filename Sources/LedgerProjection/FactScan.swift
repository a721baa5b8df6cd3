import Foundation
import LedgerCore
import LedgerLog
import LedgerDomain
import LedgerPostgres

/// One stored fact as the projections need it: no ids, hashes or metadata.
public struct ScannedFact: Sendable {
    public var position: Int64
    public var type: String
    public var schemaVersion: Int32
    public var occurredAt: Timestamp
    /// The decoded fact, or why it does not decode.
    public var fact: Result<Fact, FactError>

    public init(
        position: Int64, type: String, schemaVersion: Int32, occurredAt: Timestamp, fact: Result<Fact, FactError>
    ) {
        self.position = position
        self.type = type
        self.schemaVersion = schemaVersion
        self.occurredAt = occurredAt
        self.fact = fact
    }

    /// The fact, moved out of this one (a fold that keeps no scanned fact takes it whole).
    consuming func takeFact() -> Result<Fact, FactError> { fact }

    /// A whole stored event, decoded.
    public init(_ event: RecordedEvent) {
        let fact: Result<Fact, FactError>
        do throws(FactError) { fact = .success(try FactCatalogue.decode(event)) } catch { fact = .failure(error) }
        self.init(
            position: event.position, type: event.type, schemaVersion: event.schemaVersion,
            occurredAt: event.occurredAt, fact: fact)
    }
}

/// Stored facts as read, their payloads not yet decoded: what the reading thread hands to the
/// decoding one, a batch at a time. The payloads' bytes lie in one buffer per batch: a buffer per
/// row was allocated on the reading thread and freed on the decoding one, and the two threads'
/// contention on the allocator took about a fifth of the reading thread and a tenth of the decoding
/// one (`perf`, 1 M facts).
struct ScannedRows: Sendable {
    /// One row: its payload's JSON text is `bytes[payload]`.
    struct Row: Sendable {
        var position: Int64
        var type: String
        var schemaVersion: Int32
        var occurredAt: Timestamp
        var payload: Range<Int>
    }

    /// A batch is handed over once it holds this many rows or this many payload bytes.
    static let rowLimit = 2_048
    static let byteLimit = 1 << 20

    private(set) var rows: [Row] = []
    private(set) var bytes: [UInt8] = []

    /// Room for a sixteenth of a full batch, made when its first row comes; a long scan's batches
    /// grow from there (four doublings), and a scan of a few rows, as a projector following the
    /// log makes, takes little more than it needs.
    private mutating func reserve() {
        rows.reserveCapacity(Self.rowLimit / 16)
        bytes.reserveCapacity(Self.byteLimit / 16)
    }

    var count: Int { rows.count }
    var isFull: Bool { rows.count >= Self.rowLimit || bytes.count >= Self.byteLimit }

    mutating func append(
        position: Int64, type: String, schemaVersion: Int32, occurredAt: Timestamp, payload: UnsafeRawBufferPointer
    ) {
        if rows.isEmpty { reserve() }
        let start = bytes.count
        bytes.append(contentsOf: payload)
        rows.append(
            Row(
                position: position, type: type, schemaVersion: schemaVersion, occurredAt: occurredAt,
                payload: start..<bytes.count))
    }

    /// `shared`: where strings that many facts repeat are shared (one per decoding thread).
    func decoded(shared: SharedStrings? = nil) -> [ScannedFact] {
        rows.map { row in
            ScannedFact(
                position: row.position, type: row.type, schemaVersion: row.schemaVersion, occurredAt: row.occurredAt,
                fact: FactRowDecoder.fact(
                    type: row.type, schemaVersion: row.schemaVersion, json: bytes, range: row.payload, shared: shared))
        }
    }
}

/// Gathers rows into ``ScannedRows`` and hands each full batch (and the last one) to `body`.
struct RowBatcher {
    private var batch = ScannedRows()
    private let body: (ScannedRows) throws -> Void

    init(_ body: @escaping (ScannedRows) throws -> Void) { self.body = body }

    mutating func append(
        position: Int64, type: String, schemaVersion: Int32, occurredAt: Timestamp, payload: UnsafeRawBufferPointer
    ) throws {
        batch.append(
            position: position, type: type, schemaVersion: schemaVersion, occurredAt: occurredAt, payload: payload)
        if batch.isFull { try flush() }
    }

    /// Hands over the rows gathered since the last batch, if any.
    mutating func flush() throws {
        guard batch.count > 0 else { return }
        let full = batch
        batch = ScannedRows()
        try body(full)
    }
}

/// Decodes rows of `COPY (SELECT position, event_type, schema_version, occurred_at, payload) TO
/// STDOUT (FORMAT binary)`: integers and the timestamp as their bytes, the payload as jsonb's binary
/// form (a version byte, then the same text `payload::text` gives), nothing to unescape.
struct FactRowDecoder {
    static let columns = "position, event_type, schema_version, occurred_at, payload"
    static let knownTypes: [(bytes: [UInt8], name: String)] = FactCatalogue.typeNames.sorted().map {
        (Array($0.utf8), $0)
    }

    /// Adds the row to `rows`, its payload's text copied into the batch's buffer.
    static func row(_ raw: UnsafeRawBufferPointer, _ f: [CopyBinary.Field], into rows: inout RowBatcher) throws {
        guard f.count == 5, f[0].length == 8, !f[1].isNull, f[2].length == 4, f[3].length == 8,
            let payload = Self.jsonbText(raw, f[4])
        else {
            throw unexpectedRow(raw, f, columns: columns)
        }
        let position = CopyBinary.int64(raw, f[0].start)
        try rows.append(
            position: position, type: Self.typeName(Self.bytes(raw, f[1])),
            schemaVersion: CopyBinary.int32(raw, f[2].start),
            occurredAt: Timestamp(microsecondsSince1970: try Self.microseconds(raw, f[3], position: position)),
            payload: payload)
    }

    /// A row whose fields are not the types of the log's columns (`events` altered by hand, or a
    /// ledger this build has not migrated), named with its position when that much is readable.
    static func unexpectedRow(
        _ raw: UnsafeRawBufferPointer, _ f: [CopyBinary.Field], columns: String
    ) -> EventRows.DecodeError {
        let position =
            f.first.flatMap { $0.length == 8 ? " at position \(CopyBinary.int64(raw, $0.start))" : nil } ?? ""
        return EventRows.DecodeError(
            message: """
                the log's row\(position) does not have the types of the columns read (\(columns): bigint, uuid, text, \
                integer, timestamptz, jsonb and bytea as migrated): run `ledger migrate` with this build, and check that \
                no one altered the events table
                """)
    }

    /// A field's bytes (empty for NULL).
    static func bytes(_ raw: UnsafeRawBufferPointer, _ field: CopyBinary.Field) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: raw[field.start..<field.end])
    }

    /// The text of a jsonb field in binary form (version 1, then the text), nil if it is not one.
    static func jsonbText(_ raw: UnsafeRawBufferPointer, _ field: CopyBinary.Field) -> UnsafeRawBufferPointer? {
        guard field.length >= 1, raw[field.start] == 1 else { return nil }
        return UnsafeRawBufferPointer(rebasing: raw[field.start + 1..<field.end])
    }

    /// A binary timestamptz (microseconds since 2000-01-01) as microseconds since 1970-01-01;
    /// `infinity` and `-infinity` are refused.
    static func microseconds(_ raw: UnsafeRawBufferPointer, _ field: CopyBinary.Field, position: Int64) throws -> Int64
    {
        let micros = CopyBinary.int64(raw, field.start)
        guard micros != .max, micros != .min else {
            throw EventRows.DecodeError(
                message: """
                    the event at position \(position) has an infinite timestamp, which no append writes: the row was changed \
                    outside the ledger (`ledger verify-chain` names the first changed row)
                    """)
        }
        return micros + PostgresValue.postgresEpochOffset
    }

    /// The known type name spelled by these bytes (no new String for the usual ones).
    static func typeName(_ typeBytes: UnsafeRawBufferPointer) -> String {
        knownTypes.first { $0.bytes.count == typeBytes.count && $0.bytes.elementsEqual(typeBytes) }?.name
            ?? String(decoding: typeBytes, as: UTF8.self)
    }

    /// The fact a stored payload (its JSON text, `range` of `json`) holds, or why it does not decode.
    static func fact(
        type: String, schemaVersion: Int32, json: [UInt8], range: Range<Int>? = nil,
        shared: SharedStrings? = nil
    ) -> Result<Fact, FactError> {
        do throws(FactError) {
            return .success(
                try FactCatalogue.decode(
                    type: type, schemaVersion: schemaVersion, json: json, range: range, shared: shared))
        } catch {
            return .failure(error)
        }
    }
}

/// Reads the rows of the audit's one read of the log (binary COPY): each row's canonical bytes are
/// built straight from its stored fields and hashed onto the chain (``ChainVerifier``), and its
/// payload, within those bytes, is left for the decoding thread, with no ``RecordedEvent``, UUID or
/// date parsing in between.
struct ChainedFactRowDecoder {
    /// The columns, in the order ``row(_:_:)`` expects: the canonical fields first, in their
    /// canonical order, then metadata, the stored hash and the payload.
    static let columns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, occurred_at, recorded_at, \
        idempotency_key, metadata, hash, payload
        """
    private(set) var verifier = ChainVerifier()
    /// The previous event's hash and the row's canonical bytes (one buffer, reused).
    private var canonical: [UInt8] = []
    /// The row's event id as text (one buffer, reused).
    private var uuid: [UInt8] = []

    init() { canonical.reserveCapacity(1024) }

    /// The row hashed onto the chain and added to `rows`, its payload not yet decoded.
    mutating func row(_ raw: UnsafeRawBufferPointer, _ f: [CopyBinary.Field], into rows: inout RowBatcher) throws {
        guard f.count == 12, f[0].length == 8, f[1].length == 16, !f[2].isNull, f[3].length == 8, !f[4].isNull,
            f[5].length == 4, f[6].length == 8, f[7].length == 8, !f[10].isNull,
            let metadata = FactRowDecoder.jsonbText(raw, f[9]), let payloadText = FactRowDecoder.jsonbText(raw, f[11])
        else {
            throw FactRowDecoder.unexpectedRow(raw, f, columns: Self.columns)
        }
        let position = CopyBinary.int64(raw, f[0].start)
        let version = CopyBinary.int32(raw, f[5].start)
        let occurred = try FactRowDecoder.microseconds(raw, f[6], position: position)
        let recorded = try FactRowDecoder.microseconds(raw, f[7], position: position)
        // The previous event's hash, then the row's canonical bytes (EventChain's one layout, from
        // the row's bytes), hashed in one pass.
        canonical.removeAll(keepingCapacity: true)
        canonical.append(contentsOf: verifier.previous)
        uuidText(raw, at: f[1].start)
        EventChain.appendCanonical(
            to: &canonical, position: position, eventId: uuid, stream: FactRowDecoder.bytes(raw, f[2]),
            version: CopyBinary.int64(raw, f[3].start), type: FactRowDecoder.bytes(raw, f[4]),
            schemaVersion: Int64(version), occurredAt: occurred, recordedAt: recorded,
            idempotencyKey: f[8].isNull ? nil : FactRowDecoder.bytes(raw, f[8]), payload: payloadText,
            metadata: metadata)
        SHA256.withHash(canonical) {
            verifier.consume(position: position, expected: $0, stored: FactRowDecoder.bytes(raw, f[10]))
        }

        try rows.append(
            position: position, type: FactRowDecoder.typeName(FactRowDecoder.bytes(raw, f[4])), schemaVersion: version,
            occurredAt: Timestamp(microsecondsSince1970: occurred), payload: payloadText)
    }

    /// A binary UUID (16 bytes at `at`) in its lowercase text form (8-4-4-4-12 hexadecimal digits),
    /// into ``uuid`` (reused).
    private mutating func uuidText(_ raw: UnsafeRawBufferPointer, at: Int) {
        let digits: StaticString = "0123456789abcdef"
        uuid.removeAll(keepingCapacity: true)
        digits.withUTF8Buffer { hex in
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { uuid.append(UInt8(ascii: "-")) }
                let b = raw[at + i]
                uuid.append(hex[Int(b >> 4)])
                uuid.append(hex[Int(b & 0x0F)])
            }
        }
    }
}

extension LogReplay {
    /// Streams the facts after `after` through `through`, decoded for the projections, with
    /// `COPY ... TO STDOUT` (bounded memory). Reads only the columns a fold needs, so it runs close to
    /// the speed PostgreSQL sends rows. `body` runs on the connection's own thread.
    @discardableResult
    public func scanFacts(
        after: Int64 = 0, through: Int64? = nil, _ body: @escaping @Sendable (ScannedFact) throws -> Void
    ) async throws -> Int64 {
        try await scanRows(after: after, through: through) { rows in
            for fact in rows.decoded() { try body(fact) }
        }
    }

    /// ``scanFacts(after:through:_:)`` with the payloads left undecoded (for another thread to decode),
    /// handed to `body` a batch at a time.
    @discardableResult
    func scanRows(
        after: Int64, through: Int64?, _ body: @escaping @Sendable (ScannedRows) throws -> Void
    ) async throws -> Int64 {
        let s = quoteIdentifier(configuration.schema)
        var conditions = ["position > \(after)"]
        if let through { conditions.append("position <= \(through)") }
        let sql = """
            COPY (SELECT \(FactRowDecoder.columns) FROM \(s).events WHERE \(conditions.joined(separator: " AND ")) \
            ORDER BY position) TO STDOUT (FORMAT binary)
            """
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                var count: Int64 = 0
                var rows = RowBatcher(body)
                try conn.copyOutBinary(sql) { row, fields in
                    count += 1
                    try FactRowDecoder.row(row, fields, into: &rows)
                }
                try rows.flush()
                return count
            }
        }
    }

    /// One read of the log through `through` serving the hash chain and the fold: every row is
    /// hashed onto the chain and its fact handed to `body` (on the connection's thread, a batch at
    /// a time). Returns the chain as read, for ``chainReport(_:through:)``.
    func scanFactsVerifyingChain(
        through: Int64, _ body: @escaping @Sendable (ScannedRows) throws -> Void
    ) async throws -> ChainVerifier {
        let s = quoteIdentifier(configuration.schema)
        let sql =
            "COPY (SELECT \(ChainedFactRowDecoder.columns) FROM \(s).events WHERE position <= \(through) ORDER BY position) TO STDOUT (FORMAT binary)"
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                var decoder = ChainedFactRowDecoder()
                var rows = RowBatcher(body)
                try conn.copyOutBinary(sql) { row, fields in try decoder.row(row, fields, into: &rows) }
                try rows.flush()
                return decoder.verifier
            }
        }
    }
}
