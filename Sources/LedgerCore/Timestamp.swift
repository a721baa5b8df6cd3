/// An instant with microsecond precision (PostgreSQL's `timestamptz` precision), in UTC.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    public init(microsecondsSince1970: Int64) { self.microseconds = microsecondsSince1970 }
    public init(millisecondsSince1970 ms: Int64) { self.microseconds = ms * 1000 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// RFC 3339 in UTC: `2026-03-31T08:15:00.123456Z` (fraction only when non-zero, 3 or 6 digits).
    public var description: String { iso8601 }

    public var iso8601: String {
        let (days, micros) = Self.floorDivMod(microseconds, 86_400_000_000)
        let (y, m, d) = Self.civil(fromDays: days)
        let secs = micros / 1_000_000
        let frac = micros % 1_000_000
        var s =
            "\(Self.pad(y, 4))-\(Self.pad(m, 2))-\(Self.pad(d, 2))T\(Self.pad(secs / 3600, 2)):\(Self.pad(secs / 60 % 60, 2)):\(Self.pad(secs % 60, 2))"
        if frac != 0 { s += frac % 1000 == 0 ? "." + Self.pad(frac / 1000, 3) : "." + Self.pad(frac, 6) }
        return s + "Z"
    }

    /// The wall-clock time at a fixed offset from UTC, to the minute, with the offset:
    /// `2026-03-31 00:00 UTC+08:00` (`UTC` alone at offset 0).
    public func wallClock(offsetSeconds: Int64) -> String {
        let (days, micros) = Self.floorDivMod(microseconds + offsetSeconds * 1_000_000, 86_400_000_000)
        let (y, m, d) = Self.civil(fromDays: days)
        let minutes = micros / 60_000_000
        let sign = offsetSeconds < 0 ? "-" : "+", o = abs(offsetSeconds) / 60
        let zone = offsetSeconds == 0 ? "UTC" : "UTC\(sign)\(Self.pad(o / 60, 2)):\(Self.pad(o % 60, 2))"
        return
            "\(Self.pad(y, 4))-\(Self.pad(m, 2))-\(Self.pad(d, 2)) \(Self.pad(minutes / 60, 2)):\(Self.pad(minutes % 60, 2)) \(zone)"
    }

    /// The offset of Pacific time (Los Angeles) at this instant: PDT (UTC-7) from the second Sunday
    /// of March, 10:00 UTC, to the first Sunday of November, 09:00 UTC; PST (UTC-8) otherwise.
    public var pacificOffsetSeconds: Int64 {
        let (days, _) = Self.floorDivMod(microseconds, 86_400_000_000)
        let (year, _, _) = Self.civil(fromDays: days)
        /// The day number of the `n`th Sunday of `month` (1970-01-01, day 0, was a Thursday).
        func sunday(_ n: Int64, _ month: Int64) -> Int64 {
            let first = Self.days(fromCivil: year, month, 1)
            let weekday = ((first + 4) % 7 + 7) % 7  // 0 = Sunday
            return first + (7 - weekday) % 7 + (n - 1) * 7
        }
        let hour: Int64 = 3_600_000_000
        let start = sunday(2, 3) * 86_400_000_000 + 10 * hour, end = sunday(1, 11) * 86_400_000_000 + 9 * hour
        return microseconds >= start && microseconds < end ? -7 * 3600 : -8 * 3600
    }

    /// Parses RFC 3339 (`2026-03-31T08:15:00Z`, `...T16:15:00.5+08:00`) and PostgreSQL's output
    /// (`2026-03-31 08:15:00.123456+00`). More than 6 fractional digits is refused, not rounded.
    public init?(_ text: String) {
        var text = text
        guard let t = text.withUTF8({ Timestamp(utf8: $0) }) else { return nil }
        self = t
    }

    /// ``init(_:)`` from the text's UTF-8 bytes.
    public init?(utf8 u: UnsafeBufferPointer<UInt8>) {
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= u.count else { return nil }
            var v: Int64 = 0
            for k in 0..<n {
                let c = u[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < u.count, u[i] == c else { return false }
            i += 1
            return true
        }
        // Four digits; PostgreSQL prints years after 9999 with more (up to 294276), so up to 6.
        var yearDigits = 4
        while yearDigits < 6, i + yearDigits < u.count, u[i + yearDigits] >= 0x30, u[i + yearDigits] <= 0x39 {
            yearDigits += 1
        }
        guard let y = digits(yearDigits), expect(UInt8(ascii: "-")), let mo = digits(2), expect(UInt8(ascii: "-")),
            let d = digits(2)
        else { return nil }
        guard i < u.count, u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: "t") || u[i] == UInt8(ascii: " ") else {
            return nil
        }
        i += 1
        guard let h = digits(2), expect(UInt8(ascii: ":")), let mi = digits(2), expect(UInt8(ascii: ":")),
            let s = digits(2)
        else { return nil }
        guard (1...12).contains(mo), d >= 1, d <= Self.daysInMonth(y, mo), h < 24, mi < 60, s < 60 else { return nil }
        var micros: Int64 = 0
        if i < u.count, u[i] == UInt8(ascii: ".") {
            i += 1
            var n = 0
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 {
                n += 1
                guard n <= 6 else { return nil }
                micros = micros * 10 + Int64(u[i] - 0x30)
                i += 1
            }
            guard n > 0 else { return nil }
            for _ in n..<6 { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        guard i < u.count else { return nil }
        if u[i] == UInt8(ascii: "Z") || u[i] == UInt8(ascii: "z") {
            i += 1
        } else if u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
            let sign: Int64 = u[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2), oh < 24 else { return nil }
            var om: Int64 = 0
            if expect(UInt8(ascii: ":")) {
                guard let m = digits(2), m < 60 else { return nil }
                om = m
            }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == u.count else { return nil }
        let days = Self.days(fromCivil: y, mo, d)
        let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offsetSeconds
        // Beyond Int64 microseconds (after year 294247): not representable, refused.
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (total, overflow2) = scaled.addingReportingOverflow(micros)
        guard !overflow, !overflow2 else { return nil }
        self.microseconds = total
    }

    // Howard Hinnant's civil calendar algorithms (proleptic Gregorian).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The calendar date (year, month, day) of a day number (days since 1970-01-01).
    public static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        civil(fromDays: days)
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
