import LedgerPostgres
import Testing

/// PostgreSQL's COPY text format, on bytes alone.
@Suite("COPY text codec")
struct CopyTextTests {
    /// A value and its escaped COPY text form.
    static let escapes: [(value: String, escaped: String)] = [
        ("plain", "plain"),
        ("", ""),
        ("a\tb", "a\\tb"),
        ("line\nnext", "line\\nnext"),
        ("cr\rhere", "cr\\rhere"),
        ("back\\slash", "back\\\\slash"),
        ("\\N", "\\\\N"),
        ("{\"k\":\"v\\\\u0000\"}", "{\"k\":\"v\\\\\\\\u0000\"}"),
        ("é 日本 🙂", "é 日本 🙂"),
    ]

    @Test(arguments: escapes)
    func escapesAValue(_ value: String, _ escaped: String) {
        var out: [UInt8] = []
        CopyText.appendEscaped(value, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == escaped)
    }

    @Test(arguments: escapes)
    func unescapingUndoesEscaping(_ value: String, _ escaped: String) {
        let bytes = Array(escaped.utf8)
        var out: [UInt8] = []
        bytes.withUnsafeBytes { CopyText.appendUnescaped($0, from: 0, to: $0.count, into: &out) }
        #expect(out == Array(value.utf8))
    }

    /// Escapes PostgreSQL may send that the writer never does: each stands for one byte.
    @Test(
        arguments: [("\\b", 0x08), ("\\f", 0x0C), ("\\v", 0x0B), ("\\x", UInt8(ascii: "x")), ("\\\\", 0x5C)]
            as [(String, UInt8)])
    func unescapesWhatTheServerMaySend(_ escaped: String, _ byte: UInt8) {
        var out: [UInt8] = []
        Array(escaped.utf8).withUnsafeBytes { CopyText.appendUnescaped($0, from: 0, to: $0.count, into: &out) }
        #expect(out == [byte])
    }

    @Test func fieldsAreSplitOnRawTabsOnly() {
        let row = Array("1\ta\\tb\t\\N\t\n".utf8)
        row.withUnsafeBytes { raw in
            let bounds = CopyText.fieldBounds(raw)
            let fields = bounds.map { String(decoding: raw[$0.0..<$0.1], as: UTF8.self) }
            #expect(fields == ["1", "a\\tb", "\\N", ""])
            #expect(!CopyText.isNull(raw, from: bounds[1].0, to: bounds[1].1))
            #expect(CopyText.isNull(raw, from: bounds[2].0, to: bounds[2].1))
        }
    }

    @Test func aLimitLeavesTheRestInTheLastField() {
        Array("1\t2\t3\tx\ty\n".utf8).withUnsafeBytes { raw in
            let fields = CopyText.fieldBounds(raw, limit: 3).map { String(decoding: raw[$0.0..<$0.1], as: UTF8.self) }
            #expect(fields == ["1", "2", "3\tx\ty"])
        }
    }

    @Test func nullIsBackslashN() {
        var out: [UInt8] = []
        CopyText.appendNull(into: &out)
        #expect(out == Array("\\N".utf8))
    }
}
