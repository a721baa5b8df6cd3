import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerLog
import LedgerTesting
import Testing

@Suite("Append", .timeLimit(.minutes(2)))
struct AppendTests {
    @Test func appendsAndReadsBack() async throws {
        try await TestDatabase.withSchema("append") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let result = try await store.append([
                testEvent(stream: "order:1", type: "OrderCreated", expected: .noStream),
                testEvent(stream: "order:1", type: "PaymentLaunched", expected: .exact(0)),
                testEvent(stream: "appstore:tx:1", type: "PaymentVerified"),
            ])
            #expect(result.map(\.position) == [1, 2, 3])
            #expect(result.map(\.version) == [0, 1, 0])
            #expect(result.allSatisfy { !$0.alreadyStored })
            let stream = try await store.readStream("order:1")
            #expect(stream.map(\.type) == ["OrderCreated", "PaymentLaunched"])
            let all = try await store.readAll(after: 0)
            #expect(all.map(\.position) == [1, 2, 3])
            #expect(all[0].payloadText == #"{"n": 1}"#)
            #expect(all[0].metadataText == #"{"source": "test"}"#)
            #expect(try await store.headPosition() == 3)
            // recordedAt never goes back with position.
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.recordedAt <= $1.recordedAt })
        }
    }

    @Test func idempotentRetryReturnsOriginalPositions() async throws {
        try await TestDatabase.withSchema("retry") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let batch = [
                testEvent(stream: "appstore:tx:9", key: "appstore:tx:9:verified", expected: .noStream),
                testEvent(stream: "user:1", type: "EntitlementGranted", key: "grant:1"),
            ]
            let first = try await store.append(batch)
            let again = try await store.append(batch)
            #expect(again.map(\.position) == first.map(\.position))
            #expect(again.map(\.version) == first.map(\.version))
            #expect(again.allSatisfy { $0.alreadyStored })
            // A retry that minted new event ids but carries the same keys and content.
            var renamed = batch
            for i in renamed.indices { renamed[i].eventId = UUID() }
            let third = try await store.append(renamed)
            #expect(third.map(\.position) == first.map(\.position))
            #expect(third.map(\.eventId) == first.map(\.eventId))
            // A batch mixing a stored event and a new one stores only the new one.
            let mixed = try await store.append([batch[0], testEvent(stream: "user:1", type: "CoinsSpent")])
            #expect(mixed[0].alreadyStored && mixed[0].position == first[0].position)
            #expect(!mixed[1].alreadyStored && mixed[1].position == 3 && mixed[1].version == 1)
            #expect(try await store.headPosition() == 3)
        }
    }

    @Test func sameKeyWithDifferentContentFailsTyped() async throws {
        try await TestDatabase.withSchema("keyconflict") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "appstore:tx:1", key: "appstore:tx:1:verified")])
            let changed = testEvent(
                stream: "appstore:tx:1", payload: .makeObject([("n", .int(2))]), key: "appstore:tx:1:verified")
            let innocent = testEvent(stream: "other", key: "other:1")
            await #expect {
                _ = try await store.append([innocent, changed])
            } throws: { error in
                guard case .idempotencyConflict(let key, _, let position, let reason)? = error as? LedgerError else {
                    return false
                }
                return key == "appstore:tx:1:verified" && position == 1 && reason.contains("payload")
            }
            // Nothing from the batch was written, not even the valid event before the conflict.
            #expect(try await store.headPosition() == 1)
            // Same event id, different content.
            let stored = try await store.readAll(after: 0)[0]
            var sameId = testEvent(stream: "appstore:tx:1", type: "Refunded", id: stored.eventId)
            sameId.idempotencyKey = "appstore:tx:1:verified"
            await #expect(throws: LedgerError.self) { _ = try await store.append([sameId]) }
            // The same event twice in one batch with different content.
            let id = UUID()
            await #expect(throws: LedgerError.self) {
                _ = try await store.append([testEvent(stream: "a", id: id), testEvent(stream: "b", id: id)])
            }
            #expect(try await store.headPosition() == 1)
        }
    }

    @Test func versionConflictNamesStreamExpectedAndActual() async throws {
        try await TestDatabase.withSchema("version") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append([testEvent(stream: "order:7"), testEvent(stream: "order:7")])
            await #expect {
                _ = try await store.append([
                    testEvent(stream: "fine"), testEvent(stream: "order:7", expected: .exact(5)),
                ])
            } throws: { error in
                guard case .versionConflict(let stream, let expected, let actual, _)? = error as? LedgerError else {
                    return false
                }
                return stream == "order:7" && expected == .exact(5) && actual == 1
            }
            await #expect {
                _ = try await store.append([testEvent(stream: "order:7", expected: .noStream)])
            } throws: { error in
                guard case .versionConflict(_, .noStream, 1, _)? = error as? LedgerError else { return false }
                return true
            }
            await #expect {
                _ = try await store.append([testEvent(stream: "order:new", expected: .exact(0))])
            } throws: { error in
                guard case .versionConflict("order:new", .exact(0), nil, _)? = error as? LedgerError else {
                    return false
                }
                return true
            }
            #expect(try await store.headPosition() == 2)
            let ok = try await store.append([
                testEvent(stream: "order:7", expected: .exact(1)), testEvent(stream: "order:7", expected: .exact(2)),
            ])
            #expect(ok.map(\.version) == [2, 3])
        }
    }

    @Test func invalidEventIsRefusedBeforeAnythingIsWritten() async throws {
        try await TestDatabase.withSchema("invalid") { config in
            var config = config
            config.validation = EventValidation(
                maximumPayloadBytes: 100, knownTypes: ["PaymentVerified"], allowUnknownTypes: false)
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let big = testEvent(
                stream: "s", payload: .makeObject([("blob", .string(String(repeating: "x", count: 200)))]))
            await #expect {
                _ = try await store.append([testEvent(stream: "s"), big])
            } throws: { error in
                guard case .invalidEvent(let e)? = error as? LedgerError else { return false }
                return e.field == "payload" && e.description.contains("over the limit")
            }
            await #expect {
                _ = try await store.append([testEvent(stream: "s", type: "PaymentVerifed")])
            } throws: { error in
                guard case .invalidEvent(let e)? = error as? LedgerError else { return false }
                return e.field == "type" && e.description.contains("unknown fact type")
            }
            #expect(try await TestDatabase.storedEventRows(config) == 0)
            #expect(try await store.headPosition() == 0)
        }
    }

    @Test func batchLargerThanTheParameterLimitIsOneTransaction() async throws {
        try await TestDatabase.withSchema("large") { config in
            let store = try await EventStore.open(config)
            defer { Task { await store.close() } }
            let count = 70_000  // 12 columns each: far over PostgreSQL's 65,535 parameters
            let batch = (0..<count).map { i in
                testEvent(
                    stream: "bulk:\(i % 100)",
                    payload: .makeObject([("i", .int(Int64(i))), ("note", .string("tab\there\nnewline \\ back"))]))
            }
            let result = try await store.append(batch)
            #expect(result.count == count)
            #expect(result.first?.position == 1 && result.last?.position == Int64(count))
            #expect(result.last?.version == Int64(count / 100 - 1))
            let report = try await store.verifyChain()
            #expect(report.isIntact, "\(report.problem ?? "")")
            #expect(report.verified == Int64(count))
            // A failing large batch writes nothing.
            var bad = Array(batch.prefix(100)).map { e -> NewEvent in
                var e = e
                e.eventId = UUID()
                e.idempotencyKey = nil
                return e
            }
            bad.append(testEvent(stream: "bulk:1", expected: .noStream))
            await #expect(throws: LedgerError.self) { _ = try await store.append(bad) }
            #expect(try await store.headPosition() == Int64(count))
        }
    }
}
