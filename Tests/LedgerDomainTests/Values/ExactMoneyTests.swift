import Foundation
import LedgerCore
@testable import LedgerDomain
import PropertyBased
import Testing

/// Money as the stores sign it: Apple milliunits, Google micros and minor units, by the currency's
/// ISO 4217 exponent, kept exactly whether or not it is a whole number of minor units.
@Suite("Exact store money")
struct ExactMoneyTests {
    static let codes = Currency.exponents.keys.sorted()

    @Test(arguments: [
        ("USD", Int64(1990), "1.99 USD"), ("JPY", 120_000, "120 JPY"), ("KRW", 1_500_000, "1500 KRW"),
        ("BHD", 1990, "1.990 BHD"),
        ("KWD", 990, "0.990 KWD"), ("USD", 1995, "1.995 USD"), ("JPY", 1, "0.001 JPY"), ("CLF", 1, "0.0010 CLF"),
    ])
    func milliunitsByExponent(_ code: String, _ milli: Int64, _ text: String) throws {
        let m = try #require(Money(storeAmount: milli, unit: .milliunits, currency: Currency(code)!))
        #expect(m.description == text)
        #expect(m.storeAmount(in: .milliunits) == milli)
        #expect(Money(decimalText: m.decimalText, currency: m.currency) == m)
    }

    @Test("any store amount in any currency reads back exactly, and its decimal text too")
    func storeAmountsRoundTrip() async {
        await propertyCheck(
            count: 500, input: Gen.int64(in: 0...1_000_000_000_000_000), Gen.int(in: 0...Self.codes.count - 1), Gen.bool
        ) { amount, i, micros in
            let c = Currency(Self.codes[i])!
            let unit: StoreAmountUnit = micros ? .micros : .milliunits
            guard let m = Money(storeAmount: amount, unit: unit, currency: c) else {
                // Only an amount whose minor units overflow is refused (never a fraction).
                #expect(c.exponent > unit.digits(c) || c.exponent > 3)
                return
            }
            #expect(m.storeAmount(in: unit) == amount, "\(amount) \(unit) \(c)")
            #expect(m.fraction.magnitude < 1_000_000)
            #expect(Money(decimalText: m.decimalText, currency: c) == m, "\(m.decimalText)")
            // Whole minor units exactly when the store's amount is a whole number of them.
            let perMinor = unit.digits(c) > c.exponent ? Int64(pow(10, Double(unit.digits(c) - c.exponent))) : 1
            #expect(m.isWholeMinorUnits == (amount % perMinor == 0))
        }
    }

    @Test("sums are exact: whole minor units carried from the fractions")
    func exactSums() async {
        await propertyCheck(count: 300, input: Gen.int64(in: 0...10_000_000_000), Gen.int64(in: 0...10_000_000_000)) {
            a, b in
            let usd = Currency("USD")!
            let x = Money(storeAmount: a, unit: .micros, currency: usd)!,
                y = Money(storeAmount: b, unit: .micros, currency: usd)!
            #expect(x.adding(y) == Money(storeAmount: a + b, unit: .micros, currency: usd))
            #expect(x.adding(y)?.adding(y.negated) == x)
        }
    }

    @Test("the payload keeps an inexact amount exactly and refuses one that disagrees with it")
    func payload() throws {
        let usd = Currency("USD")!
        let m = Money(storeAmount: 1995, unit: .milliunits, currency: usd)!
        #expect(
            m.json["amount"]?.intValue == 199 && m.json["exact"]?.stringValue == "1.995"
                && m.json["currency"]?.stringValue == "USD")
        #expect(Money(minorUnits: 199, currency: usd).json["exact"] == nil)
        var r = try PayloadReader(m.json)
        #expect(try Money.read(&r) == m)
        for (text, field) in [
            (#"{"amount":200,"currency":"USD","exact":"1.995"}"#, "exact"),
            (#"{"amount":199,"currency":"USD","storeMicros":2000000}"#, "storeMicros"),
            (#"{"amount":199,"currency":"USD","exact":"1.995","storeMilliunits":1996}"#, "storeMilliunits"),
            (#"{"amount":1,"currency":"USD","exact":"0.0100000001"}"#, "exact"),
        ] {
            var bad = try PayloadReader(try JSONValue.parse(text))
            let error = #expect(throws: FactError.self, "\(text)") { try Money.read(&bad) }
            #expect(error?.field == field, "\(text)")
        }
    }

    @Test("revenue sums inexact prices exactly")
    func revenue() {
        var h = History(products: ["coins_60"])
        for (i, milli) in [1995, 1995, 1990].enumerated() {
            h.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: .appstore, transactionId: "t\(i)", productId: "coins_60", purchaseDate: h.now,
                        price: Money(storeAmount: Int64(milli), unit: .milliunits, currency: Currency("USD")!)!)))
        }
        let rows = Revenue.totals(Revenue.compute(h.fold(), by: .day))
        #expect(
            rows.count == 1 && rows[0].ledger.exactGross(Currency("USD")!).description == "5.98 USD"
                && rows[0].ledger.sales == 3)
        // The whole minor units are the exact total's: the halves carried.
        #expect(rows.first?.ledger.gross == 598 && rows.first?.ledger.grossFraction == 0)
    }
}
