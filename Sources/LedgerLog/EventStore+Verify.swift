import Foundation
import LedgerCore
import LedgerPostgres

/// Verifying the chain: every event re-hashed in position order, and the head compared.
extension EventStore {
    /// Re-hashes the log in position order (streaming), through `through` or the whole log, and
    /// compares with the stored hashes; when it reaches the head, with the head row too (a removed or
    /// edited tail shows there). `progress` is called every 50,000 events with the count so far.
    public func verifyChain(
        through: Int64? = nil, progress: @escaping @Sendable (Int64) -> Void = { _ in }
    ) async throws -> ChainReport {
        try await rehash(ChainVerifier(), after: 0, through: through, progress: progress)
    }

    /// ``verifyChain(through:progress:)`` from an anchor on: first whether the log still holds the
    /// anchored event with the anchored hash (``check(_:)``), then whether every event after it
    /// chains onto it, to the head. It trusts what comes before the anchor, which a full check
    /// proved when the anchor was taken: a nightly check of a long log reads only what is new.
    /// A problem with the anchor itself is reported at the anchored position, nothing re-hashed.
    public func verifyChain(
        from anchor: Anchor, progress: @escaping @Sendable (Int64) -> Void = { _ in }
    ) async throws -> ChainReport {
        let check = try await self.check([anchor])[0]
        let hash = Hex.bytes(anchor.hash)
        guard let hash, hash.count == EventChain.genesis.count, check.holds else {
            return ChainReport(
                verified: 0, lastPosition: anchor.position, lastHash: hash ?? [], firstBrokenPosition: anchor.position,
                problem:
                    "the anchor does not hold: \(check.problem ?? "its hash is not 64 hex digits"); nothing after it was checked (a full verify-chain, without --from-anchor, re-hashes the whole log)"
            )
        }
        return try await rehash(
            ChainVerifier(after: anchor.position, hash: hash), after: anchor.position, through: nil, progress: progress)
    }

    /// Feeds `start` every event after `after` (through `through`, or to the end) in position order,
    /// then reports what it found. The events and the head are read in one snapshot (a repeatable
    /// read transaction), so that appends committed meanwhile are neither a longer head nor events
    /// past it: a live log verifies as it stood when the check began.
    private func rehash(
        _ start: ChainVerifier, after: Int64, through: Int64?, progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> ChainReport {
        let sql = scanSQL(after: after, through: through)
        return try await pool.withConnection { conn in
            try await conn.withIsolation { conn in
                try conn.transaction(isolation: "REPEATABLE READ READ ONLY") { conn in
                    var verifier = start
                    try conn.copyOut(sql) { row in
                        verifier.consume(try EventRows.decode(copyRow: row))
                        if verifier.verified % 50_000 == 0 { progress(verifier.verified) }
                    }
                    return try chainReport(verifier, through: through, on: conn)
                }
            }
        }
    }

    /// What a verifier that read the log in position order through `through` (or to its end) says,
    /// checked against the head row when it reached the head. The head is read after the events: give
    /// `through` (the position the events were read to) unless nothing is appended meanwhile.
    public func chainReport(_ v: ChainVerifier, through: Int64?) async throws -> ChainReport {
        try await pool.withConnection { conn in
            try await conn.withIsolation { conn in try chainReport(v, through: through, on: conn) }
        }
    }

    /// ``chainReport(_:through:)`` on `conn`, in its snapshot: the head, and (a replay to the head,
    /// verify-chain or an audit as of now) any event stored past it, one added without moving the
    /// head, which a read up to the head would miss.
    private func chainReport(
        _ v: ChainVerifier, through: Int64?, on conn: isolated PostgresConnection
    ) throws -> ChainReport {
        let s = quoteIdentifier(configuration.schema)
        let head = try conn.query("SELECT last_position, last_hash FROM \(s).log_head")
        let headPosition = head.int64(0, 0) ?? -1
        let beyond =
            (through ?? headPosition) == headPosition
            ? try conn.query("SELECT min(position) FROM \(s).events WHERE position > $1", [.int8(headPosition)])
                .int64(0, 0) : nil
        return Self.chainReport(v, through: through, head: (headPosition, head.bytea(0, 1)), beyond: beyond)
    }

    /// The report of `v`, read through `through` (or to the end), given the head (its position, -1
    /// without a head row, and hash) and the first event stored past it, if any.
    static func chainReport(
        _ v: ChainVerifier, through: Int64?, head: (position: Int64, hash: [UInt8]?), beyond: Int64?
    ) -> ChainReport {
        var problem = v.firstProblem.map { $0.description }
        let end = through ?? head.position
        if problem == nil, let beyond {
            problem =
                "an event is stored at position \(beyond), past the head (position \(head.position)): it was added without the head"
            return ChainReport(
                verified: v.verified, lastPosition: v.lastPosition, lastHash: v.previous, firstBrokenPosition: beyond,
                problem: problem)
        }
        if problem == nil, end != v.lastPosition {
            problem =
                through == nil
                ? "the head says the log ends at position \(head.position) but the last stored event is at \(v.lastPosition) (events were removed or added without the head)"
                : "the log ends at position \(v.lastPosition) but should reach \(end) (events were removed)"
        } else if problem == nil, end == head.position, let h = head.hash, v.lastPosition > 0, h != v.previous {
            problem = "the head's hash differs from the last event's hash (position \(v.lastPosition))"
        }
        return ChainReport(
            verified: v.verified, lastPosition: v.lastPosition, lastHash: v.previous,
            firstBrokenPosition: v.firstProblem?.position ?? (problem != nil ? v.lastPosition : nil),
            problem: problem)
    }
}

/// The outcome of ``EventStore/verifyChain(through:progress:)``.
public struct ChainReport: Sendable, Hashable {
    public var verified: Int64
    public var lastPosition: Int64
    /// The stored hash of the event at `lastPosition` (32 zero bytes for an empty log): the head
    /// this report replayed, to compare with an anchor kept outside the database.
    public var lastHash: [UInt8]
    /// The first position that does not verify, if any.
    public var firstBrokenPosition: Int64?
    public var problem: String?
    public var isIntact: Bool { problem == nil }
}
