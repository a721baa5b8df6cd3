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
        for c in "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(separator: " ") {
            table[String(c)] = 0
        }
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
            throw DecodingError.dataCorruptedError(
                forKey: .code, in: c, debugDescription: "currency \(code) with exponent \(exponent)")
        }
        self = currency
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(exponent, forKey: .exponent)
    }
}

/// An amount of money: integer minor units plus currency, and, where a store signed an amount that
/// is not a whole number of minor units (Apple's USD 1995 milliunits is 199.5 cents), the exact
/// rest in millionths of a minor unit. Never a floating-point number.
public struct Money: Hashable, Sendable, CustomStringConvertible {
    /// Whole minor units, rounded toward zero.
    public var minorUnits: Int64
    public var currency: Currency
    /// What the store signed below a whole minor unit, in millionths of one (same sign as the
    /// amount, `|fraction| < 1_000_000`); 0 for an amount in whole minor units.
    public var fraction: Int32

    public init(minorUnits: Int64, currency: Currency) {
        self.minorUnits = minorUnits
        self.currency = currency
        self.fraction = 0
    }

    /// An exact amount of `millionths` of a minor unit; nil when its whole part overflows.
    public init?(minorUnits: Int64, fraction: Int64, currency: Currency) {
        let (carry, rest) = fraction.quotientAndRemainder(dividingBy: 1_000_000)
        let (whole, o) = minorUnits.addingReportingOverflow(carry)
        guard !o else { return nil }
        self.init(minorUnits: whole, currency: currency)
        // The whole part and the rest take one sign.
        if whole > 0 && rest < 0 {
            self.minorUnits -= 1
            self.fraction = Int32(rest + 1_000_000)
        } else if whole < 0 && rest > 0 {
            self.minorUnits += 1
            self.fraction = Int32(rest - 1_000_000)
        } else {
            self.fraction = Int32(rest)
        }
    }

    /// The amount in millionths of a minor unit (held at the bounds of `Int64`).
    public var millionths: Int64 { minorUnits.multipliedSaturated(by: 1_000_000).addingSaturated(Int64(fraction)) }

    /// Whether the amount is a whole number of minor units.
    public var isWholeMinorUnits: Bool { fraction == 0 }

    /// Converts an Apple price in milliunits (thousandths of the major unit) exactly, or returns nil
    /// when it is not a whole number of minor units (e.g. 1234 milliunits of JPY).
    public init?(milliunits: Int64, currency: Currency) {
        guard let m = Money(storeAmount: milliunits, unit: .milliunits, currency: currency), m.isWholeMinorUnits else {
            return nil
        }
        self = m
    }

    /// An amount as a store signs it (Apple milliunits, Google micros, minor units), kept exactly:
    /// whole minor units plus the rest. Nil only when it does not fit (over 9.2 * 10^18 minor units).
    public init?(storeAmount: Int64, unit: StoreAmountUnit, currency: Currency) {
        // Minor units = amount * 10^exponent / 10^unitDigits.
        let shift = currency.exponent - unit.digits(currency)
        if shift >= 0 {
            let (v, o) = storeAmount.multipliedReportingOverflow(by: Money.pow10(shift))
            guard !o else { return nil }
            self.init(minorUnits: v, currency: currency)
        } else {
            let divisor = Money.pow10(-shift)
            let (q, r) = storeAmount.quotientAndRemainder(dividingBy: divisor)
            // The rest in millionths of a minor unit: exact, since a divisor is at most 10^6.
            self.init(minorUnits: q, currency: currency)
            self.fraction = Int32(r * (1_000_000 / divisor))
        }
    }

    /// The amount in a store's unit, when it is a whole number of them.
    public func storeAmount(in unit: StoreAmountUnit) -> Int64? {
        let shift = unit.digits(currency) - currency.exponent
        if shift >= 0 {
            let p = Money.pow10(shift)
            let (v, o) = minorUnits.multipliedReportingOverflow(by: p)
            guard !o else { return nil }
            let part = Int64(fraction) * p
            guard part % 1_000_000 == 0 else { return nil }
            let (t, o2) = v.addingReportingOverflow(part / 1_000_000)
            return o2 ? nil : t
        }
        let d = Money.pow10(-shift)
        return fraction == 0 && minorUnits % d == 0 ? minorUnits / d : nil
    }

    /// The amount in milliunits, as Apple reports it.
    public var milliunits: Int64? { storeAmount(in: .milliunits) }

