import Foundation
import LedgerCore
import LedgerDomain
import LedgerScenarios

/// The generator's facts as events to append, with deterministic ids.
public struct GeneratedEvents: Sequence, Sendable {
    let count: Int
    let users: Int
    let seed: UInt64
    let ids: IdShape

    /// The first `count` facts of the history of `users` users generated from `seed`, with ids of
    /// the shape `ids`.
    public init(count: Int, users: Int, seed: UInt64, ids: IdShape = .short) {
        self.count = count
        self.users = users
        self.seed = seed
        self.ids = ids
    }

    public func makeIterator() -> AnyIterator<NewEvent> {
        var gen = HistoryGenerator(users: users, seed: seed, ids: ids)
        var i = 0
        return AnyIterator {
            guard i < count, let (fact, at) = gen.next() else { return nil }
            i += 1
            let id = UUID(high: seed, unique: UInt64(i))
            return fact.newEvent(occurredAt: at, eventId: id, metadata: EventMetadata(source: "bench"))
        }
    }
}
