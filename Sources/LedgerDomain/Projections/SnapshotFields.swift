import Foundation
import LedgerCore

// How views write their fields into the fold's snapshot (``BinaryFields``): the helpers every
// view's declaration uses (timestamps, money, enums, positions...). Each view declares its own
// fields beside it, in its area (`Orders/OrderView+Snapshot.swift` and the like).

extension BinaryWriter {
    func timestamp(_ t: Timestamp) { int(t.microseconds) }
    func timestamp(_ t: Timestamp?) { optional(t) { self.int($0.microseconds) } }
    func money(_ m: Money) {
        int(m.minorUnits)
        string(m.currency.code)
        int(Int64(m.currency.exponent))
        int(Int64(m.fraction))
    }
    func raw<E: RawRepresentable>(_ e: E) where E.RawValue == String { string(e.rawValue) }
    func open<E: OpenEnum>(_ e: E) { string(e.raw) }
    func string(_ s: String?) { optional(s) { self.string($0) } }
    func int(_ i: Int64?) { optional(i) { self.int($0) } }
    func ints(_ xs: [Int64]) { array(xs) { self.int($0) } }
    /// As ``array(_:_:)`` writes an array.
    func few<V>(_ xs: Few<V>, _ write: (V) -> Void) {
        count(xs.count)
        for x in xs { write(x) }
    }
    /// As ``ints(_:)`` writes an array of them.
    func positions(_ ps: PositionList) {
        count(ps.count)
        for p in ps { int(p) }
    }

    func entitlement(_ e: Entitlement) {
        switch e {
        case .coins(let n):
            int(0); int(n)
        case .feature(let f):
            int(1); string(f)
        case .subscription(let entitlement, let group, let periodDays, let rank):
            int(2); string(entitlement); string(group); int(periodDays); int(rank)
        case .period(let entitlement, let days):
            int(3); string(entitlement); int(days)
        }
    }
}

extension BinaryReader {
    func timestamp() throws -> Timestamp { Timestamp(microsecondsSince1970: try int()) }
    func optionalTimestamp() throws -> Timestamp? { try optional { try timestamp() } }
    func money() throws -> Money {
        let units = try int()
        let code = try string()
        let exponent = try int()
        guard let currency = Currency(code), Int64(currency.exponent) == exponent else { throw invalid("currency \(code.prefix(20)) with exponent \(exponent)") }
        let fraction = try int()
        guard fraction.magnitude < 1_000_000, let m = Money(minorUnits: units, fraction: fraction, currency: currency), m.fraction == fraction else {
            throw invalid("money \(units) with fraction \(fraction)")
        }
        return m
    }
    func raw<E: RawRepresentable>(_ type: E.Type = E.self) throws -> E where E.RawValue == String {
        let s = try string()
        guard let e = E(rawValue: s) else { throw invalid("\(E.self) \(s)") }
        return e
    }
    func open<E: OpenEnum>(_ type: E.Type = E.self) throws -> E { E(raw: try string()) }
    func optionalString() throws -> String? { try optional { try string() } }
    /// A UUID written as its text (as views kept it before they kept the UUID).
    func uuid() throws -> UUID {
        var text = try string()
        guard let u = text.withUTF8({ PayloadReader.uuid($0) }) else { throw invalid("UUID \(text.prefix(60))") }
        return u
    }
    func optionalInt() throws -> Int64? { try optional { try int() } }
    /// An optional integer or timestamp a view keeps compact (``CompactInt64``): `Int64.min`,
    /// which it cannot hold, is refused here rather than stop the fold.
    func compactInt() throws -> Int64? {
        let i = try optionalInt()
        guard i != .min else { throw invalid("Int64.min where a view keeps its optional values compact") }
        return i
    }
    func compactTimestamp() throws -> Timestamp? { try compactInt().map(Timestamp.init(microsecondsSince1970:)) }
    func ints() throws -> [Int64] { try array { try int() } }
    func few<V>(_ read: () throws -> V) throws -> Few<V> {
        var xs = Few<V>()
        for _ in 0..<(try count()) { xs.append(try read()) }
        return xs
    }
    func positions() throws -> PositionList {
        var ps = PositionList()
        for _ in 0..<(try count()) { ps.append(try int()) }
        return ps
    }

    func entitlement() throws -> Entitlement {
        switch try int() {
        case 0: return .coins(try int())
        case 1: return .feature(try string())
        case 2: return .subscription(entitlement: try string(), group: try string(), periodDays: try int(), rank: try int())
        case 3: return .period(entitlement: try string(), days: try int())
        case let tag: throw invalid("entitlement tag \(tag)")
        }
    }
}
