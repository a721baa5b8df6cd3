import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
import LedgerTesting
import Testing

/// An append request's own key (the HTTP API's `Idempotency-Key`): it names one body for good,
/// between concurrent requests too. A client's retry racing its original is what the key is for.
@Suite("Request keys", .timeLimit(.minutes(2)))
struct RequestKeyTests {
    static func digest(_ body: UInt8) -> [UInt8] { [UInt8](repeating: body, count: 32) }

    @Test func aKeyNamesOneBodyPerCaller() async throws {
        try await TestDatabase.withSchema("reqkey") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            #expect(try await store.claimRequestKey(caller: "svc", key: "r-1", digest: Self.digest(1)) == .body)
            #expect(try await store.claimRequestKey(caller: "svc", key: "r-1", digest: Self.digest(1)) == .body)
            #expect(try await store.claimRequestKey(caller: "svc", key: "r-1", digest: Self.digest(2)) == .otherBody)
            #expect(try await store.claimRequestKey(caller: "svc2", key: "r-1", digest: Self.digest(2)) == .body)
        }
    }

    /// Rounds of sixteen concurrent claims of one new key, over four stores (each claim on a
    /// connection of its own): with one body, every claim is told `.body` (a retry racing its
    /// original is not a conflict, even when it waited for the original's insert to commit); with
    /// two bodies, one body wins and every claim agrees which.
    @Test(arguments: [1, 2])
    func concurrentClaimsOfOneKeyAgree(bodies: Int) async throws {
        try await TestDatabase.withSchema("reqkeyrace\(bodies)") { config in
            var stores: [EventStore] = []
            for _ in 0..<4 { stores.append(try await EventStore.open(config)) }
            defer { Task { [stores] in for s in stores { await s.close() } } }
            for round in 0..<20 {
                let outcomes = try await withThrowingTaskGroup(of: (UInt8, EventStore.RequestKey).self) { group in
                    for i in 0..<16 {
                        group.addTask { [stores] in
                            let body = UInt8(i % bodies)
                            let answer = try await stores[i % 4].claimRequestKey(
                                caller: "svc", key: "race-\(round)", digest: Self.digest(body))
                            return (body, answer)
                        }
                    }
                    var all: [(UInt8, EventStore.RequestKey)] = []
                    for try await o in group { all.append(o) }
                    return all
                }
                let won = Set(outcomes.filter { $0.1 == .body }.map(\.0))
                #expect(won.count == 1, "round \(round): bodies told .body: \(won)")
                for (body, answer) in outcomes {
                    #expect(answer == (won.contains(body) ? .body : .otherBody), "round \(round)")
                }
            }
        }
    }
}
