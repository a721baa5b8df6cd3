import Foundation
import LedgerCore
@testable import LedgerLog
import LedgerPostgres
@testable import LedgerProjection
import Testing

/// The COPY rows written for the read models and for the log, on bytes alone.
@Suite("Row writers")
struct RowWriterTests {
    static func text(_ w: RowWriter) -> String { String(decoding: w.out, as: UTF8.self) }

    @Test(arguments: [0, 7, -7, 1_000_000_007, Int64.max, Int64.min] as [Int64])
    func digitsAreTheDecimalText(_ value: Int64) {
        var w = RowWriter()
        w.field(value)
        #expect(Self.text(w) == String(value))
    }

    @Test func fieldsAreTabSeparatedAndRowsEndWithANewline() {
        var w = RowWriter()
        w.field("a\tb")
        w.field(nil as String?)
        w.field(true)
        w.field(false)
        w.field(nil as Int64?)
        w.field(Timestamp("2026-03-31T08:15:00Z"))
        w.endRow()
        w.field("back\\slash")
        w.endRow()
        #expect(Self.text(w) == "a\\tb\t\\N\tt\tf\t\\N\t2026-03-31T08:15:00Z\nback\\\\slash\n")
    }

    @Test func positionsAreABigintArrayLiteral() {
        var w = RowWriter()
        w.positions([1, 22, 333])
        w.positions([])
        #expect(Self.text(w) == "{1,22,333}\t{}")
    }

    /// Array elements are quoted and escaped for the literal, then the literal is escaped for COPY.
    @Test(
        arguments: [
            ([], "{}"),
            (["a", "b"], #"{"a","b"}"#),
            (["q\"uote"], #"{"q\\"uote"}"#),
            (["back\\slash"], #"{"back\\\\slash"}"#),
            (["tab\there", "new\nline", "cr\rhere"], #"{"tab\there","new\nline","cr\rhere"}"#),
            (["", "NULL", "{,}"], #"{"","NULL","{,}"}"#),
        ] as [([String], String)])
    func textsAreQuotedArrayLiterals(_ values: [String], _ expected: String) {
        var w = RowWriter()
        w.texts(values)
        #expect(Self.text(w) == expected)
    }

    /// An `events` row written for COPY reads back as the same event, awkward characters and all.
    @Test(arguments: [nil, "plain", "tab\tkey", "back\\slash\nnewline"] as [String?])
    func anEventRowReadsBackUnchanged(key: String?) throws {
        let payload = #"{"note":"a\tb \\ c\nd","n":1}"#
        var out: [UInt8] = []
        let hash = [UInt8](repeating: 0xAB, count: 32)
        let occurred = Timestamp("2026-03-31T08:15:00Z")!
        let recorded = Timestamp("2026-03-31T08:15:01.5Z")!
        EventRows.appendCopyRow(
            position: 42, eventId: "00000000-0000-0000-0000-000000000001", stream: "order:1\tx", version: 3,
            type: "OrderCreated", schemaVersion: 2, payloadText: payload, metadataText: #"{"source":"t"}"#,
            occurredAt: occurred, recordedAt: Array(recorded.iso8601.utf8), idempotencyKey: key, hash: hash, into: &out)
        #expect(out.last == 0x0A)
        let event = try out.withUnsafeBytes { try EventRows.decode(copyRow: $0) }
        #expect(event.position == 42 && event.version == 3 && event.schemaVersion == 2)
        #expect(event.eventId == UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        #expect(event.stream == "order:1\tx" && event.type == "OrderCreated")
        #expect(event.payloadText == payload && event.metadataText == #"{"source":"t"}"#)
        #expect(event.occurredAt == occurred && event.recordedAt == recorded)
        #expect(event.idempotencyKey == key)
        #expect(event.hash == hash)
    }
}
