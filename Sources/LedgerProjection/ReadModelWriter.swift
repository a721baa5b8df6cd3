import Foundation
import LedgerCore
import LedgerLog
import LedgerDomain
import LedgerPostgres
import Logging
import Synchronization

/// Turns views into rows and writes them.
enum ReadModelWriter {
    /// Replaces the rows of the changed keys (delete, then COPY).
    static func write(
        _ model: ReadModel, changes: Projections.Changes, newAnomalies: [Anomaly], from p: Projections,
        schema: String, on conn: isolated PostgresConnection
    ) throws {
        func replace(
            _ table: String, _ keyColumn: String, _ keys: Set<String>, _ row: (String, inout RowWriter) -> Void
        ) throws {
            guard !keys.isEmpty else { return }
            let sorted = keys.sorted()
            _ = try conn.query("DELETE FROM \(schema).\(table) WHERE \(keyColumn) = ANY($1)", [.textArray(sorted)])
            var w = RowWriter()
            for k in sorted { row(k, &w) }
            try conn.copyIn("COPY \(schema).\(table) FROM STDIN", chunks: [w.out])
        }
        switch model {
        case .orders:
            try replace("rm_orders", "order_id", changes.orders) { k, w in
                if let o = p.orders[k] { p.orderRow(o, into: &w) }
            }
        case .transactions:
            // A product fact marks the transactions of that product as changed.
            try replace("rm_transactions", "transaction_key", changes.transactions) { k, w in
                if let t = p.transactions[k] { p.transactionRow(t, into: &w) }
            }
        case .subscriptions:
            try replace("rm_subscriptions", "subscription_id", changes.subscriptions) { k, w in
                if let s = p.subscriptions[k] { p.subscriptionRow(s, into: &w) }
            }
        case .entitlements:
            try replace("rm_users", "user_id", changes.users) { k, w in if let u = p.users[k] { p.userRow(u, into: &w) }
            }
            try replace("rm_entitlement_periods", "user_id", changes.users) { k, w in
                if let u = p.users[k] { p.periodRows(u, into: &w) }
            }
        case .anomalies:
            guard !newAnomalies.isEmpty else { return }
            var w = RowWriter()
            for a in newAnomalies { Projections.anomalyRow(a, into: &w) }
            try conn.copyIn("COPY \(schema).rm_anomalies FROM STDIN", chunks: [w.out])
        }
    }
}
