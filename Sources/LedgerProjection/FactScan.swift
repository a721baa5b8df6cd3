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

    public init(position: Int64, type: String, schemaVersion: Int32, occurredAt: Timestamp, fact: Result<Fact, FactError>) {
        self.position = position; self.type = type; self.schemaVersion = schemaVersion; self.occurredAt = occurredAt; self.fact = fact
    }

    /// A whole stored event, decoded.
    public init(_ event: RecordedEvent) {
        let fact: Result<Fact, FactError>
        do throws(FactError) { fact = .success(try FactCatalogue.decode(event)) } catch { fact = .failure(error) }
        self.init(position: event.position, type: event.type, schemaVersion: event.schemaVersion, occurredAt: event.occurredAt, fact: fact)
    }
}

/// One stored fact as read, its payload not yet decoded: what the reading thread hands to the
/// decoding one.
struct ScannedRow: Sendable {
    var position: Int64
    var type: String
    var schemaVersion: Int32
    var occurredAt: Timestamp
    /// The payload's JSON text is `json[payload]`.
    var json: [UInt8]
    var payload: Range<Int>

    /// `shared`: where strings that many facts repeat are shared (one per decoding thread).
    func decoded(shared: SharedStrings? = nil) -> ScannedFact {
        ScannedFact(position: position, type: type, schemaVersion: schemaVersion, occurredAt: occurredAt,
                    fact: FactRowDecoder.fact(type: type, schemaVersion: schemaVersion, json: json, range: payload, shared: shared))
    }
}

/// Decodes rows of `COPY (SELECT position, event_type, schema_version, <occurred µs>, payload::text)`.
struct FactRowDecoder {
    var bounds: [(Int, Int)] = []
    static let knownTypes: [(bytes: [UInt8], name: String)] = FactCatalogue.typeNames.sorted().map { (Array($0.utf8), $0) }

    init() {}