    /// The exact sum, in the same currency; nil on overflow.
    public func adding(_ other: Money) -> Money? {
        precondition(other.currency == currency, "adding \(other.currency) to \(currency)")
        let (w, o) = minorUnits.addingReportingOverflow(other.minorUnits)
        guard !o else { return nil }
        return Money(minorUnits: w, fraction: Int64(fraction) + Int64(other.fraction), currency: currency)
    }

    /// The amount with its sign turned.
    public var negated: Money {
        var m = self
        m.minorUnits = minorUnits == .min ? .max : -minorUnits
        m.fraction = -fraction
        return m
    }

    static func pow10(_ n: Int) -> Int64 { (0..<n).reduce(1) { r, _ in r * 10 } }

    /// `18.00 CNY`, `600 JPY`, `-1.250 KWD`, `1.995 USD` (an inexact store amount): exact decimal text.
    public var description: String { "\(decimalText) \(currency.code)" }

    /// The amount in major units as exact decimal text: `18.00`, `600`, `1.995`, `-0.0005`.
    public var decimalText: String {
        let e = currency.exponent
        let negative = minorUnits < 0 || fraction < 0
        let m = minorUnits.magnitude
        let d = UInt64(Money.pow10(e))
        let text =
            (e > 0 ? "\(m / d)." + Money.padded(m % d, e) : "\(m)")
            + (fraction == 0 ? "" : (e == 0 ? "." : "") + restDigits)
        return (negative ? "-" : "") + text
    }

    /// The amount in minor units as exact decimal text: `199`, `199.5` (what a CSV of minor units shows).
    public var minorUnitsText: String {
        let negative = minorUnits < 0 || fraction < 0
        return (negative ? "-" : "") + "\(minorUnits.magnitude)" + (fraction == 0 ? "" : "." + restDigits)
    }

    /// The millionths below a minor unit as digits, without trailing zeros (`5` for 500000).
    private var restDigits: String {
        var rest = Money.padded(UInt64(fraction.magnitude), 6)
        while rest.hasSuffix("0") { rest.removeLast() }
        return rest
    }

    static func padded(_ v: UInt64, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Reads `decimalText`'s form (`1.995`, `-3`, `0.5`) exactly; nil for more digits than a
    /// millionth of a minor unit, or another form.
    public init?(decimalText text: String, currency: Currency) {
        var t = Substring(text)
        let negative = t.hasPrefix("-")
        if negative { t = t.dropFirst() }
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let intPart = parts.first, !intPart.isEmpty, intPart.allSatisfy(\.isASCII),
            let whole = Int64(intPart), whole >= 0
        else {
            return nil
        }
        let frac = parts.count == 2 ? parts[1] : ""
        guard parts.count == 1 || !frac.isEmpty, frac.count <= currency.exponent + 6,
            frac.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let digits = String(frac) + String(repeating: "0", count: currency.exponent + 6 - frac.count)
        let minorDigits = digits.prefix(currency.exponent), rest = digits.dropFirst(currency.exponent)
        let (scaled, o) = whole.multipliedReportingOverflow(by: Money.pow10(currency.exponent))
        guard !o, let minorPart = minorDigits.isEmpty ? 0 : Int64(minorDigits), let millionths = Int64(rest) else {
            return nil
        }
        let (units, o2) = scaled.addingReportingOverflow(minorPart)
        guard !o2 else { return nil }
        self.init(minorUnits: units, currency: currency)
        self.fraction = Int32(millionths)
        if negative { self = self.negated }
    }
}

/// The unit a store signs an amount in, finer than minor units: Apple milliunits (thousandths of
/// the major unit), Google micros (millionths of it). WeChat signs minor units (fen) themselves.
public enum StoreAmountUnit: String, Sendable, Hashable, CaseIterable {
    case milliunits, micros

