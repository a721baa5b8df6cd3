import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerPostgres
@testable import LedgerProjection
import LedgerScenarios
import LedgerTesting
import Testing

/// A projector starts from the latest snapshot of its fold and folds only what came after; the
/// read models it keeps equal a rebuild from scratch. A snapshot that does not fit the log or this
/// build is passed over.
@Suite("Projector snapshots", .timeLimit(.minutes(3)))
struct ProjectorSnapshotTests {
    static let history = Simulator(users: 30, days: 20, seed: 5, faults: try! FaultSpec.parse("all=0.05")).events()

    static func open(_ config: LedgerConfiguration) async throws -> EventStore {
        var c = config
        c.validation = FactCatalogue.validation()
        return try await EventStore.open(c)
    }

    static func snapshotPositions(_ config: LedgerConfiguration) async throws -> [Int64] {
        let conn = try await TestDatabase.admin(config)
        defer { Task { await conn.close() } }
        let r = try await conn.query(
            "SELECT DISTINCT position FROM \(quoteIdentifier(config.schema)).projector_snapshots ORDER BY 1")
        return (0..<r.count).compactMap { r.int64($0, 0) }
    }

    @Test func aProjectorStartsFromTheLatestSnapshotAndEqualsARebuild() async throws {
        try await TestDatabase.withSchema("snapresume") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            let half = Self.history.count / 2
            _ = try await store.append(Array(Self.history[..<half]))
            let first = try await Projector.start(store, snapshotEvery: 200)
            #expect(first.startedFrom == nil)
            try await first.catchUp(batchSize: 150)
            await first.close()
            // Snapshots every 200 facts or more, at batch ends; only the latest is kept.
            let kept = try await Self.snapshotPositions(config)
            #expect(kept.count == 1)
            let at = try #require(kept.first)
            #expect(at % 150 == 0 && Int64(half) - at < 200)

            _ = try await store.append(Array(Self.history[half...]))
            let second = try await Projector.start(store, snapshotEvery: 200)
            #expect(second.startedFrom?.position == at)
            #expect(await second.position == Int64(half))
            try await second.catchUp()
            await second.close()
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(verify.position == Int64(Self.history.count))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A projector kept to a memory limit (pages of eight views, a few kilobytes), from the first
    /// event and then from a snapshot read into tables that spill, keeps the same read models as a
    /// rebuild in memory.
    @Test func aProjectorKeptToItsMemoryEqualsARebuild() async throws {
        try await TestDatabase.withSchema("snapmemory") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            let half = Self.history.count / 2
            _ = try await store.append(Array(Self.history[..<half]))
            let first = try await Projector.start(store, snapshotEvery: 200, memory: FoldMemoryTests.tiny)
            #expect(first.startedFrom == nil)
            try await first.catchUp(batchSize: 150)
            #expect(await first.state.spilledViews > 0)
            await first.close()
            #expect(try await Self.snapshotPositions(config).count == 1)

            _ = try await store.append(Array(Self.history[half...]))
            let second = try await Projector.start(store, snapshotEvery: 0, memory: FoldMemoryTests.tiny)
            #expect(second.startedFrom != nil)
            #expect(await second.state.spilledViews > 0)
            try await second.catchUp(batchSize: 100)
            await second.close()
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true, memory: .unlimited))
            #expect(verify.position == Int64(Self.history.count))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A projector kept to its memory appends each spilled view it changes to its spill file
    /// again, and the old bytes stay. Once the file holds more than twice what the views need, the
    /// projector compacts it: the file shrinks to what they need, and the read models stay those
    /// of a rebuild.
    @Test func aProjectorCompactsItsSpillFile() async throws {
        try await TestDatabase.withSchema("snapcompact") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            let history = try await Self.appendSpendingHistory(store)
            let projector = try await Projector.start(store, snapshotEvery: 0, memory: Self.churningMemory())
            try await projector.catchUp(batchSize: 50)
            let state = await projector.state
            let (size, needed) = (state.spillStoreSize ?? 0, state.spilledBytes)
            #expect(await projector.compactions > 0, "the spill file holds \(size) bytes for views of \(needed)")
            #expect(needed > 0 && size <= 2 * needed, "the spill file holds \(size) bytes for views of \(needed)")
            await projector.close()
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true, memory: .unlimited))
            #expect(verify.position == Int64(history.count))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A compaction that cannot make its new file (here the spill directory is gone) leaves the
    /// projector on its old file, and is tried again once that file has doubled, not after every
    /// batch: each failure logs a warning.
    @Test func aCompactionThatFailsIsNotRetriedAtEveryBatch() async throws {
        try await TestDatabase.withSchema("snapcompactfail") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            let history = try await Self.appendSpendingHistory(store)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-spill-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let projector = try await Projector.start(
                store, snapshotEvery: 0, memory: Self.churningMemory(directory: directory))
            // The spill file is open (and already unlinked); new files cannot be made any more.
            try FileManager.default.removeItem(atPath: directory)
            try await projector.catchUp(batchSize: 50)
            let (failed, compactions) = (await projector.failedCompactionSizes, await projector.compactions)
            #expect(compactions == 0 && !failed.isEmpty)
            // Each retry waits for the file to double. (Retried at every batch, it failed ten
            // times, at sizes from 173,509 to 217,441 bytes, a warning each.)
            #expect(
                zip(failed, failed.dropFirst()).allSatisfy { $1 > 2 * $0 },
                "compactions failed at file sizes \(failed) (\(history.count) facts in batches of 50)")
            #expect(await projector.position == Int64(history.count))
            await projector.close()
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true, memory: .unlimited))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A month of purchases, then each user spends a coin twenty times over, appended: their
    /// views, spilled, change again and again. Returns what was appended.
    static func appendSpendingHistory(_ store: EventStore) async throws -> [NewEvent] {
        var history = Simulator(users: 60, days: 30, seed: 9, faults: try FaultSpec.parse("none")).events()
        let users = Array(
            Set(history.compactMap { $0.stream.hasPrefix("user:") ? String($0.stream.dropFirst(5)) : nil })
        ).sorted()
        let later = Timestamp("2027-06-01T00:00:00Z")!.microseconds
        for round in 0..<20 {
            for (n, user) in users.enumerated() {
                let at = Timestamp(microsecondsSince1970: later + Int64(round * users.count + n) * 1_000_000)
                history.append(
                    Fact.coinsSpent(CoinsSpent(spendId: "spend-\(round)-\(user)", userId: user, amount: 1)).newEvent(
                        occurredAt: at))
            }
        }
        for start in stride(from: 0, to: history.count, by: 2_000) {
            _ = try await store.append(Array(history[start..<min(start + 2_000, history.count)]))
        }
        return history
    }

    /// A page of eight views in memory and one read back: every change to a spilled view is
    /// written again as soon as another is read back; compacted as soon as the file holds twice
    /// what its views need.
    static func churningMemory(directory: String = FoldMemory.temporaryDirectory) -> FoldMemory {
        var memory = FoldMemory(limit: 1, directory: directory)
        memory.pageSize = 8
        memory.compactionSlack = 0
        return memory
    }

    /// Another version of the fold, a log that differs at the snapshot's position, damaged bytes:
    /// each time the projector folds from the first event instead, and the tables stay right.
    @Test func aSnapshotThatDoesNotFitIsPassedOver() async throws {
        try await TestDatabase.withSchema("snapskip") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.history)
            let first = try await Projector.start(store, snapshotEvery: 100)
            try await first.catchUp()
            await first.close()
            let s = quoteIdentifier(config.schema)
            for damage in [
                "UPDATE \(s).projector_snapshots SET version = version + 1",
                "UPDATE \(s).projector_snapshots SET log_hash = '\\x00'",
                "UPDATE \(s).projector_snapshots SET digest = '\\x00'",
                "DELETE FROM \(s).projector_snapshots WHERE part = 0",
            ] {
                try await TestDatabase.tamper(config, "DELETE FROM \(s).projector_snapshots")
                let writer = try await Projector.start(store, snapshotEvery: 100)
                #expect(writer.startedFrom == nil)  // it folded, and wrote a snapshot
                await writer.close()
                #expect(try await Self.snapshotPositions(config) == [Int64(Self.history.count)])
                let good = try await Projector.start(store, snapshotEvery: 100)
                #expect(good.startedFrom?.position == Int64(Self.history.count))
                await good.close()
                try await TestDatabase.tamper(config, damage)
                let projector = try await Projector.start(store, snapshotEvery: 0)
                #expect(projector.startedFrom == nil, "\(damage)")
                #expect(await projector.position == Int64(Self.history.count))
                await projector.close()
            }
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A snapshot larger than one part is written in parts and read back whole.
    @Test func aSnapshotInManyPartsReadsBackWhole() async throws {
        try await TestDatabase.withSchema("snapparts") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.history)
            let state = try await LogReplay(store).fold(through: Int64(Self.history.count))
            let conn = try await TestDatabase.admin(config.connecting(as: .projector))
            defer { Task { await conn.close() } }
            let schema = config.schema
            let written = try await conn.withIsolation { conn in
                try SnapshotStore.write(state, schema: schema, partBytes: 1000, on: conn)
            }
            let parts =
                try await conn.query("SELECT count(*) FROM \(quoteIdentifier(schema)).projector_snapshots").int64(0, 0)
                ?? 0
            #expect(parts > 3)
            let read = try await conn.withIsolation { conn in
                try SnapshotStore.latest(
                    atOrBefore: Int64(Self.history.count), schema: schema, skipped: { _, _ in }, on: conn)
            }
            #expect(read?.info == written)
            #expect(try read?.state.snapshot() == state.snapshot())
            // Kept to a tiny memory: the parts go into tables that spill as they come, several
            // parts of each kind in their order.
            let limited = try await conn.withIsolation { conn in
                try SnapshotStore.latest(
                    atOrBefore: Int64(Self.history.count), schema: schema, memory: FoldMemoryTests.tiny,
                    skipped: { _, _ in }, on: conn)
            }
            #expect(limited?.info == written)
            #expect((limited?.state.spilledViews ?? 0) > 0)
            #expect(try limited?.state.snapshot() == state.snapshot())
        }
    }

    /// A rebuild leaves a snapshot at the position it rebuilt to, and the next projector starts
    /// from it; a verify writes none.
    @Test func aRebuildLeavesASnapshotTheProjectorStartsFrom() async throws {
        try await TestDatabase.withSchema("snaprebuild") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.history)
            let cut = Int64(Self.history.count / 2)
            let rebuilt = try await LogReplay(store).rebuild(RebuildOptions(through: cut))
            #expect(rebuilt.snapshot?.position == cut)
            #expect(try await Self.snapshotPositions(config) == [cut])
            let verified = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(verified.snapshot == nil)
            let projector = try await Projector.start(store, snapshotEvery: 0)
            #expect(projector.startedFrom?.position == cut)
            try await projector.catchUp()
            await projector.close()
            let verify = try await LogReplay(store).rebuild(RebuildOptions(verify: true))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }

    /// A rebuild of some read models past where the others stand writes no snapshot: the projector
    /// starts from its lowest checkpoint, and the snapshot it has stays (one is kept).
    @Test func aPartialRebuildPastTheOthersKeepsTheProjectorsSnapshot() async throws {
        try await TestDatabase.withSchema("snappartial") { config in
            let store = try await Self.open(config)
            defer { Task { await store.close() } }
            _ = try await store.append(Self.history)
            let cut = Int64(Self.history.count / 2)
            _ = try await LogReplay(store).rebuild(RebuildOptions(through: cut))
            let orders = try await LogReplay(store).rebuild(RebuildOptions(models: [.orders]))
            #expect(orders.snapshot == nil)
            #expect(orders.snapshotSkipped?.contains("entitlements is at position \(cut)") == true)
            #expect(try await Self.snapshotPositions(config) == [cut])
            let projector = try await Projector.start(store, snapshotEvery: 0)
            #expect(projector.startedFrom?.position == cut)
            try await projector.catchUp()
            await projector.close()
            // Every model at the head: a rebuild of one writes its snapshot there.
            let all = try await LogReplay(store).rebuild(RebuildOptions(models: [.orders]))
            #expect(all.snapshot?.position == Int64(Self.history.count) && all.snapshotSkipped == nil)
        }
    }

    /// A snapshot is a cache: when it cannot be written (no right to) or the table is missing (a
    /// schema not migrated yet), the projector folds the log and keeps the read models all the same.
    @Test func aProjectorGoesOnWithoutSnapshots() async throws {
        try await TestDatabase.withSchema("snapnone") { config in
            let owner = try await Self.open(config)
            let store = try await Self.open(config.connecting(as: .projector))
            defer {
                Task {
                    await owner.close()
                    await store.close()
                }
            }
            let s = quoteIdentifier(config.schema)
            _ = try await owner.append(Array(Self.history.prefix(300)))
            try await TestDatabase.tamper(config, "REVOKE INSERT ON \(s).projector_snapshots FROM ledger_projector")
            let first = try await Projector.start(store, snapshotEvery: 100)
            #expect(try await first.catchUp(batchSize: 120) == 300)
            await first.close()
            #expect(try await Self.snapshotPositions(config).isEmpty)
            try await TestDatabase.tamper(config, "DROP TABLE \(s).projector_snapshots")
            _ = try await owner.append(Array(Self.history.dropFirst(300)))
            let second = try await Projector.start(store, snapshotEvery: 100)
            #expect(second.startedFrom == nil)
            try await second.catchUp()
            await second.close()
            let verify = try await LogReplay(owner).rebuild(RebuildOptions(verify: true))
            #expect(!verify.hasDifferences, "\(verify.tables.flatMap(\.differences))")
        }
    }
}
