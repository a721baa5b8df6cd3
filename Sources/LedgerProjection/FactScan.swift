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

/// Decodes rows of `COPY (SELECT position, event_type, schema_version, <occurred µs>, payload::text)`.
struct FactRowDecoder {
    var payload: [UInt8] = []
    static let knownTypes: [(bytes: [UInt8], name: String)] = FactCatalogue.typeNames.sorted().map { (Array($0.utf8), $0) }

    init() { payload.reserveCapacity(4096) }

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

    mutating func decode(_ raw: UnsafeRawBufferPointer) throws -> ScannedFact {
        let bounds = CopyText.fieldBounds(raw, limit: 5)
        guard bounds.count == 5,
              let position = Self.integer(raw, bounds[0].0, bounds[0].1),
              let version = Self.integer(raw, bounds[2].0, bounds[2].1),
              let micros = Self.integer(raw, bounds[3].0, bounds[3].1) else {
            throw EventRows.DecodeError(message: "unexpected fact row")
        }
        let (ts, te) = bounds[1]
        let typeBytes = UnsafeRawBufferPointer(rebasing: raw[ts..<te])
        let type = Self.knownTypes.first { $0.bytes.count == typeBytes.count && $0.bytes.elementsEqual(typeBytes) }?.name
            ?? String(decoding: typeBytes, as: UTF8.self)
        // COPY text escapes backslashes and control characters; undo that for the payload.
        payload.removeAll(keepingCapacity: true)
        CopyText.appendUnescaped(raw, from: bounds[4].0, to: bounds[4].1, into: &payload)
        let fact: Result<Fact, FactError>
        do throws(FactError) {
            let value: JSONValue
            do { value = try payload.withUnsafeBufferPointer { try JSONValue.parse(utf8: $0) } } catch {
                throw FactError(field: "payload", message: "is not JSON: \(error)")
            }
            fact = .success(try FactCatalogue.decode(type: type, schemaVersion: Int32(truncatingIfNeeded: version), payload: value))
        } catch {
            fact = .failure(error)
        }
        return ScannedFact(position: position, type: type, schemaVersion: Int32(truncatingIfNeeded: version),
                           occurredAt: Timestamp(microsecondsSince1970: micros), fact: fact)
    }
}

extension EventStore {
    /// Streams the facts after `after` through `through`, decoded for the projections, with
    /// `COPY ... TO STDOUT` (bounded memory). Reads only the columns a fold needs, so it runs close to
    /// the speed PostgreSQL sends rows. `body` runs on the connection's own thread.
    @discardableResult
    public func scanFacts(after: Int64 = 0, through: Int64? = nil, _ body: @escaping @Sendable (ScannedFact) throws -> Void) async throws -> Int64 {
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
                    try body(try decoder.decode(row))
                }
                return count
            }
        }
    }
}
