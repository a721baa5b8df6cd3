import Foundation
@testable import LedgerDomain
import Testing

/// Currencies packed in four bytes read back as the ISO table has them, order as their codes do,
/// and refuse what is not in the table.
@Suite("Currency")
struct CurrencyTests {
    @Test func everyCodeReadsBackWithItsExponent() throws {
        let all = Currency.exponents.keys.sorted()
        #expect(all.count > 150)
        for code in all {
            let c = try #require(Currency(code))
            #expect(c.code == code && c.exponent == Currency.exponents[code])
            #expect(try JSONDecoder().decode(Currency.self, from: JSONEncoder().encode(c)) == c)
        }
        #expect(all.compactMap(Currency.init).sorted().map(\.code) == all)
        #expect(MemoryLayout<Currency>.size == 4 && MemoryLayout<Money>.size <= 16)
    }

    @Test func whatIsNotInTheTableIsRefused() {
        for code in ["", "cny", "CN", "CNYY", "XXX", "人民币"] { #expect(Currency(code) == nil, "\(code)") }
        let wrongExponent = Data(#"{"code":"JPY","exponent":2}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Currency.self, from: wrongExponent) }
        #expect(Money(minorUnits: 600, currency: Currency("CNY")!).description == "6.00 CNY")
    }
}
