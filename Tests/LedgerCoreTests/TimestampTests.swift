import Testing
@testable import LedgerCore

/// Expected microsecond values were computed with Python's `datetime`.
@Suite("Timestamp")
struct TimestampTests {
    static let base: Int64 = 1_774_944_900_000_000  // 2026-03-31T08:15:00Z

    static let valid: [(String, Int64)] = [
        ("2026-03-31T08:15:00Z", base),
        ("2026-03-31t08:15:00z", base),
        ("2026-03-31T16:15:00+08:00", base),
        ("2026-03-31T03:15:00-05:00", base),
        ("2026-03-31T13:45:00+05:30", base),
        ("2026-03-31T08:15:00+00:00", base),
        ("2026-03-31T08:15:00-00:00", base),
        ("2026-03-31T09:15:00+01", base),
        ("2026-03-31 08:15:00+00", base),
        ("2026-03-31 08:15:00.123456+00", base + 123_456),
        ("2026-03-31T08:15:00.1Z", base + 100_000),
        ("2026-03-31T08:15:00.12Z", base + 120_000),
        ("2026-03-31T08:15:00.123Z", base + 123_000),
        ("2026-03-31T08:15:00.1234Z", base + 123_400),
        ("2026-03-31T08:15:00.12345Z", base + 123_450),
        ("2026-03-31T08:15:00.123456Z", base + 123_456),
        ("2026-03-31T08:15:00.000001Z", base + 1),
        ("2026-03-31T08:15:00.000000Z", base),
        ("2026-03-31T16:15:00.5+08:00", base + 500_000),
        ("2026-01-01T00:30:00+01:00", 1_767_223_800_000_000),  // 2025-12-31T23:30:00Z
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59.999999Z", -1),
        ("1969-07-20T20:17:40Z", -14_182_940_000_000),
        ("1900-01-01T00:00:00Z", -2_208_988_800_000_000),
        ("1600-02-29T00:00:00Z", -11_670_998_400_000_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000_000),
        ("2000-01-01T00:00:00Z", 946_684_800_000_000),
        ("2000-02-29T12:00:00Z", 951_825_600_000_000),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000_000),
        ("2100-01-01T00:00:00Z", 4_102_444_800_000_000),
        ("9999-12-31T23:59:59.999999Z", 253_402_300_799_999_999),
    ]

    @Test("parses RFC 3339 and PostgreSQL output", arguments: valid)
    func parses(text: String, microseconds: Int64) throws {
        let t = try #require(Timestamp(text))
        #expect(t.microseconds == microseconds)
    }

    static let invalid: [String] = [
        "2026-03-31T08:15:00.1234567Z",  // 7 fractional digits: refused, not rounded
        "2026-03-31 08:15:00.1234560+00",
        "2026-02-30T00:00:00Z",  // Feb 30
        "2026-02-29T00:00:00Z",  // 2026 is not a leap year
        "1900-02-29T00:00:00Z",  // divisible by 100, not by 400
        "2100-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-03-00T00:00:00Z",
        "2026-03-32T00:00:00Z",
        "2026-03-31T24:00:00Z",  // hour 24
        "2026-03-31T08:60:00Z",
        "2026-03-31T08:15:60Z",  // leap seconds are not accepted
        "2026-03-31T08:15:00",  // missing zone
        "2026-03-31T08:15:00.123",  // missing zone after a fraction
        "2026-03-31 08:15:00",
        "2026-03-31T08:15:00.Z",  // empty fraction
        "2026-03-31T08:15:00+24:00",
        "2026-03-31T08:15:00+08:60",
        "2026-03-31T08:15:00+0800",
        "2026-03-31T08:15:00+8",
        "2026-03-31T08:15:00+08:",
        "2026-03-31T08:15:00ZZ",
        "2026-03-31T08:15:00Z ",
        " 2026-03-31T08:15:00Z",
        "2026-03-31X08:15:00Z",
        "2026-03-31T08:15Z",
        "2026-3-31T08:15:00Z",
        "26-03-31T08:15:00Z",
        "2026/03/31T08:15:00Z",
        "2026-03-31",
        "",
        "now",
        "1774944900",
    ]

    @Test("rejects", arguments: invalid)
    func rejects(text: String) {
        #expect(Timestamp(text) == nil)
    }

    static let formatted: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00Z"),
        (base, "2026-03-31T08:15:00Z"),
        (base + 123_000, "2026-03-31T08:15:00.123Z"),  // whole milliseconds: 3 digits
        (base + 100_000, "2026-03-31T08:15:00.100Z"),
        (base + 1_000, "2026-03-31T08:15:00.001Z"),
        (base + 123_456, "2026-03-31T08:15:00.123456Z"),  // otherwise 6 digits
        (base + 123_450, "2026-03-31T08:15:00.123450Z"),
        (base + 1, "2026-03-31T08:15:00.000001Z"),
        (base + 999_999, "2026-03-31T08:15:00.999999Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (-1_000, "1969-12-31T23:59:59.999Z"),
        (-1_000_000, "1969-12-31T23:59:59Z"),
        (-86_400_000_000, "1969-12-31T00:00:00Z"),
        (-14_182_940_000_000, "1969-07-20T20:17:40Z"),
        (-2_208_988_800_000_000, "1900-01-01T00:00:00Z"),
        (-11_670_998_400_000_000, "1600-02-29T00:00:00Z"),
        (-62_135_596_800_000_000, "0001-01-01T00:00:00Z"),
        (951_825_600_000_000, "2000-02-29T12:00:00Z"),
        (1_709_164_800_000_000 + 86_399_999_999, "2024-02-29T23:59:59.999999Z"),
        (1_709_164_800_000_000 + 86_400_000_000, "2024-03-01T00:00:00Z"),
        (253_402_300_799_999_999, "9999-12-31T23:59:59.999999Z"),
    ]

    @Test("iso8601 formatting", arguments: formatted)
    func formats(microseconds: Int64, text: String) throws {
        let t = Timestamp(microsecondsSince1970: microseconds)
        #expect(t.iso8601 == text)
        #expect(t.description == text)
        #expect(try #require(Timestamp(text)) == t)
    }

    @Test(
        "iso8601 round-trips through the parser",
        arguments: [
            Int64(0), 1, -1, 999, -999, 1_000, 123_456_789, -123_456_789, 1_774_944_900_123_456, 1_774_944_900_120_000,
            -2_208_988_799_999_999, 4_102_444_799_999_999, 946_684_799_999_000, 253_402_300_799_999_999,
            -62_135_596_800_000_000,
        ])
    func roundTrip(microseconds: Int64) throws {
        let t = Timestamp(microsecondsSince1970: microseconds)
        #expect(try #require(Timestamp(t.iso8601)) == t)
    }

    @Test("every day from 1599 to 2401 round-trips and steps by one day")
    func everyDay() throws {
        let day: Int64 = 86_400_000_000
        var t = try #require(Timestamp("1599-01-01T00:00:00Z"))
        let end = try #require(Timestamp("2401-01-01T00:00:00Z"))
        var daysInYear: [Int64: Int] = [:]
        var previous: String?
        while t < end {
            let text = t.iso8601
            #expect(text.hasSuffix("T00:00:00Z"))
            #expect(Timestamp(text) == t, "\(text)")
            if let previous, text <= previous { Issue.record("\(text) does not follow \(previous)") }
            daysInYear[Int64(text.prefix(4))!, default: 0] += 1
            previous = text
            t.microseconds += day
        }
        for (year, count) in daysInYear {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            #expect(count == (leap ? 366 : 365), "year \(year)")
        }
        #expect(daysInYear[2000] == 366)
        #expect(daysInYear[1900] == 365)
        #expect(daysInYear[2100] == 365)
        #expect(daysInYear[2024] == 366)
        #expect(daysInYear[2026] == 365)
    }

    @Test(
        "leap days",
        arguments: [
            ("2000-02-29", true), ("2024-02-29", true), ("1600-02-29", true), ("2400-02-29", true),
            ("1996-02-29", true),
            ("1900-02-29", false), ("2100-02-29", false), ("2023-02-29", false), ("2026-02-29", false),
            ("1800-02-29", false),
        ])
    func leapDays(date: String, exists: Bool) {
        #expect((Timestamp(date + "T00:00:00Z") != nil) == exists)
    }

    @Test("millisecond initializer, ordering and hashing")
    func initializersAndOrdering() throws {
        #expect(Timestamp(millisecondsSince1970: 1_774_944_900_123).microseconds == 1_774_944_900_123_000)
        #expect(Timestamp(millisecondsSince1970: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        let a = try #require(Timestamp("2026-03-31T08:15:00Z"))
        let b = try #require(Timestamp("2026-03-31T08:15:00.000001Z"))
        let c = try #require(Timestamp("2026-03-31T16:15:00+08:00"))
        #expect(a < b)
        #expect(!(b < a))
        #expect(a == c)
        #expect(Set([a, b, c]).count == 2)
        #expect([b, a].sorted() == [a, b])
    }

    @Test func wallClockAtAnOffset() {
        let t = Timestamp("2026-03-30T16:00:00Z")!
        #expect(t.wallClock(offsetSeconds: 8 * 3600) == "2026-03-31 00:00 UTC+08:00")
        #expect(t.wallClock(offsetSeconds: 0) == "2026-03-30 16:00 UTC")
        #expect(t.wallClock(offsetSeconds: -7 * 3600) == "2026-03-30 09:00 UTC-07:00")
        #expect(
            Timestamp("2026-01-01T02:00:00Z")!.wallClock(offsetSeconds: -(5 * 3600 + 30 * 60))
                == "2025-12-31 20:30 UTC-05:30")
    }

    /// Pacific time changes at 2:00 local on the second Sunday of March and the first of November
    /// (2026: March 8 and November 1; 2025: March 9 and November 2).
    @Test(arguments: [
        ("2026-03-08T09:59:59Z", -8), ("2026-03-08T10:00:00Z", -7), ("2026-11-01T08:59:59Z", -7),
        ("2026-11-01T09:00:00Z", -8),
        ("2025-03-09T09:59:59Z", -8), ("2025-03-09T10:00:00Z", -7), ("2025-11-02T08:59:59Z", -7),
        ("2025-11-02T09:00:00Z", -8),
        ("2026-01-15T12:00:00Z", -8), ("2026-07-04T12:00:00Z", -7), ("2026-03-01T08:00:00Z", -8),
        ("2026-04-01T07:00:00Z", -7),
    ])
    func pacificOffset(_ instant: String, _ hours: Int64) {
        #expect(Timestamp(instant)!.pacificOffsetSeconds == hours * 3600, "\(instant)")
    }
}