    static func integer(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int64? {
        var i = start, sign: Int64 = 1, v: Int64 = 0
        if i < end, raw[i] == UInt8(ascii: "-") { sign = -1; i += 1 }
        guard i < end else { return nil }
        while i < end {
            let c = raw[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int64(c - 0x30)
            i += 1
        }
        return v * sign
    }

    /// The row with its payload's text unescaped into an array of its own (handed to another thread).
    mutating func row(_ raw: UnsafeRawBufferPointer) throws -> ScannedRow {
        CopyText.fieldBounds(raw, limit: 5, into: &bounds)
        guard bounds.count == 5,
              let position = Self.integer(raw, bounds[0].0, bounds[0].1),
              let version = Self.integer(raw, bounds[2].0, bounds[2].1),
              let micros = Self.integer(raw, bounds[3].0, bounds[3].1) else {
            throw EventRows.DecodeError(message: "unexpected fact row")
        }
        let type = Self.typeName(UnsafeRawBufferPointer(rebasing: raw[bounds[1].0..<bounds[1].1]))
        // COPY text escapes backslashes and control characters; undo that for the payload.
        var payload: [UInt8] = []
        payload.reserveCapacity(bounds[4].1 - bounds[4].0)
        CopyText.appendUnescaped(raw, from: bounds[4].0, to: bounds[4].1, into: &payload)
        return ScannedRow(position: position, type: type, schemaVersion: Int32(truncatingIfNeeded: version),
                          occurredAt: Timestamp(microsecondsSince1970: micros), json: payload, payload: 0..<payload.count)
    }

    /// The known type name spelled by these bytes (no new String for the usual ones).
    static func typeName(_ typeBytes: UnsafeRawBufferPointer) -> String {
        knownTypes.first { $0.bytes.count == typeBytes.count && $0.bytes.elementsEqual(typeBytes) }?.name
            ?? String(decoding: typeBytes, as: UTF8.self)
    }

    /// The fact a stored payload (its JSON text, `range` of `json`) holds, or why it does not decode.
    static func fact(type: String, schemaVersion: Int32, json: [UInt8], range: Range<Int>? = nil,
                     shared: SharedStrings? = nil) -> Result<Fact, FactError> {
        do throws(FactError) {
            return .success(try FactCatalogue.decode(type: type, schemaVersion: schemaVersion, json: json, range: range, shared: shared))
        } catch {
            return .failure(error)
        }
    }
}

/// Reads the rows of the audit's one read of the log: each row's canonical bytes are built
/// straight from its stored text and hashed onto the chain (``ChainVerifier``), and its payload,
/// within those bytes, is left for the decoding thread, with no ``RecordedEvent``, UUID or date
/// parsing in between.
struct ChainedFactRowDecoder {
    /// The columns, in the order ``row(_:)`` expects: the canonical fields first, in their
    /// canonical order, then metadata, the stored hash and the payload.
    static let columns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, \
        (extract(epoch FROM occurred_at) * 1000000)::bigint, (extract(epoch FROM recorded_at) * 1000000)::bigint, \
        idempotency_key, metadata::text, encode(hash, 'hex'), payload::text
        """
    private(set) var verifier = ChainVerifier()
    /// The previous event's hash and the row's canonical bytes; the payload's JSON is read from
    /// them too.
    private var canonical: [UInt8] = []
    private var bounds: [(Int, Int)] = []

    init() { canonical.reserveCapacity(1024) }

    /// The row hashed onto the chain, its payload not yet decoded: its canonical bytes, which hold
    /// the payload, go with it to the decoding thread.
    mutating func row(_ raw: UnsafeRawBufferPointer) throws -> ScannedRow {
        CopyText.fieldBounds(raw, limit: 12, into: &bounds)
        let b = bounds
        guard b.count == 12,
              let position = FactRowDecoder.integer(raw, b[0].0, b[0].1),
              let version = FactRowDecoder.integer(raw, b[5].0, b[5].1),
              let micros = FactRowDecoder.integer(raw, b[6].0, b[6].1),
              FactRowDecoder.integer(raw, b[7].0, b[7].1) != nil,
              let stored = Hex.bytes(UnsafeRawBufferPointer(rebasing: raw[b[10].0..<b[10].1])) else {
            throw EventRows.DecodeError(message: "unexpected row in the chain and fact read")
        }
        // The previous event's hash, then the row's canonical bytes, hashed in one pass. Position,
        // event id, stream, stream version, type, schema version, occurred and recorded
        // microseconds: their text is what canonicalBytes makes of the typed values.
        canonical.removeAll(keepingCapacity: true)
        canonical.append(contentsOf: verifier.previous)
        EventChain.appendField(EventChain.tag, to: &canonical)
        for i in 0..<8 { appendField(raw, b[i]) }
        if CopyText.isNull(raw, from: b[8].0, to: b[8].1) {
            canonical.append(0)
        } else {
            canonical.append(1)
            appendField(raw, b[8])
        }
        let payload = appendField(raw, b[11])
        appendField(raw, b[9])
        verifier.consume(position: position, expected: SHA256.hash(canonical), stored: stored)

        let type = FactRowDecoder.typeName(UnsafeRawBufferPointer(rebasing: raw[b[4].0..<b[4].1]))
        // The next row starts a new buffer: this one goes with the row.
        let row = ScannedRow(position: position, type: type, schemaVersion: Int32(truncatingIfNeeded: version),
                             occurredAt: Timestamp(microsecondsSince1970: micros), json: canonical, payload: payload)
        canonical = []
        canonical.reserveCapacity(row.json.count + 256)
        return row
    }

    /// Unescapes a field straight into the canonical bytes behind its length (written once the
    /// length is known); returns where its bytes are.
    @discardableResult
    private mutating func appendField(_ raw: UnsafeRawBufferPointer, _ bounds: (Int, Int)) -> Range<Int> {
        let lengthAt = canonical.count
        canonical.append(0); canonical.append(0); canonical.append(0); canonical.append(0)
        CopyText.appendUnescaped(raw, from: bounds.0, to: bounds.1, into: &canonical)
        let n = UInt32(canonical.count - lengthAt - 4)
        canonical[lengthAt] = UInt8(truncatingIfNeeded: n >> 24); canonical[lengthAt + 1] = UInt8(truncatingIfNeeded: n >> 16)
        canonical[lengthAt + 2] = UInt8(truncatingIfNeeded: n >> 8); canonical[lengthAt + 3] = UInt8(truncatingIfNeeded: n)
        return lengthAt + 4..<canonical.count
    }
}

extension EventStore {
    /// Streams the facts after `after` through `through`, decoded for the projections, with
    /// `COPY ... TO STDOUT` (bounded memory). Reads only the columns a fold needs, so it runs close to
    /// the speed PostgreSQL sends rows. `body` runs on the connection's own thread.
    @discardableResult
    public func scanFacts(after: Int64 = 0, through: Int64? = nil, _ body: @escaping @Sendable (ScannedFact) throws -> Void) async throws -> Int64 {
        try await scanRows(after: after, through: through) { row in try body(row.decoded()) }
    }

    /// ``scanFacts(after:through:_:)`` with each payload left undecoded (for another thread to decode).
    @discardableResult
    func scanRows(after: Int64, through: Int64?, _ body: @escaping @Sendable (ScannedRow) throws -> Void) async throws -> Int64 {
        let s = quoteIdentifier(configuration.schema)
        var conditions = ["position > \(after)"]
        if let through { conditions.append("position <= \(through)") }
        let sql = """
            COPY (SELECT position, event_type, schema_version, \
            (extract(epoch FROM occurred_at) * 1000000)::bigint, payload::text \
            FROM \(s).events WHERE \(conditions.joined(separator: " AND ")) ORDER BY position) TO STDOUT
            """
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                var count: Int64 = 0
                var decoder = FactRowDecoder()
                try conn.copyOut(sql) { row in
                    count += 1
                    try body(try decoder.row(row))
                }
                return count
            }
        }
    }

    /// One read of the log through `through` serving the hash chain and the fold: every row is
    /// hashed onto the chain and its fact handed to `body` (on the connection's thread). Returns
    /// the chain as read, for ``chainReport(_:through:)``.
    func scanFactsVerifyingChain(through: Int64, _ body: @escaping @Sendable (ScannedRow) throws -> Void) async throws -> ChainVerifier {
        let s = quoteIdentifier(configuration.schema)
        let sql = "COPY (SELECT \(ChainedFactRowDecoder.columns) FROM \(s).events WHERE position <= \(through) ORDER BY position) TO STDOUT"
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                var decoder = ChainedFactRowDecoder()
                try conn.copyOut(sql) { row in try body(try decoder.row(row)) }
                return decoder.verifier
            }
        }
    }
}
