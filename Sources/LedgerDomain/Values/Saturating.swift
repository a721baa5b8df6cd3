import LedgerCore

// A log may hold any numbers the append accepted (a 36,600-day period granted 2,918 times, a
// million grants of a billion coins): where a fact's numbers meet, the fold holds them at the
// bounds instead of trapping, so no accepted fact can stop a projector or an audit.

extension Int64 {
    /// `self + other`, held at `Int64.min` or `Int64.max` instead of overflowing.
    public func addingSaturated(_ other: Int64) -> Int64 {
        let (r, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : r
    }

    /// `self - other`, held at the bounds instead of overflowing.
    public func subtractingSaturated(_ other: Int64) -> Int64 {
        let (r, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : r
    }

    /// `self * other`, held at the bounds instead of overflowing.
    public func multipliedSaturated(by other: Int64) -> Int64 {
        let (r, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : r
    }
}

extension Timestamp {
    /// The latest moment an entitlement period may end: 9999-12-31T23:59:59Z.
    public static let latestPeriodEnd = Timestamp(microsecondsSince1970: 253_402_300_799_000_000)

    /// `self` plus `days` whole days, no later than ``latestPeriodEnd``.
    public func addingDaysSaturated(_ days: Int64) -> Timestamp {
        let micros = microseconds.addingSaturated(days.multipliedSaturated(by: 86_400_000_000))
        return Timestamp(microsecondsSince1970: Swift.min(micros, Timestamp.latestPeriodEnd.microseconds))
    }
}
