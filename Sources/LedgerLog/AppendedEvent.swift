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

/// What an append answered at its commit (``EventStore/appendAtCommit(_:)``) knows of one event:
/// it is stored for good, claimed under its id, idempotency key and stream version; its position
/// is known once it is sealed into the log.
public struct CommittedEvent: Sendable, Hashable {
    public var eventId: UUID
    public var stream: String
    public var version: Int64
    /// The event's position in the log; nil while it is pending (committed, not sealed yet, not
    /// seen by readers).
    public var position: Int64?
    /// True when the event was already stored (an idempotent retry): the values are the original ones.
    public var alreadyStored: Bool

    public init(eventId: UUID, stream: String, version: Int64, position: Int64?, alreadyStored: Bool) {
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.position = position
        self.alreadyStored = alreadyStored
    }

    /// An append's answer (position 0 inside the library: still pending).
    public init(_ e: AppendedEvent) {
        self.init(
            eventId: e.eventId, stream: e.stream, version: e.version, position: e.position > 0 ? e.position : nil,
            alreadyStored: e.alreadyStored)
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
