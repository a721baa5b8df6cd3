import LedgerCore
import Testing

@Suite("Echo of input in messages")
struct EchoTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("a\nb", "a\\nb"),
        ("tab\there", "tab\\there"),
        ("\u{1B}[31mred", "\\u{1B}[31mred"),
        ("bell\u{7}", "bell\\u{7}"),
        ("del\u{7F}", "del\\u{7F}"),
        ("c1\u{9B}", "c1\\u{9B}"),
        ("ls\u{2028}", "ls\\u{2028}"),
        ("bidi\u{202E}", "bidi\\u{202E}"),
        ("中文 é", "中文 é"),
    ])
    func controlCharactersAreEscaped(_ input: String, _ shown: String) {
        #expect(Echo.shown(input) == shown)
    }

    @Test func longValuesAreCutAndSaySo() {
        let s = Echo.shown(String(repeating: "k", count: 1_000_000), limit: 10)
        #expect(s == "kkkkkkkkkk… (999990 more characters)")
    }

    @Test func yearsAfter9999AsPostgreSQLPrintsThemParse() {
        let t = Timestamp("294000-01-01 00:00:00+00")
        #expect(t != nil)
        #expect(t.map { Timestamp($0.iso8601) == $0 } == true)
        #expect(Timestamp("294277-01-01 00:00:00+00") == nil, "beyond Int64 microseconds is refused, not wrapped")
    }
}
