import LedgerCore

/// Where a database stands as a reader of the log: a primary, or a hot standby (PostgreSQL
/// streaming replication) that has replayed its primary's commits up to `lastReplayedAt`.
public struct StandbyState: Hashable, Sendable {
    public var isStandby: Bool
    /// The commit time of the last transaction a standby replayed (nil on a primary).
    public var lastReplayedAt: Timestamp?

    public init(isStandby: Bool, lastReplayedAt: Timestamp?) {
        self.isStandby = isStandby
        self.lastReplayedAt = lastReplayedAt
    }
}

/// A replay asked for a position or a moment the log here has not reached. On a hot standby this
/// is replication lag: wait, or read from the primary. Nothing is reported for a log that is not there.
public struct PositionNotReached: Error, LedgerCodedError, CustomStringConvertible, Sendable {
    public var requested: String
    public var head: Int64
    public var standby: StandbyState

    public init(requested: String, head: Int64, standby: StandbyState) {
        self.requested = requested
        self.head = head
        self.standby = standby
    }

    public var code: LedgerError.Code { .positionNotReached }

    public var description: String {
        guard standby.isStandby else {
            return "the log ends at position \(head); \(requested) is not in it yet"
        }
        let replayed = standby.lastReplayedAt.map { ", last commit replayed from \($0.iso8601)" } ?? ""
        return
            "this database is a hot standby that has replayed the log only to position \(head)\(replayed); \(requested) is not here yet: wait for replication to catch up, or read from the primary"
    }
}

extension LedgerError.Code {
    /// A replay asked for a position or moment the log has not reached (a standby behind its primary).
    public static let positionNotReached = LedgerError.Code("position-not-reached")
}
