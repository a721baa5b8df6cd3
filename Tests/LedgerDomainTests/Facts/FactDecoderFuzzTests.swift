import Foundation
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios
import Testing

/// A bounded fuzz run over the fact decoder: the payloads of every scenario's facts, changed at
/// random (a field dropped, a value of another type or an extreme one put in), a fixed number of
/// times from a seed. The decoder never crashes; what it accepts round-trips through its payload;
/// what it refuses names a field.
@Suite("Fuzz: fact decoder")
struct FactDecoderFuzzTests {
    static let cases = 10_000

    static let replacements: [JSONValue] = [
        .null, .bool(true), .int(0), .int(-1), .int(Int64.max), .int(Int64.min), .string(""), .string("\u{1B}[31m"),
        .string(String(repeating: "x", count: 5_000)), .string("2026-02-30T00:00:00Z"), .string("CNY"), .array([]), .makeObject([]),
        .makeObject([("amount", .int(600)), ("currency", .string("CNY"))]), .makeObject([("amount", .int(-5)), ("currency", .string("XYZ"))]),
    ]

    static func mutate(_ v: JSONValue, _ g: inout SplitMix64, depth: Int = 0) -> JSONValue {
        guard case .object(let members) = v, !members.isEmpty else {
            return g.below(3) == 0 ? replacements[g.below(replacements.count)] : v
        }
        var pairs = members.map { ($0.key, $0.value) }
        let i = g.below(pairs.count)
        switch g.below(4) {
        case 0: pairs.remove(at: i)
        case 1: pairs[i].1 = replacements[g.below(replacements.count)]
        case 2: pairs[i].1 = mutate(pairs[i].1, &g, depth: depth + 1)
        default: pairs.append(("unexpected\(g.below(3))", replacements[g.below(replacements.count)]))
        }
        return .makeObject(pairs)
    }

    @Test func mutatedPayloadsNeverCrashTheDecoder() {
        let facts = Scenarios.all.flatMap { $0.facts.map(\.fact) }
        var g = SplitMix64(seed: 42)
        var accepted = 0, refused = 0
        for _ in 0..<Self.cases {
            let fact = facts[g.below(facts.count)]
            let payload = Self.mutate(fact.payload, &g)
            do {
                let decoded = try FactCatalogue.decode(type: fact.typeName, schemaVersion: FactCatalogue.currentVersions[fact.typeName]!, payload: payload)
                accepted += 1
                let again = try? FactCatalogue.decode(type: decoded.typeName, schemaVersion: FactCatalogue.currentVersions[decoded.typeName]!, payload: decoded.payload)
                #expect(again == decoded, "\(fact.typeName): \(payload.compactText.prefix(300))")
            } catch {
                refused += 1
                #expect(!error.field.isEmpty || !error.message.isEmpty)
            }
        }
        #expect(accepted > 0 && refused > 0, "\(accepted) accepted, \(refused) refused")
    }
}

