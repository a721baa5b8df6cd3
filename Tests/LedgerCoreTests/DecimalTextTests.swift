import LedgerCore
import Testing

/// Decimal digits written into bytes spell what `String(value)` spells, and a decimal field of the
/// hash chain is that text behind its length.
@Suite("Decimal text")
struct DecimalTextTests {
    @Test(arguments: [0, 7, -7, 10, 999, -1000, 946_684_800_000_000, -86_400_000_001, Int64.max, Int64.min] as [Int64])
    func spellsWhatStringSpells(_ value: Int64) {
        var out: [UInt8] = [0xAA]
        DecimalText.append(value, to: &out)
        #expect(out == [0xAA] + Array(String(value).utf8))
        var field: [UInt8] = []
        EventChain.appendField(decimal: value, to: &field)
        var expected: [UInt8] = []
        EventChain.appendField(String(value).utf8, to: &expected)
        #expect(field == expected)
    }
}
