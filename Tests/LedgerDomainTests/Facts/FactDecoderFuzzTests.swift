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
        .string(String(repeating: "x", count: 5_000)), .string("2026-02-30T00:00:00Z"), .string("CNY"), .array([]),
        .makeObject([]),
        .makeObject([("amount", .int(600)), ("currency", .string("CNY"))]),
        .makeObject([("amount", .int(-5)), ("currency", .string("XYZ"))]),
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
                let decoded = try FactCatalogue.decode(
                    type: fact.typeName, schemaVersion: FactCatalogue.currentVersions[fact.typeName]!, payload: payload)
                accepted += 1
                let again = try? FactCatalogue.decode(
                    type: decoded.typeName, schemaVersion: FactCatalogue.currentVersions[decoded.typeName]!,
                    payload: decoded.payload)
                #expect(again == decoded, "\(fact.typeName): \(payload.compactText.prefix(300))")
            } catch {
                refused += 1
                #expect(!error.field.isEmpty || !error.message.isEmpty)
            }
        }
        #expect(accepted > 0 && refused > 0, "\(accepted) accepted, \(refused) refused")
    }

    /// The replay decodes stored payloads from their bytes: whatever the text (as PostgreSQL prints
    /// it, compact, or mangled), it gives the fact, or the error, that decoding the parsed value gives.
    @Test func payloadsReadFromTheirBytesDecodeAsTheirValues() {
        let facts = Scenarios.all.flatMap { $0.facts.map(\.fact) }
        var g = SplitMix64(seed: 7)
        var same = 0, notJSON = 0
        // Few slots: product ids, mutated ones among them, take each other's places all the time.
        let shared = SharedStrings(slots: 4)
        for n in 0..<Self.cases {
            let fact = facts[g.below(facts.count)]
            let version = FactCatalogue.currentVersions[fact.typeName]!
            let payload = n % 3 == 0 ? fact.payload : Self.mutate(fact.payload, &g)
            var text = n % 2 == 0 ? payload.canonicalText : payload.compactText
            let mangled = n % 7 == 0
            if mangled { text = Self.mangle(text, &g) }
            let fromBytes = Result { () throws(FactError) in
                try FactCatalogue.decode(
                    type: fact.typeName, schemaVersion: version, json: Array(text.utf8),
                    shared: n % 2 == 0 ? shared : nil)
            }
            guard let value = try? JSONValue.parse(text) else {
                notJSON += 1
                guard case .failure(let e) = fromBytes else {
                    Issue.record("accepted text that is not JSON: \(text.prefix(300))")
                    continue
                }
                #expect(e.field == "payload" && e.message.hasPrefix("is not JSON: line "), "\(e)")
                continue
            }
            let fromValue = Result { () throws(FactError) in
                try FactCatalogue.decode(type: fact.typeName, schemaVersion: version, payload: value)
            }
            switch (fromBytes, fromValue) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(text.prefix(300))")
            case (.failure(let a), .failure(let b)):
                // A mangled text may list members out of PostgreSQL's order: then another unknown
                // member can be the one named first.
                if !mangled { #expect(a == b, "\(text.prefix(300))") }
            default: Issue.record("bytes \(fromBytes), value \(fromValue): \(text.prefix(300))")
            }
            same += 1
        }
        #expect(same > Self.cases / 2 && notJSON > 0, "\(same) compared, \(notJSON) not JSON")
    }

    /// One or two bytes of `text` changed: a quote, backslash, escape, digit or brace put in or taken out.
    static func mangle(_ text: String, _ g: inout SplitMix64) -> String {
        var u = Array(text.utf8)
        let pieces: [[UInt8]] = [
            "\"", "\\", "\\u0041", "\\n", "{", "}", "[", "0", "-", " ", ",", ":", "\u{7F}", "é", "\\ud83d\\ude00",
        ].map { Array($0.utf8) }
        for _ in 0..<(1 + g.below(2)) {
            let i = g.below(u.count + 1)
            if g.below(2) == 0, i < u.count {
                u.remove(at: i)
            } else {
                u.insert(contentsOf: pieces[g.below(pieces.count)], at: i)
            }
        }
        return String(decoding: u, as: UTF8.self)
    }
}
