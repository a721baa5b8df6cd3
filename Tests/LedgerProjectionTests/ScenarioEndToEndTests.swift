import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerLog
@testable import LedgerProjection
import LedgerScenarios
import LedgerTesting
import Testing

/// The release scenarios end to end: appended through the store (re-deliveries
/// included), projected into PostgreSQL by the projector, and read back from the read models.
@Suite("Scenarios end to end", .timeLimit(.minutes(2)))
struct ScenarioEndToEndTests {
    @Test("scenario through PostgreSQL", arguments: Array(1...26))
    func scenario(_ number: Int) async throws {
        let scenario = Scenarios.scenario(number)
        try await TestDatabase.withSchema("scenario\(number)") { config in
            var c = config
            c.validation = FactCatalogue.validation()
            let store = try await EventStore.open(c)
            let appended = try await store.append(scenario.events())
            #expect(appended.allSatisfy { !$0.alreadyStored })
            let redelivered = scenario.redeliveryEvents()
            if !redelivered.isEmpty {
                // A store or app re-delivering the same fact gets the original position back.
                let again = try await store.append(redelivered)
                #expect(again.allSatisfy { $0.alreadyStored })
            }
            let projector = try await Projector.start(store)
            try await projector.catchUp(batchSize: 3)
            await projector.close()
            let problems = try await Self.mismatches(scenario.expected, store)
            #expect(problems.isEmpty, "\(scenario): \(problems.joined(separator: "; "))")
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
            // The audit over the stored log reports exactly the scenario's documented findings.
            let audit = try await LogReplay(store).audit()
            #expect(
                audit.findings.map(\.kind.rawValue).sorted() == scenario.expected.auditFindings.sorted(), "\(scenario)")
            await store.close()
        }
    }

    static func mismatches(_ e: LedgerScenarios.Expectation, _ store: EventStore) async throws -> [String] {
        var out: [String] = []
        func check(_ what: String, _ actual: String?, _ expected: String?) {
            if actual != expected { out.append("\(what): \(actual ?? "null"), expected \(expected ?? "null")") }
        }
        for (id, o) in e.orders {
            let r = try await LogReplay(store).queryReadModels(
                "SELECT status, binding_method, product_mismatch::text, transaction_id FROM $schema.rm_orders WHERE order_id = $1",
                [.text(id)])
            guard r.count == 1 else {
                out.append("order \(id): no row")
                continue
            }
            check("order \(id) status", r.string(0, 0), o.status.rawValue)
            check("order \(id) binding", r.string(0, 1), o.bindingMethod?.rawValue)
            check("order \(id) mismatch", r.string(0, 2), String(o.productMismatch))
            if let tx = o.transactionId { check("order \(id) tx", r.string(0, 3), tx) }
        }
        for (id, t) in e.transactions {
            let r = try await LogReplay(store).queryReadModels(
                """
                SELECT (verified_position IS NOT NULL)::text, user_id, order_id, owed_units::text, granted_units::text, revoked_units::text, owed_status
                FROM $schema.rm_transactions WHERE transaction_key = $1
                """, [.text(id)])
            guard r.count == 1 else {
                out.append("transaction \(id): no row")
                continue
            }
            check("tx \(id) verified", r.string(0, 0), String(t.verified))
            check("tx \(id) user", r.string(0, 1), t.userId)
            check("tx \(id) order", r.string(0, 2), t.orderId)
            check("tx \(id) owed", r.string(0, 3), String(t.owedUnits))
            check("tx \(id) granted", r.string(0, 4), String(t.grantedUnits))
            check("tx \(id) revoked", r.string(0, 5), String(t.revokedUnits))
            check("tx \(id) status", r.string(0, 6), t.status.rawValue)
        }
        for (id, u) in e.users {
            let r = try await LogReplay(store).queryReadModels(
                "SELECT coin_balance::text, (negative_since IS NOT NULL)::text, array_to_string(features, ',') FROM $schema.rm_users WHERE user_id = $1",
                [.text(id)])
            guard r.count == 1 else {
                out.append("user \(id): no row")
                continue
            }
            check("user \(id) balance", r.string(0, 0), String(u.coinBalance))
            check("user \(id) negative", r.string(0, 1), String(u.negativeFlagged))
            check("user \(id) features", r.string(0, 2), u.ownedFeatures.joined(separator: ","))
            for d in u.remaining {
                let p = try await LogReplay(store).queryReadModels(
                    """
                    SELECT greatest(0, floor(extract(epoch FROM ends_at - $3::timestamptz) / 86400))::bigint::text
                    FROM $schema.rm_entitlement_periods WHERE user_id = $1 AND entitlement = $2
                    """, [.text(id), .text(d.entitlement), .timestamptz(microsecondsSince1970: d.at.microseconds)])
                check(
                    "user \(id) \(d.entitlement) days left at \(d.at)", p.count == 1 ? p.string(0, 0) : "0",
                    String(d.days))
            }
        }
        for (key, s) in e.subscriptions {
            let r = try await LogReplay(store).queryReadModels(
                "SELECT status, expires_at, product_id FROM $schema.rm_subscriptions WHERE subscription_id = $1",
                [.text(key)])
            guard r.count == 1 else {
                out.append("subscription \(key): no row")
                continue
            }
            check("subscription \(key) status", r.string(0, 0), s.status.description)
            check(
                "subscription \(key) expires", r.string(0, 1).flatMap { Timestamp($0) }?.iso8601, s.expiresAt?.iso8601)
            if let p = s.productId { check("subscription \(key) product", r.string(0, 2), p) }
        }
        let anomalies = try await LogReplay(store).queryReadModels(
            "SELECT kind FROM $schema.rm_anomalies ORDER BY position, kind")
        check(
            "anomalies", anomalies.rows.compactMap { $0[0] }.joined(separator: ","),
            e.anomalyKinds.joined(separator: ","))
        return out
    }
}
