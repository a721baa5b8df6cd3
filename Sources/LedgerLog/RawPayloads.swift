import LedgerCore
import LedgerPostgres

/// A raw signed payload kept beside the facts it became (a store notification's body, with the
/// headers that sign it), so that an auditor can verify it again; the facts carry its digest.
public struct RawPayload: Sendable, Hashable {
    /// Where it came from (`appstore`, `googleplay`, `wechat`).
    public var channel: String
    /// Its sender's id for it (a notification's UUID or message id), 1-200 characters.
    public var id: String
    /// `sha256:<hex>` of `raw` (the table checks it).
    public var digest: String
    public var raw: [UInt8]
    /// The headers that sign it, as a JSON object (`{}` for none).
    public var headersJSON: String

    public init(channel: String, id: String, digest: String, raw: [UInt8], headersJSON: String) {
        self.channel = channel
        self.id = id
        self.digest = digest
        self.raw = raw
        self.headersJSON = headersJSON
    }
}

extension EventStore {
    /// Keeps a raw payload in `store_notification_payloads` (append-only; the same bytes delivered
    /// again are stored once). Committed without waiting for its own WAL flush: the facts appended
    /// next commit synchronously, and their flush covers this earlier commit too, so the payload is
    /// durable whenever its facts are (a payload kept without facts is harmless: the sender retries).
    /// Needs the writer's rights.
    public func keep(_ payload: RawPayload) async throws {
        let s = quoteIdentifier(configuration.schema)
        let values: [PostgresValue] = [
            .text(payload.channel), .text(payload.id), .text(payload.digest), .bytea(payload.raw),
            .jsonb(payload.headersJSON),
        ]
        try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                try conn.execute("BEGIN; SET LOCAL synchronous_commit TO off")
                do {
                    _ = try conn.query(
                        """
                        INSERT INTO \(s).store_notification_payloads (channel, notification_id, raw_digest, raw, raw_headers)
                        VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING
                        """, values, prepared: true)
                    try conn.execute("COMMIT")
                } catch {
                    if conn.isConnected { try? conn.execute("ROLLBACK") }
                    throw error
                }
            }
        }
    }
}
