import LedgerCore
import LedgerPostgres

/// The log's head written down outside the database (`ledger anchor`): position, hash and time.
/// A later `verify-chain --anchor` proves the anchored event is still in the log with the same
/// hash; a removed tail, a rewritten and re-chained history, or a row inserted before the anchored
/// position all change that.
public struct Anchor: Sendable, Hashable {
    public var schema: String
    public var position: Int64
    /// Hex SHA-256 of the event at `position` (64 zeros for an empty log).
    public var hash: String
    public var recordedAt: Timestamp?

    public init(schema: String, position: Int64, hash: String, recordedAt: Timestamp?) {
        self.schema = schema
        self.position = position
        self.hash = hash
        self.recordedAt = recordedAt
    }

    public var json: JSONValue {
        .makeObject([
            ("anchor", .string("ledger-anchor/1")), ("schema", .string(schema)), ("position", .int(position)),
            ("hash", .string(hash)), ("recordedAt", recordedAt.map { .string($0.iso8601) } ?? .null),
        ])
    }

    /// Reads what ``json`` wrote; says what is wrong otherwise.
    public static func parse(_ text: String) throws(AnchorError) -> Anchor {
        guard let value = try? JSONValue.parse(text) else {
            throw AnchorError("is not JSON (expected the output of `ledger anchor`)")
        }
        guard value["anchor"]?.stringValue == "ledger-anchor/1" else {
            throw AnchorError("is not a ledger anchor (no \"anchor\": \"ledger-anchor/1\")")
        }
        guard let schema = value["schema"]?.stringValue else { throw AnchorError("has no schema") }
        guard let position = value["position"]?.intValue, position >= 0 else {
            throw AnchorError("has no position >= 0")
        }
        guard let hash = value["hash"]?.stringValue, hash.count == 64, hash.allSatisfy(\.isHexDigit) else {
            throw AnchorError("has no 64-digit hex hash")
        }
        return Anchor(
            schema: schema, position: position, hash: hash.lowercased(),
            recordedAt: value["recordedAt"]?.stringValue.flatMap(Timestamp.init))
    }
}

public struct AnchorError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One anchor checked against the log.
public struct AnchorCheck: Sendable, Hashable {
    public var anchor: Anchor
    /// Nil when the log still holds the anchored event with the anchored hash.
    public var problem: String?
    public var holds: Bool { problem == nil }
}

extension EventStore {
    /// The head as it stands: the anchor to keep elsewhere.
    public func anchor() async throws -> Anchor {
        let s = quoteIdentifier(configuration.schema)
        let r = try await pool.withConnection { conn in
            try await conn.query("SELECT last_position, last_hash, last_recorded_at FROM \(s).log_head")
        }
        guard r.count == 1, let position = r.int64(0, 0), let hash = r.bytea(0, 1) else {
            throw LedgerError.migration(
                "the log head of schema \(configuration.schema) is missing; run `ledger migrate`")
        }
        return Anchor(
            schema: configuration.schema, position: position, hash: hash.hexString,
            recordedAt: position > 0 ? r.string(0, 2).flatMap(Timestamp.init) : nil)
    }

    /// The anchor of the event at `position` as the log stores it now (0: the empty log's), nil
    /// when the log has no event there. An anchor taken later than its position is worth what the
    /// log was worth when it was taken: run a full `verify-chain` first.
    public func anchor(at position: Int64) async throws -> Anchor? {
        if position == 0 {
            return Anchor(
                schema: configuration.schema, position: 0, hash: EventChain.genesis.hexString, recordedAt: nil)
        }
        let s = quoteIdentifier(configuration.schema)
        let r = try await pool.withConnection { conn in
            try await conn.query(
                "SELECT hash, recorded_at FROM \(s).events WHERE position = $1", [.int8(position)], prepared: true)
        }
        guard r.count == 1, let hash = r.bytea(0, 0) else { return nil }
        return Anchor(
            schema: configuration.schema, position: position, hash: hash.hexString,
            recordedAt: r.string(0, 1).flatMap(Timestamp.init))
    }

    /// Whether each anchored event is still in the log with its anchored hash. (Run the chain
    /// check too: it proves everything before each anchor leads to that hash.)
    public func check(_ anchors: [Anchor]) async throws -> [AnchorCheck] {
        let s = quoteIdentifier(configuration.schema)
        var out: [AnchorCheck] = []
        for anchor in anchors {
            if anchor.schema != configuration.schema {
                out.append(
                    AnchorCheck(
                        anchor: anchor, problem: "the anchor is of schema \(anchor.schema), not \(configuration.schema)"
                    ))
                continue
            }
            let r = try await pool.withConnection { conn in
                try await conn.query(
                    """
                    SELECT (SELECT hash FROM \(s).events WHERE position = $1), (SELECT last_position FROM \(s).log_head)
                    """, [.int8(anchor.position)])
            }
            let head = r.int64(0, 1) ?? 0
            let stored = anchor.position == 0 ? EventChain.genesis : r.bytea(0, 0)
            if head < anchor.position {
                out.append(
                    AnchorCheck(
                        anchor: anchor,
                        problem:
                            "the log ends at position \(head), before the anchored position \(anchor.position): events were removed"
                    ))
            } else if let stored, stored.hexString == anchor.hash {
                out.append(AnchorCheck(anchor: anchor, problem: nil))
            } else if let stored {
                out.append(
                    AnchorCheck(
                        anchor: anchor,
                        problem:
                            "position \(anchor.position) now has hash \(stored.hexString), the anchor says \(anchor.hash): the log was rewritten at or before it"
                    ))
            } else {
                out.append(AnchorCheck(anchor: anchor, problem: "position \(anchor.position) is missing from the log"))
            }
        }
        return out
    }
}
