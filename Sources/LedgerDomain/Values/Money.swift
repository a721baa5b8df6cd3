import LedgerCore

/// An ISO 4217 currency with its minor-unit exponent.
///
/// Kept in four bytes (the code's three letters, then the exponent), where a `String` and an `Int`
/// took 24 in every amount the fold keeps.
public struct Currency: Hashable, Sendable, Comparable, CustomStringConvertible {
    private let packed: UInt32

    /// The three-letter code (`CNY`).
    public var code: String {
        withUnsafeBytes(of: packed.bigEndian) { String(decoding: $0.prefix(3), as: UTF8.self) }
    }
    /// Digits after the decimal point: 2 for CNY and USD, 0 for JPY and KRW, 3 for KWD.
    public var exponent: Int { Int(packed & 0xff) }

    public init?(_ code: String) {
        guard let e = Currency.exponents[code] else { return nil }
        // Every code in the table is three ASCII letters.
        packed = code.utf8.reduce(0) { $0 << 8 | UInt32($1) } << 8 | UInt32(e)
    }

    public var description: String { code }
    /// By code: the letters compare as the code's text does.
    public static func < (a: Currency, b: Currency) -> Bool { a.packed >> 8 < b.packed >> 8 }

    /// Active ISO 4217 codes and their minor units (the ISO table, list one).
    public static let exponents: [String: Int] = {
        var table: [String: Int] = [:]
        let two = """
        AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF \
        CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF \
        IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR \
        MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD \
        SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR \
        ZMW ZWG
        """
        for c in two.split(separator: " ") { table[String(c)] = 2 }
        for c in "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(separator: " ") { table[String(c)] = 0 }
        for c in "BHD IQD JOD KWD LYD OMR TND".split(separator: " ") { table[String(c)] = 3 }
        for c in "CLF UYW".split(separator: " ") { table[String(c)] = 4 }
        return table
    }()
}

/// As its code and exponent; a code that is not ISO 4217's, or an exponent not its own, is refused.
extension Currency: Codable {
    private enum CodingKeys: String, CodingKey { case code, exponent }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let code = try c.decode(String.self, forKey: .code)
        let exponent = try c.decode(Int.self, forKey: .exponent)
        guard let currency = Currency(code), currency.exponent == exponent else {
            throw DecodingError.dataCorruptedError(forKey: .code, in: c, debugDescription: "currency \(code) with exponent \(exponent)")
        }
        self = currency
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(exponent, forKey: .exponent)
    }
}

/// An amount of money: integer minor units plus currency. Never a floating-point number.
public struct Money: Hashable, Sendable, CustomStringConvertible, Codable {
    public var minorUnits: Int64
    public var currency: Currency

    public init(minorUnits: Int64, currency: Currency) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// Converts an Apple price in milliunits (thousandths of the major unit) exactly, or returns nil
    /// when it is not a whole number of minor units (e.g. 1234 milliunits of JPY).
    public init?(milliunits: Int64, currency: Currency) {
        guard currency.exponent <= 3 else {
            let (v, o) = milliunits.multipliedReportingOverflow(by: Money.pow10(currency.exponent - 3))
            guard !o else { return nil }
            self.init(minorUnits: v, currency: currency)
            return
        }
        let divisor = Money.pow10(3 - currency.exponent)
        guard milliunits % divisor == 0 else { return nil }
        self.init(minorUnits: milliunits / divisor, currency: currency)
    }

    /// The amount in milliunits, as Apple reports it.
    public var milliunits: Int64? {
        if currency.exponent <= 3 {
            let (v, o) = minorUnits.multipliedReportingOverflow(by: Money.pow10(3 - currency.exponent))
            return o ? nil : v
        }
        let d = Money.pow10(currency.exponent - 3)
        return minorUnits % d == 0 ? minorUnits / d : nil
    }

    static func pow10(_ n: Int) -> Int64 { (0..<n).reduce(1) { r, _ in r * 10 } }

    /// `18.00 CNY`, `600 JPY`, `-1.250 KWD`: exact decimal text.
    public var description: String {
        let e = currency.exponent
        guard e > 0 else { return "\(minorUnits) \(currency.code)" }
        let sign = minorUnits < 0 ? "-" : ""
        let m = minorUnits.magnitude
        let d = UInt64(Money.pow10(e))
        var frac = String(m % d)
        while frac.count < e { frac = "0" + frac }
        return "\(sign)\(m / d).\(frac) \(currency.code)"
    }
}

extension Money: PayloadValue {
    public static let schemaName = "money"

    static let about = "An amount in integer minor units (600 CNY is 6.00 yuan). storeMilliunits, Apple's price in thousandths of "
        + "the major unit, is optional and must equal amount exactly (not expressible here; see README)."

    /// `{"amount": 600, "currency": "CNY", "storeMilliunits": 6000}`; milliunits, when given, must
    /// equal the amount exactly. Only amount and currency are written back.
    static let fields = FieldTable<Money>(Money(minorUnits: 0, currency: Currency.placeholder), [
        .int("amount", \.minorUnits, min: 0, max: maximumMinorUnits, "Minor units (cents, fen, yen...)."),
        .currency("currency", \.currency),
        FactField("storeMilliunits", required: false,
                  schema: .integer(min: 0, max: nil, "Apple's price in milliunits, when the store reported one; must equal amount."),
                  read: { (r: inout PayloadReader, money: inout Money) throws(FactError) in
                      guard let milli = try r.optionalInt("storeMilliunits", min: 0) else { return }
                      guard let m = Money(milliunits: milli, currency: money.currency) else {
                          throw r.fail("storeMilliunits", "\(milli) milliunits is not a whole number of \(money.currency.code) minor units")
                      }
                      guard m == money else { throw r.fail("storeMilliunits", "\(milli) milliunits is \(m), but amount says \(money)") }
                  },
                  write: { _, _ in }),
    ])

    /// The largest amount a payload may carry, in minor units.
    public static let maximumMinorUnits: Int64 = 1_000_000_000_000

    public static func read(_ r: inout PayloadReader) throws(FactError) -> Money { try fields.read(&r) }

    public var json: JSONValue { Money.fields.write(self) }
}

extension Money {
    /// The value a reader starts from before the money fields are read (never written).
    static let blank = Money(minorUnits: 0, currency: .placeholder)
}

extension Currency {
    /// The value a reader starts from before the currency field is read (never written).
    static let placeholder = Currency("USD")!
}