    /// Digits after the major unit's point.
    func digits(_ currency: Currency) -> Int { self == .milliunits ? 3 : 6 }

}

extension Money {
    /// `self * num / den` for `0 <= num <= den`, to a millionth of a minor unit, rounded down: a
    /// share never larger than the amount (a prorated refund, a voided quantity's price).
    public func share(_ num: Int64, _ den: Int64) -> Money {
        let q = Audit.share(millionths, num, den)
        return Money(minorUnits: q / 1_000_000, fraction: q % 1_000_000, currency: currency) ?? self
    }
}

/// `{"minorUnits": 199, "currency": {...}, "fraction": 500000}`; the fraction only when not 0.
extension Money: Codable {
    private enum CodingKeys: String, CodingKey { case minorUnits, currency, fraction }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            minorUnits: try c.decode(Int64.self, forKey: .minorUnits),
            currency: try c.decode(Currency.self, forKey: .currency))
        fraction = try c.decodeIfPresent(Int32.self, forKey: .fraction) ?? 0
        guard fraction.magnitude < 1_000_000, fraction == 0 || (fraction < 0) == (minorUnits < 0) || minorUnits == 0
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .fraction, in: c, debugDescription: "fraction \(fraction) of \(minorUnits)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(minorUnits, forKey: .minorUnits)
        try c.encode(currency, forKey: .currency)
        try c.encodeIfPresent(fraction == 0 ? nil : fraction, forKey: .fraction)
    }
}

extension Money: PayloadValue {
    public static let schemaName = "money"

    static let about =
        "An amount in integer minor units (600 CNY is 6.00 yuan). A store amount that is not a whole number of minor "
        + "units (Apple's USD 1995 milliunits is 199.5 cents) is kept exactly: amount is its whole minor units (toward zero) and exact "
        + "its decimal text in major units (\"1.995\"). Apple's storeMilliunits or Google's storeMicros may be given as "
        + "the store signed the amount: they must agree with amount (and exact), and set exact when it is not whole."

    /// `{"amount": 199, "currency": "USD", "exact": "1.995"}`: exact only for an inexact amount.
    /// `storeMilliunits` or `storeMicros`, when given, must agree with `amount` and set the exact
    /// rest; only amount, currency and exact are written back.
    static let fields = FieldTable<Money>(
        Money(minorUnits: 0, currency: Currency.placeholder),
        [
            .int(
                "amount", \.minorUnits, min: 0, max: maximumMinorUnits,
                "Minor units (cents, fen, yen...); for an inexact amount, its whole minor units."),
            .currency("currency", \.currency),
            FactField(
                "exact", required: false,
                schema: FieldSchema(
                    members: [("type", .string("string")), ("pattern", .string("^[0-9]+(\\.[0-9]+)?$"))],
                    description:
                        "The exact amount in major units as decimal text, when it is not a whole number of minor units (1.995 USD); "
                        + "its whole minor units must equal amount."),
                read: { (r: inout PayloadReader, money: inout Money) throws(FactError) in
                    guard let text = try r.optionalString("exact", maxLength: 40) else { return }
                    guard let m = Money(decimalText: text, currency: money.currency), m.minorUnits >= 0 else {
                        throw r.fail(
                            "exact",
                            "\(Echo.quoted(text, limit: 40)) is not decimal text of at most \(money.currency.exponent + 6) decimals"
                        )
                    }
                    try agree(&r, "exact", m, &money)
                },
                write: { m, w in if !m.isWholeMinorUnits { w.set("exact", m.decimalText) } }),
            storeAmountField(
                "storeMilliunits", .milliunits,
                "Apple's price in milliunits, when the store reported one; must agree with amount."),
            storeAmountField(
                "storeMicros", .micros,
                "Google's price in micros (millionths of the major unit), when the store reported one; must agree with amount."
            ),
        ])

    /// The amount as a store signed it, in `unit`: read, checked against `amount`, never written back.
    private static func storeAmountField(_ key: String, _ unit: StoreAmountUnit, _ doc: String) -> FactField<Money> {
        FactField(
            key, required: false, schema: .integer(min: 0, max: nil, doc),
            read: { (r: inout PayloadReader, money: inout Money) throws(FactError) in
                guard let value = try r.optionalInt(key, min: 0) else { return }
                guard let m = Money(storeAmount: value, unit: unit, currency: money.currency) else {
                    throw r.fail(key, "\(value) \(unit.rawValue) of \(money.currency.code) does not fit")
                }
                try agree(&r, key, m, &money)
            },
            write: { _, _ in })
    }

    /// An exact amount `m` read from `key` must agree with the whole minor units in `money`, and
    /// with any exact rest already read; it then stands.
    private static func agree(
        _ r: inout PayloadReader, _ key: String, _ m: Money, _ money: inout Money
    ) throws(FactError) {
        guard m.minorUnits == money.minorUnits, money.isWholeMinorUnits || m.fraction == money.fraction else {
            throw r.fail(key, "is \(m), but amount says \(money)")
        }
        money = m
    }

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
