import Foundation
import LedgerCore
import LedgerFoldStore

// How views write the domain's values into the fold's snapshot (``BinaryFields``): money, open
// enums, entitlements, UUIDs. The storage engine's helpers (timestamps, optionals, lists,
// positions) are in LedgerFoldStore. Each view declares its own fields beside it, in its area
// (`Orders/OrderView+Snapshot.swift` and the like).

extension BinaryWriter {
    func money(_ m: Money) {
        int(m.minorUnits)
        string(m.currency.code)
        int(Int64(m.currency.exponent))
        int(Int64(m.fraction))
    }
    func open<E: OpenEnum>(_ e: E) { string(e.raw) }

    func entitlement(_ e: Entitlement) {
        switch e {
        case .coins(let n):
            int(0)
            int(n)
        case .feature(let f):
            int(1)
            string(f)
        case .subscription(let entitlement, let group, let periodDays, let rank):
            int(2)
            string(entitlement)
            string(group)
            int(periodDays)
            int(rank)
        case .period(let entitlement, let days):
            int(3)
            string(entitlement)
            int(days)
        }
    }
}

extension BinaryReader {
    func money() throws -> Money {
        let units = try int()
        let code = try string()
        let exponent = try int()
        guard let currency = Currency(code), Int64(currency.exponent) == exponent else {
            throw invalid("currency \(code.prefix(20)) with exponent \(exponent)")
        }
        let fraction = try int()
        guard fraction.magnitude < 1_000_000, let m = Money(minorUnits: units, fraction: fraction, currency: currency),
            m.fraction == fraction
        else {
            throw invalid("money \(units) with fraction \(fraction)")
        }
        return m
    }
    func open<E: OpenEnum>(_ type: E.Type = E.self) throws -> E { E(raw: try string()) }
    /// A UUID written as its text (as views kept it before they kept the UUID).
    func uuid() throws -> UUID {
        var text = try string()
        guard let u = text.withUTF8({ PayloadReader.uuid($0) }) else { throw invalid("UUID \(text.prefix(60))") }
        return u
    }

    func entitlement() throws -> Entitlement {
        switch try int() {
        case 0: return .coins(try int())
        case 1: return .feature(try string())
        case 2:
            return .subscription(entitlement: try string(), group: try string(), periodDays: try int(), rank: try int())
        case 3: return .period(entitlement: try string(), days: try int())
        case let tag: throw invalid("entitlement tag \(tag)")
        }
    }
}
