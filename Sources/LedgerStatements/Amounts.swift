import LedgerCore
import LedgerDomain

/// Decimal text in the stores' files, read exactly into minor units (never through floating point).
enum Amounts {
    /// `"12.30"`, `"-0.06"`, `"600"` in `currency`: more decimals than the currency has are refused
    /// unless they are zeros (`"6.000"` CNY is 600).
    static func minorUnits(_ text: String, _ currency: Currency) -> Int64? {
        scaled(text, decimals: currency.exponent, whole: 15)
    }

    /// As ``minorUnits(_:_:)``, and the whole part may be grouped in thousands with commas
    /// (`"1,234.56"`), as a spreadsheet that re-exports a report may write it. Any other comma is
    /// refused, never guessed: a decimal comma (`"1,99"`, `"1.000,00"`), and `"1,234"` in a currency
    /// of three decimals, which could be either.
    static func groupedMinorUnits(_ text: String, _ currency: Currency) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard t.contains(",") else { return minorUnits(t, currency) }
        var number = Substring(t)
        if number.first == "-" || number.first == "+" { number = number.dropFirst() }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let groups = parts[0].split(separator: ",", omittingEmptySubsequences: false)
        // Commas only in the whole part (`1.000,00`, a point grouping thousands, is refused).
        guard groups.count > 1, parts.count == 1 || !parts[1].contains(","), (1...3).contains(groups[0].count),
            groups.dropFirst().allSatisfy({ $0.count == 3 }), parts.count == 2 || currency.exponent != 3
        else { return nil }
        return minorUnits(t.replacingOccurrences(of: ",", with: ""), currency)
    }

    /// `"0.32000"`, `"-0.06"` in millionths of the major unit (at most six decimals), exactly.
    static func micros(_ text: String) -> Int64? { scaled(text, decimals: 6, whole: 12) }

    /// Decimal text as an integer of `decimals` places: more places are refused unless they are
    /// zeros; at most `whole` digits before the point.
    static func scaled(_ text: String, decimals: Int, whole maxWhole: Int) -> Int64? {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        var negative = false
        if s.first == "-" {
            negative = true
            s = s.dropFirst()
        } else if s.first == "+" {
            s = s.dropFirst()
        }
        let parts = s.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), whole.count <= maxWhole else {
            return nil
        }
        var frac = parts.count > 1 ? String(parts[1]) : ""
        guard frac.allSatisfy(\.isASCIIDigit), parts.count == 1 || !frac.isEmpty else { return nil }
        while frac.count > decimals {
            guard frac.last == "0" else { return nil }
            frac.removeLast()
        }
        while frac.count < decimals { frac += "0" }
        guard let v = Int64(whole + frac) else { return nil }
        return negative ? -v : v
    }

    /// Millionths of the major unit as decimal text, at least `decimals` places (WeChat prints fees
    /// to five: `320010` is `"0.32001"`, `180000` is `"0.18000"`; a sixth place only when not zero).
    static func microsText(_ micros: Int64, decimals: Int) -> String {
        let m = micros.magnitude
        var frac = String(m % 1_000_000)
        while frac.count < 6 { frac = "0" + frac }
        while frac.count > decimals && frac.hasSuffix("0") { frac.removeLast() }
        return (micros < 0 ? "-" : "") + "\(m / 1_000_000).\(frac)"
    }

    /// Minor units as decimal text (`1234` CNY is `"12.34"`).
    static func text(_ minor: Int64, _ currency: Currency) -> String {
        let e = currency.exponent
        guard e > 0 else { return String(minor) }
        let m = minor.magnitude
        var d: UInt64 = 1
        for _ in 0..<e { d *= 10 }
        var frac = String(m % d)
        while frac.count < e { frac = "0" + frac }
        return (minor < 0 ? "-" : "") + "\(m / d).\(frac)"
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Times in the stores' files.
enum Times {
    static let day: Int64 = 86_400_000_000

    /// The start of the day holding `t`, in a zone `offsetSeconds` east of UTC.
    static func dayStart(_ t: Timestamp, offsetSeconds: Int64) -> Timestamp {
        let local = t.microseconds + offsetSeconds * 1_000_000
        let floored = local >= 0 ? local / day * day : ((local + 1) / day - 1) * day
        return Timestamp(microsecondsSince1970: floored - offsetSeconds * 1_000_000)
    }

    /// `"2026-03-02 09:15:07"` in a zone `offset` (`"+08:00"`).
    static func local(_ text: String, offset: String) -> Timestamp? {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard t.count == 19, t.dropFirst(10).first == " " else { return nil }
        return Timestamp(t.prefix(10) + "T" + t.dropFirst(11) + offset)
    }

    /// `t` as `"2026-03-02 09:15:07"` in a zone `offsetSeconds` east of UTC.
    static func localText(_ t: Timestamp, offsetSeconds: Int64) -> String {
        let shifted = Timestamp(microsecondsSince1970: t.microseconds + offsetSeconds * 1_000_000).iso8601
        return String(shifted.prefix(10)) + " " + String(shifted.dropFirst(11).prefix(8))
    }

    /// Whole milliseconds since 1970, as a JSON number or a string of digits (Google's int64 style);
    /// nil (not a time) beyond what microseconds since 1970 can hold.
    static func millis(_ v: JSONValue?) -> Timestamp? {
        guard let i = v?.intValue ?? v?.stringValue.flatMap({ Int64($0) }), i.magnitude <= UInt64(Int64.max / 1000)
        else {
            return nil
        }
        return Timestamp(millisecondsSince1970: i)
    }

    static func millisValue(_ t: Timestamp) -> Int64 { t.microseconds / 1000 }
}
