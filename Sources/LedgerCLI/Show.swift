import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerReport
import LedgerPostgres
import LedgerLog
import LedgerProjection

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an order, a user or a subscription from the read models, with the facts behind it.",
        discussion: paragraphs(
            """
            KIND is order, user or subscription (a subscription id is CHANNEL:ORIGINAL_TRANSACTION_ID, e.g.
            appstore:2000000123456789). Reads the read models as the projector or the last rebuild left them
            (run `ledger project` or `ledger rebuild` first). Exit 1 when nothing is found.
            """))

    enum Kind: String, ExpressibleByArgument, CaseIterable { case order, user, subscription }

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "order, user or subscription.")
    var kind: Kind

    @Argument(help: "The order id, user id or subscription id.")
    var id: String

    @Flag(help: "Print one JSON object instead of tables.")
    var json = false

    func run() async throws {
        var found = true
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .reader))
            do {
                let out = try await render(store)
                if let out {
                    print(out, terminator: "")
                } else {
                    Diagnostics.say(
                        "ledger: no \(kind.rawValue) '\(id)' in the read models (checkpoints: \(try await LogReplay(store).checkpoints().map { "\($0.key.rawValue)=\($0.value)" }.sorted().joined(separator: ", ")))"
                    )
                    found = false
                }
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
        if !found { throw Exit.verificationFailed }
    }

    /// Rows of a read-model query as JSON objects (PostgreSQL's row_to_json).
    func rows(_ store: EventStore, _ table: String, where condition: String, order: String) async throws -> [JSONValue]
    {
        let r = try await LogReplay(store).queryReadModels(
            "SELECT row_to_json(t)::text FROM $schema.\(table) t WHERE \(condition) ORDER BY \(order)", [.text(id)])
        return r.rows.compactMap { $0[0].flatMap { try? JSONValue.parse($0) } }
    }

    func render(_ store: EventStore) async throws -> String? {
        var sections: [(String, [JSONValue])] = []
        switch kind {
        case .order:
            let o = try await rows(store, "rm_orders", where: "order_id = $1", order: "order_id")
            guard !o.isEmpty else { return nil }
            sections.append(("order", o))
            sections.append(
                (
                    "transactions",
                    try await rows(store, "rm_transactions", where: "order_id = $1", order: "transaction_id")
                ))
        case .subscription:
            let s = try await rows(store, "rm_subscriptions", where: "subscription_id = $1", order: "subscription_id")
            guard !s.isEmpty else { return nil }
            sections.append(("subscription", s))
            sections.append(
                (
                    "transactions",
                    try await rows(
                        store, "rm_transactions",
                        where:
                            "original_transaction_id = substr($1, strpos($1, ':') + 1) AND channel || ':' || original_transaction_id = $1",
                        order: "purchase_date, transaction_id")
                ))
        case .user:
            let u = try await rows(store, "rm_users", where: "user_id = $1", order: "user_id")
            guard !u.isEmpty else { return nil }
            sections.append(("user", u))
            sections.append(
                (
                    "entitlement periods",
                    try await rows(store, "rm_entitlement_periods", where: "user_id = $1", order: "entitlement")
                ))
            sections.append(
                (
                    "subscriptions",
                    try await rows(store, "rm_subscriptions", where: "user_id = $1", order: "subscription_id")
                ))
            sections.append(("orders", try await rows(store, "rm_orders", where: "user_id = $1", order: "order_id")))
            sections.append(
                (
                    "transactions",
                    try await rows(
                        store, "rm_transactions", where: "user_id = $1", order: "purchase_date, transaction_id")
                ))
        }
        var positions = Set<Int64>()
        for (_, rows) in sections {
            for r in rows {
                if case .array(let ps)? = r["positions"] { ps.compactMap(\.intValue).forEach { positions.insert($0) } }
            }
        }
        let events = try await LogReplay(store).events(at: positions.sorted())
        let timeline: [(RecordedEvent, String)] = events.map { e in
            let summary: String
            do throws(FactError) { summary = try FactCatalogue.decode(e).summary } catch {
                summary = "(undecodable: \(error))"
            }
            return (e, summary)
        }
        if json {
            var members: [(String, JSONValue)] = [("kind", .string(kind.rawValue)), ("id", .string(id))]
            for (name, rows) in sections {
                let key = name.replacingOccurrences(of: " p", with: "P")
                members.append((key, name == kind.rawValue ? rows[0] : .array(rows)))
            }
            members.append(
                (
                    "timeline",
                    .array(
                        timeline.map { e, s in
                            .makeObject([
                                ("position", .int(e.position)), ("occurredAt", .string(e.occurredAt.iso8601)),
                                ("type", .string(e.type)), ("stream", .string(e.stream)), ("summary", .string(s)),
                            ])
                        })
                ))
            return JSONValue.makeObject(members).compactText + "\n"
        }
        var out = ""
        for (name, rows) in sections {
            if name == kind.rawValue {
                let table = ["order": "rm_orders", "user": "rm_users", "subscription": "rm_subscriptions"][name]!
                let keyColumn = ["order": "order_id", "user": "user_id", "subscription": "subscription_id"][name]!
                // The column names in table order; the values from the JSON (arrays stay lists).
                let r = try await LogReplay(store).queryReadModels(
                    "SELECT * FROM $schema.\(table) WHERE \(keyColumn) = $1 LIMIT 0", [.text(id)])
                out += "\(name) \(id)\n"
                let width = r.columns.map(\.count).max() ?? 0
                for c in r.columns where c != "positions" {
                    out +=
                        "  " + c.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + Self.text(rows[0][c] ?? .null) + "\n"
                }
                out += "\n"
                continue
            }
            out += "\(name) (\(rows.count))\n"
            if rows.isEmpty {
                out += "  none\n\n"
                continue
            }
            let columns = Self.summaryColumns[name] ?? []
            let body = rows.map { r in columns.map { Self.text(r[$0] ?? .null) } }
            out += Self.indented(textTable(columns, body)) + "\n"
        }
        out += "timeline (\(timeline.count) facts)\n"
        out += Self.indented(
            textTable(
                ["position", "occurredAt", "type", "what"],
                timeline.map { e, s in [String(e.position), e.occurredAt.iso8601, e.type, s] }))
        return out
    }

    /// Every non-empty line indented by two spaces.
    static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "  " + $0 }.joined(
            separator: "\n")
    }

    static let summaryColumns: [String: [String]] = [
        "entitlement periods": ["entitlement", "total_days", "starts_at", "ends_at"],
        "subscriptions": ["subscription_id", "product_id", "status", "expires_at", "auto_renew"],
        "orders": ["order_id", "product_id", "amount", "currency", "status", "binding_method", "product_mismatch"],
        "transactions": [
            "transaction_id", "product_id", "unit", "owed_units", "granted_units", "revoked_units", "owed_status",
            "refund_state",
        ],
    ]

    static func text(_ v: JSONValue) -> String {
        switch v {
        case .null: return "-"
        case .string(let s): return s
        case .int(let i): return String(i)
        case .bool(let b): return b ? "yes" : "no"
        case .array(let a): return a.isEmpty ? "-" : a.map(text).joined(separator: ", ")
        case .object: return v.compactText
        }
    }
}
