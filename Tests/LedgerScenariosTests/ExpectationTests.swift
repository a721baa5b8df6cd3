import Foundation
import LedgerCore
@testable import LedgerDomain
import LedgerScenarios
import Testing

/// The scenarios' oracle, `Expectation.mismatches`, says so when an expectation is wrong: each
/// kind of wrong value, on every scenario that has something to get wrong.
@Suite("Expectation oracle")
struct ExpectationTests {
    struct Mutation: Sendable, CustomTestStringConvertible {
        var name: String
        /// What the line must name.
        var mentions: String
        /// Makes the expectation wrong; nil when the scenario has nothing of the kind.
        var apply: @Sendable (LedgerScenarios.Expectation) -> LedgerScenarios.Expectation?
        var testDescription: String { name }
    }

    static let mutations: [Mutation] = [
        Mutation(name: "order status", mentions: "status") { e in
            guard let (id, o) = e.orders.sorted(by: { $0.key < $1.key }).first else { return nil }
            var e = e
            e.orders[id]!.status = OrderStatus.allCases.first { $0 != o.status }!
            return e
        },
        Mutation(name: "order product mismatch", mentions: "productMismatch") { e in
            guard let id = e.orders.keys.sorted().first else { return nil }
            var e = e
            e.orders[id]!.productMismatch.toggle()
            return e
        },
        Mutation(name: "transaction owed units", mentions: "owedUnits") { e in
            guard let id = e.transactions.keys.sorted().first else { return nil }
            var e = e
            e.transactions[id]!.owedUnits += 1
            return e
        },
        Mutation(name: "transaction granted units", mentions: "grantedUnits") { e in
            guard let id = e.transactions.keys.sorted().first else { return nil }
            var e = e
            e.transactions[id]!.grantedUnits += 1
            return e
        },
        Mutation(name: "transaction grants", mentions: "grants") { e in
            guard let id = e.transactions.keys.sorted().first else { return nil }
            var e = e
            e.transactions[id]!.grants += 1
            return e
        },
        Mutation(name: "user coin balance", mentions: "coinBalance") { e in
            guard let id = e.users.keys.sorted().first else { return nil }
            var e = e
            e.users[id]!.coinBalance += 1
            return e
        },
        Mutation(name: "user features", mentions: "ownedFeatures") { e in
            guard let id = e.users.keys.sorted().first else { return nil }
            var e = e
            e.users[id]!.ownedFeatures.append("made-up-feature")
            return e
        },
        Mutation(name: "subscription expiry", mentions: "expiresAt") { e in
            guard let (key, s) = e.subscriptions.sorted(by: { $0.key < $1.key }).first else { return nil }
            var e = e
            e.subscriptions[key]!.expiresAt = Timestamp(microsecondsSince1970: (s.expiresAt?.microseconds ?? 0) + 1)
            return e
        },
        Mutation(name: "anomalies", mentions: "anomalies") { e in
            var e = e
            e.anomalyKinds.append("made-up-anomaly")
            return e
        },
        Mutation(name: "an order that does not exist", mentions: "absent") { e in
            var e = e
            e.orders["no-such-order"] = OrderExpectation(.paid)
            return e
        },
    ]

    @Test("every scenario meets its own expectation", arguments: Scenarios.all)
    func baseline(_ s: Scenario) {
        #expect(s.expected.mismatches(in: s.projections()).isEmpty)
    }

    @Test("a wrong expectation is reported", arguments: mutations)
    func wrongExpectationIsReported(_ m: Mutation) {
        var applied = 0
        for s in Scenarios.all {
            guard let wrong = m.apply(s.expected) else { continue }
            applied += 1
            let lines = wrong.mismatches(in: s.projections())
            #expect(lines.count == 1, "\(s): \(lines)")
            #expect(lines.first?.contains(m.mentions) == true, "\(s): \(lines)")
        }
        #expect(applied > 0, "no scenario has anything for this mutation to change")
    }
}
