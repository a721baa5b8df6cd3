import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
@testable import LedgerProjection
import LedgerScenarios
import LedgerTesting
import Testing

@Suite("Fold pipeline", .timeLimit(.minutes(3)))
struct FoldPipelineTests {
    /// Reading on the connection's thread, decoding on another and folding on a third gives, on the
    /// simulator's histories, exactly the fold of one thread: the same read-model rows byte for
    /// byte, the same anomalies and the same findings.
    @Test(arguments: [(UInt64(7), "none"), (UInt64(11), "all=0.03")])
    func pipelineEqualsInline(_ seed: UInt64, _ faults: String) async throws {
        try await TestDatabase.withSchema("pipeline") { config in
            let store = try await ProjectionStoreTests.open(config)
            let events = Simulator(users: 120, days: 30, seed: seed, faults: try FaultSpec.parse(faults)).events()
            for start in stride(from: 0, to: events.count, by: 2_000) {
                _ = try await store.append(Array(events[start..<min(start + 2_000, events.count)]))
            }
            let head = try await store.headPosition()
            let piped = try await LogReplay(store).fold(through: head),
                inline = try await LogReplay(store).foldInline(through: head)
            #expect(piped.position == head && inline.position == head)
            #expect(Self.rows(piped) == Self.rows(inline))
            #expect(piped.anomalies == inline.anomalies)
            let findings = Audit.run(piped, options: AuditOptions())
            #expect(findings.map(\.key) == Audit.run(inline, options: AuditOptions()).map(\.key))
            #expect(!findings.isEmpty || faults == "none")
            await store.close()
        }
    }

    /// Rows gathered into batches come out whole and in order: a batch ends at its row or byte
    /// limit, each row's payload is its own bytes, and the last rows come with the final flush.
    @Test func rowsAreBatchedWholeAndInOrder() throws {
        final class Batches { var all: [ScannedRows] = [] }
        let batches = Batches()
        var batcher = RowBatcher { batches.all.append($0) }
        let count = 5_000
        func payload(_ i: Int) -> [UInt8] {
            // Short and long payloads, so that either limit ends a batch.
            let length = i < 3_000 ? 20 : 2_000
            return Array("{\"n\":\(i),\"pad\":\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: length)
                + Array("\"}".utf8)
        }
        for i in 0..<count {
            try payload(i).withUnsafeBytes { bytes in
                try batcher.append(
                    position: Int64(i + 1), type: "OrderCreated", schemaVersion: 1,
                    occurredAt: Timestamp(microsecondsSince1970: Int64(i)), payload: bytes)
            }
        }
        #expect(batches.all.allSatisfy { $0.isFull })
        try batcher.flush()
        try batcher.flush()  // nothing gathered: nothing handed over
        #expect(
            batches.all.dropLast().allSatisfy {
                $0.count == ScannedRows.rowLimit || $0.bytes.count >= ScannedRows.byteLimit
            })
        #expect(batches.all.contains { $0.count < ScannedRows.rowLimit && $0.bytes.count >= ScannedRows.byteLimit })
        var next = 0
        for batch in batches.all {
            for row in batch.rows {
                #expect(row.position == Int64(next + 1))
                #expect(Array(batch.bytes[row.payload]) == payload(next))
                next += 1
            }
        }
        #expect(next == count)
    }

    /// Every read model's rows, in key order.
    static func rows(_ p: Projections) -> [UInt8] {
        var w = RowWriter()
        for k in p.orders.keys.sorted() { p.orderRow(p.orders[k]!, into: &w) }
        for k in p.transactions.keys.sorted() { p.transactionRow(p.transactions[k]!, into: &w) }
        for k in p.subscriptions.keys.sorted() { p.subscriptionRow(p.subscriptions[k]!, into: &w) }
        for k in p.users.keys.sorted() {
            p.userRow(p.users[k]!, into: &w)
            p.periodRows(p.users[k]!, into: &w)
        }
        return w.out
    }
}
