import Foundation
import LedgerCore
import LedgerPostgres

/// The columns every read selects, in the order ``EventRows/decode(copyRow:)`` expects.
package enum EventRows {
    package static let columns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, payload::text, \
        metadata::text, occurred_at, recorded_at, idempotency_key, hash
        """

    package static let insertColumns = """
        position, event_id, stream_id, stream_version, event_type, schema_version, payload, metadata, \
        occurred_at, recorded_at, idempotency_key, hash
        """

    package struct DecodeError: Error, CustomStringConvertible {
        package var message: String
        package init(message: String) { self.message = message }
        package var description: String { "cannot decode a stored event: \(message)" }
    }

    /// Decodes one row of `COPY (SELECT columns ...) TO STDOUT` (text format, tab-separated).
    package static func decode(copyRow raw: UnsafeRawBufferPointer) throws -> RecordedEvent {
        var fields: [String?] = []
        fields.reserveCapacity(12)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        for (start, end) in CopyText.fieldBounds(raw) {
            if CopyText.isNull(raw, from: start, to: end) {
                fields.append(nil)
                continue
            }
            buffer.removeAll(keepingCapacity: true)
            CopyText.appendUnescaped(raw, from: start, to: end, into: &buffer)
            fields.append(String(decoding: buffer, as: UTF8.self))
        }
        return try decode(fields: fields)
    }

    /// Decodes one row selected with ``columns`` (text format).
    package static func decode(fields f: [String?]) throws -> RecordedEvent {
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
        return RecordedEvent(
            position: position, eventId: eventId, stream: stream, version: version, type: type,
            schemaVersion: schemaVersion, payloadText: payload, metadataText: metadata,
            occurredAt: occurredAt, recordedAt: recordedAt, idempotencyKey: f[10], hash: hash)
    }

    package static func decode(_ result: QueryResult) throws -> [RecordedEvent] {
        try result.rows.map { try decode(fields: $0) }
    }

    /// Appends one `events` row (``insertColumns``) in COPY text format.
    package static func appendCopyRow(
        position: Int64, eventId: String, stream: String, version: Int64, type: String, schemaVersion: Int32,
        payloadText: String, metadataText: String, occurredAt: Timestamp, recordedAt: [UInt8],
        idempotencyKey: String?, hash: [UInt8], into out: inout [UInt8]
    ) {
        out.append(contentsOf: String(position).utf8)
        out.append(0x09)
        out.append(contentsOf: eventId.utf8)
        out.append(0x09)
        CopyText.appendEscaped(stream, into: &out)
        out.append(0x09)
        out.append(contentsOf: String(version).utf8)
        out.append(0x09)
        out.append(contentsOf: type.utf8)
        out.append(0x09)
        out.append(contentsOf: String(schemaVersion).utf8)
        out.append(0x09)
        CopyText.appendEscaped(payloadText, into: &out)
        out.append(0x09)
        CopyText.appendEscaped(metadataText, into: &out)
        out.append(0x09)
        out.append(contentsOf: occurredAt.iso8601.utf8)
        out.append(0x09)
        out.append(contentsOf: recordedAt)
        out.append(0x09)
        CopyText.appendEscaped(idempotencyKey, into: &out)
        out.append(0x09)
        out.append(0x5C)
        out.append(0x5C)
        out.append(UInt8(ascii: "x"))
        out.append(contentsOf: hash.hexString.utf8)
        out.append(0x0A)
    }
}
