import Foundation
import LedgerCore
import LedgerPostgres

/// The columns every read selects, in the order ``EventRows/decode(copyRow:)`` expects.
enum EventRows {
    static let columns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, payload::text, \
        metadata::text, occurred_at, recorded_at, idempotency_key, hash
        """

    static let insertColumns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, \
        occurred_at, recorded_at, idempotency_key, hash
        """

    struct DecodeError: Error, CustomStringConvertible {
        var message: String
        var description: String { "cannot decode a stored event: \(message)" }
    }

    /// Decodes one row of `COPY (SELECT columns ...) TO STDOUT` (text format, tab-separated).
    static func decode(copyRow raw: UnsafeRawBufferPointer) throws -> RecordedEvent {
        var fields: [String?] = []
        fields.reserveCapacity(12)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        for (start, end) in fieldBounds(raw) {
            if end - start == 2, raw[start] == 0x5C, raw[start + 1] == UInt8(ascii: "N") { fields.append(nil); continue }
            buffer.removeAll(keepingCapacity: true)
            appendUnescaped(raw, from: start, to: end, into: &buffer)
            fields.append(String(decoding: buffer, as: UTF8.self))
        }
        return try decode(fields: fields)
    }

    /// Where each field of a COPY text row is (a raw tab always separates fields: tabs in data
    /// are escaped), without the final newline.
    static func fieldBounds(_ raw: UnsafeRawBufferPointer, limit: Int = .max) -> [(Int, Int)] {
        var bounds: [(Int, Int)] = []
        var start = 0
        var end = raw.count
        if end > 0, raw[end - 1] == 0x0A { end -= 1 }
        var i = 0
        while i < end, bounds.count < limit - 1 {
            if raw[i] == 0x09 { bounds.append((start, i)); start = i + 1 }
            i += 1
        }
        bounds.append((start, end))
        return bounds
    }

    /// Undoes COPY text escaping (`\\`, `\n`, `\t`, ...) of `raw[from..<to]` onto `out`.
    static func appendUnescaped(_ raw: UnsafeRawBufferPointer, from: Int, to: Int, into out: inout [UInt8]) {
        var k = from
        while k < to {
            let b = raw[k]
            if b == 0x5C, k + 1 < to {
                switch raw[k + 1] {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "v"): out.append(0x0B)
                case let e: out.append(e)
                }
                k += 2
                continue
            }
            out.append(b)
            k += 1
        }
    }

    /// Decodes one row selected with ``columns`` (text format).
    static func decode(fields f: [String?]) throws -> RecordedEvent {
        guard f.count == 12 else { throw DecodeError(message: "expected 12 columns, got \(f.count)") }
        guard let position = f[0].flatMap({ Int64($0) }),
              let eventId = f[1].flatMap({ UUID(uuidString: $0) }),
              let stream = f[2],
              let version = f[3].flatMap({ Int64($0) }),
              let type = f[4],
              let schemaVersion = f[5].flatMap({ Int32($0) }),
              let payload = f[6], let metadata = f[7],
              let occurredAt = f[8].flatMap({ Timestamp($0) }),
              let recordedAt = f[9].flatMap({ Timestamp($0) }),
              let hash = f[11].flatMap({ QueryResult.decodeHexBytea($0) })
        else {
            throw DecodeError(message: "unexpected column values at position \(f[0] ?? "?")")
        }
        return RecordedEvent(position: position, eventId: eventId, stream: stream, version: version, type: type,
                             schemaVersion: schemaVersion, payloadText: payload, metadataText: metadata,
                             occurredAt: occurredAt, recordedAt: recordedAt, idempotencyKey: f[10], hash: hash)
    }

    static func decode(_ result: QueryResult) throws -> [RecordedEvent] {
        try result.rows.map { try decode(fields: $0) }
    }

    /// Appends one `events` row (``insertColumns``) in COPY text format.
    static func appendCopyRow(position: Int64, eventId: String, stream: String, version: Int64, type: String, schemaVersion: Int32,
                              payloadText: String, metadataText: String, occurredAt: Timestamp, recordedAt: [UInt8],
                              idempotencyKey: String?, hash: [UInt8], into out: inout [UInt8]) {
        out.append(contentsOf: String(position).utf8); out.append(0x09)
        out.append(contentsOf: eventId.utf8); out.append(0x09)
        appendCopyField(stream, into: &out); out.append(0x09)
        out.append(contentsOf: String(version).utf8); out.append(0x09)
        out.append(contentsOf: type.utf8); out.append(0x09)
        out.append(contentsOf: String(schemaVersion).utf8); out.append(0x09)
        appendCopyField(payloadText, into: &out); out.append(0x09)
        appendCopyField(metadataText, into: &out); out.append(0x09)
        out.append(contentsOf: occurredAt.iso8601.utf8); out.append(0x09)
        out.append(contentsOf: recordedAt); out.append(0x09)
        if let k = idempotencyKey { appendCopyField(k, into: &out) } else { out.append(0x5C); out.append(UInt8(ascii: "N")) }
        out.append(0x09)
        out.append(0x5C); out.append(0x5C); out.append(UInt8(ascii: "x"))
        out.append(contentsOf: hash.hexString.utf8)
        out.append(0x0A)
    }

    /// Appends one field in COPY text format (escaping backslash, tab, newline, carriage return).
    @inline(__always)
    static func appendCopyField(_ s: String, into out: inout [UInt8]) {
        for b in s.utf8 {
            switch b {
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            default: out.append(b)
            }
        }
    }
}
