import Foundation
import LedgerCore
import LedgerPostgres

/// What the log holds for one appended event.
public struct AppendedEvent: Sendable, Hashable {
    public var eventId: UUID
    public var stream: String
    public var version: Int64
    public var position: Int64
    /// True when the event was already stored (an idempotent retry): the values are the original ones.
    public var alreadyStored: Bool

    public init(eventId: UUID, stream: String, version: Int64, position: Int64, alreadyStored: Bool) {
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.position = position
        self.alreadyStored = alreadyStored
    }
}

/// A validated event with its canonical texts computed once.
struct PreparedEvent: Sendable {
    var event: NewEvent
    var payloadText: String
    var metadataText: String

    init(_ event: NewEvent) {
        self.event = event
        self.payloadText = event.payload.canonicalText
        self.metadataText = event.metadata.json.canonicalText
    }
}

/// Runs an ``AppendPlan`` over libpq: one transaction for a group of independent requests
/// (group commit). Reads the snapshot the plan needs, then does what the plan says.
///
/// Positions and the hash chain are given under the append lock (a transaction advisory lock per
/// schema), so a reader that has seen position N has seen everything before it. Uniqueness and
/// versions do not need the lock: every event is claimed in `event_claims` (migration 0013),
/// whose unique and foreign-key constraints are the final word for any writer.
///
/// When the lock is free, the transaction takes it, seals what other writers left pending, and
/// writes its rows straight into `events` (one commit). When another session holds it, the
/// transaction does not wait: it commits its rows as pending, then asks `seal_events` for their
/// positions, which seals them together with every other writer's pending rows (or waits for the
/// session that is doing so). Independent writers thus share one sealing transaction instead of
/// queuing one by one behind a lock held across each commit.
