import Foundation
import LedgerCore
import LedgerFoldStore
import LedgerLog
import LedgerDomain
import LedgerPostgres

// A rebuild's work on the tables themselves (Rebuild.swift): the shadow's indexes, the swap, and
// the checksums and differences --verify compares.
extension LogReplay {
    /// Recreates `indexes` (name, definition, primary) of `table` on its shadow table.
    static func copyIndexes(
        _ indexes: QueryResult, of table: String, to shadow: String, schema plainSchema: String,
        on conn: isolated PostgresConnection
    ) throws {
        let schema = quoteIdentifier(plainSchema)
        for i in 0..<indexes.count {
            guard let name = indexes.string(i, 0), let def = indexes.string(i, 1) else { continue }
            let shadowIndex = name.hasPrefix(table) ? shadow + name.dropFirst(table.count) : shadow + "_" + name
            let sql =
                def
                .replacingOccurrences(
                    of: "INDEX \(quoteIdentifier(name)) ON", with: "INDEX \(quoteIdentifier(shadowIndex)) ON"
                )
                .replacingOccurrences(of: "INDEX \(name) ON", with: "INDEX \(quoteIdentifier(shadowIndex)) ON")
                .replacingOccurrences(of: " ON \(schema).\(table) ", with: " ON \(schema).\(shadow) ")
                .replacingOccurrences(of: " ON \(plainSchema).\(table) ", with: " ON \(schema).\(shadow) ")
            guard sql.contains(" ON \(schema).\(shadow) ") else {
                throw LedgerError.migration(
                    "cannot rebuild index \(name) of \(table) on the shadow table (\(def)); nothing was swapped and the live tables are untouched: if this index was added by hand, drop it or name it after its table"
                )
            }
            try conn.execute(sql)
            if indexes.bool(i, 2) == true {
                try conn.execute(
                    "ALTER TABLE \(schema).\(shadow) ADD CONSTRAINT \(quoteIdentifier(shadowIndex)) PRIMARY KEY USING INDEX \(quoteIdentifier(shadowIndex))"
                )
            }
        }
    }

    /// Replaces the live tables by the shadow ones and sets the checkpoints, in one transaction:
    /// readers see the old tables or the new ones, never a half-built one.
    func swap(
        _ tables: [String], models: [ReadModel], position: Int64, schema: String, _ conn: PostgresConnection
    ) async throws {
        let plainSchema = configuration.schema
        try await conn.withIsolation { conn in
            try conn.transaction { conn in
                try conn.execute("SET LOCAL lock_timeout = '30s'")
                for t in tables {
                    try conn.execute("DROP TABLE \(schema).\(t)")
                    try conn.execute("ALTER TABLE \(schema).\(t)_rebuild RENAME TO \(t)")
                    let idx = try conn.query(
                        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2",
                        [.text(plainSchema), .text(t)])
                    for i in 0..<idx.count {
                        guard let name = idx.string(i, 0), name.hasPrefix(t + "_rebuild") else { continue }
                        let newName = t + name.dropFirst(t.count + "_rebuild".count)
                        try conn.execute(
                            "ALTER INDEX \(schema).\(quoteIdentifier(name)) RENAME TO \(quoteIdentifier(newName))")
                    }
                    try conn.execute("GRANT SELECT ON \(schema).\(t) TO ledger_reader, ledger_auditor")
                    try conn.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON \(schema).\(t) TO ledger_projector")
                }
                for m in models {
                    _ = try conn.query(
                        """
                        INSERT INTO \(schema).projection_checkpoints (projection, position) VALUES ($1, $2)
                        ON CONFLICT (projection) DO UPDATE SET position = EXCLUDED.position, updated_at = clock_timestamp()
                        """, [.text(m.rawValue), .int8(position)])
                }
            }
        }
    }

    static func checksum(
        _ schema: String, _ table: String, _ conn: PostgresConnection
    ) async throws -> (rows: Int64, checksum: String) {
        let r = try await conn.query(
            """
            SELECT count(*), left(md5(coalesce(sum(hash_record_extended(t, 0)::numeric), 0)::text), 16)
            FROM \(schema).\(table) t
            """)
        let rows = r.int64(0, 0) ?? 0
        return (rows, "\(rows):\(r.string(0, 1) ?? "")")
    }

    /// Rows that differ between two tables, by key, each described column by column.
    static func differences(
        _ schema: String, live: String, rebuilt: String, key: [String], _ conn: PostgresConnection
    ) async throws -> (Int64, [String]) {
        let keyList = key.joined(separator: ", ")
        let diff = """
            (SELECT * FROM \(schema).\(rebuilt) EXCEPT SELECT * FROM \(schema).\(live))
            UNION ALL (SELECT * FROM \(schema).\(live) EXCEPT SELECT * FROM \(schema).\(rebuilt))
            """
        let count = try await conn.query("SELECT count(DISTINCT (\(keyList))) FROM (\(diff)) d").int64(0, 0) ?? 0
        guard count > 0 else { return (0, []) }
        let keyText =
            key.count == 1
            ? "d.\(key[0])::text" : "concat_ws('/', " + key.map { "d.\($0)" }.joined(separator: ", ") + ")"
        let join = key.map { "x.\($0) = k.\($0)" }.joined(separator: " AND ")
        let r = try await conn.query(
            """
            WITH k AS (SELECT DISTINCT \(key.map { "d.\($0)" }.joined(separator: ", ")), \(keyText) AS label FROM (\(diff)) d ORDER BY label LIMIT 10)
            SELECT k.label,
                   (SELECT row_to_json(x)::text FROM \(schema).\(live) x WHERE \(join)),
                   (SELECT row_to_json(x)::text FROM \(schema).\(rebuilt) x WHERE \(join))
            FROM k ORDER BY k.label
            """)
        var lines: [String] = []
        for i in 0..<r.count {
            let label = r.string(i, 0) ?? "?"
            let l = r.string(i, 1).flatMap { try? JSONValue.parse($0) }
            let b = r.string(i, 2).flatMap { try? JSONValue.parse($0) }
            switch (l, b) {
            case (nil, _): lines.append("\(label): only in the rebuilt table")
            case (_, nil): lines.append("\(label): only in the live table")
            case (.object(let lm)?, .object(let bm)?):
                var cols: [String] = []
                for m in bm {
                    let lv = lm.first { $0.key == m.key }?.value
                    if lv != m.value {
                        cols.append("\(m.key) live=\(lv?.compactText ?? "null") rebuilt=\(m.value.compactText)")
                    }
                }
                lines.append("\(label): " + cols.joined(separator: "; "))
            default: lines.append("\(label): differs")
            }
        }
        return (count, lines)
    }
}
