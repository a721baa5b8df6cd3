import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres

/// An order or a user as the read models hold it, with the timeline of facts behind it, as one
/// JSON object (what `ledger show --json` prints and the HTTP service returns).
public enum EntityView {
    public enum Kind: String, Sendable, CaseIterable { case order, user }

    /// The view, or nil when the read models do not know the id.
    public static func json(_ store: EventStore, kind: Kind, id: String) async throws -> JSONValue? {
        func rows(_ table: String, where condition: String, order: String) async throws -> [JSONValue] {
            let r = try await LogReplay(store).queryReadModels(
                "SELECT row_to_json(t)::text FROM $schema.\(table) t WHERE \(condition) ORDER BY \(order)", [.text(id)])
            return r.rows.compactMap { $0[0].flatMap { try? JSONValue.parse($0) } }
        }
        var sections: [(String, [JSONValue])] = []
        switch kind {
        case .order:
            let o = try await rows("rm_orders", where: "order_id = $1", order: "order_id")
            guard !o.isEmpty else { return nil }
            sections.append(("order", o))
            sections.append(
                ("transactions", try await rows("rm_transactions", where: "order_id = $1", order: "transaction_id")))
        case .user:
            let u = try await rows("rm_users", where: "user_id = $1", order: "user_id")
            guard !u.isEmpty else { return nil }
            sections.append(("user", u))
            sections.append(
                (
                    "entitlementPeriods",
                    try await rows("rm_entitlement_periods", where: "user_id = $1", order: "entitlement")
                ))
            sections.append(
                ("subscriptions", try await rows("rm_subscriptions", where: "user_id = $1", order: "subscription_id")))
            sections.append(("orders", try await rows("rm_orders", where: "user_id = $1", order: "order_id")))
            sections.append(
                (
                    "transactions",
                    try await rows("rm_transactions", where: "user_id = $1", order: "purchase_date, transaction_id")
                ))
        }
        var positions = Set<Int64>()
        for (_, rows) in sections {
            for r in rows {
                if case .array(let ps)? = r["positions"] { ps.compactMap(\.intValue).forEach { positions.insert($0) } }
            }
        }
        let events = try await LogReplay(store).events(at: positions.sorted())
        var members: [(String, JSONValue)] = [("kind", .string(kind.rawValue)), ("id", .string(id))]
        for (name, rows) in sections {
            members.append((name, name == kind.rawValue ? rows[0] : .array(rows)))
        }
        members.append(
            (
                "timeline",
                .array(
                    events.map { e in
                        let summary: String
                        do throws(FactError) { summary = try FactCatalogue.decode(e).summary } catch {
                            summary = "(undecodable: \(error))"
                        }
                        return .makeObject([
                            ("position", .int(e.position)), ("occurredAt", .string(e.occurredAt.iso8601)),
                            ("recordedAt", .string(e.recordedAt.iso8601)), ("type", .string(e.type)),
                            ("stream", .string(e.stream)), ("eventId", .string(e.eventId.lowercased)),
                            ("summary", .string(summary)),
                        ])
                    })
            ))
        return .makeObject(members)
    }
}
