import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
@testable import LedgerProjection
import LedgerScenarios
import LedgerTesting
import Synchronization
import Testing

/// A fold kept to a memory limit spills its views to a temporary file and reads them back: the
/// audit and the rebuilt read models are the ones of a fold in memory.
@Suite("Fold memory", .timeLimit(.minutes(3)))
struct FoldMemoryTests {
    /// Pages of eight views and a few kilobytes: nearly every view is spilled and read back.
    static let tiny: FoldMemory = {
        var m = FoldMemory(limit: 40_000)
        m.pageSize = 8
        return m
    }()

    @Test func anAuditKeptToItsMemoryFindsWhatOneInMemoryFinds() async throws {
        try await TestDatabase.withSchema("foldmemory") { config in
            let store = try await ProjectionStoreTests.open(config)
            let events = Simulator(users: 60, days: 30, seed: 5, faults: try FaultSpec.parse("all=0.05")).events()
            for start in stride(from: 0, to: events.count, by: 2_000) {
                _ = try await store.append(Array(events[start..<min(start + 2_000, events.count)]))
            }
            let inMemory = try await LogReplay(store).audit(memory: .unlimited)
            let spilled = try await LogReplay(store).audit(memory: Self.tiny)
            #expect(inMemory.spill == nil)
            let spill = try #require(spilled.spill)
            #expect(spill.views > 100 && spill.bytes > 0 && spill.reads > 0)
            #expect(!inMemory.findings.isEmpty)
            #expect(spilled.findings == inMemory.findings)
            #expect(spilled.verifiedByChannel == inMemory.verifiedByChannel && spilled.sandbox == inMemory.sandbox)
            #expect(spilled.daily == inMemory.daily && spilled.headHash == inMemory.headHash)

            let rebuilt = try await LogReplay(store).rebuild(RebuildOptions(snapshot: false, memory: .unlimited))
            let again = try await LogReplay(store).rebuild(RebuildOptions(verify: true, memory: Self.tiny))
            #expect(again.spill != nil && !again.hasDifferences)
            #expect(again.tables.map(\.checksum) == rebuilt.tables.map(\.checksum))
            await store.close()
        }
    }

    /// Bytes appended from several threads at once read back as written, and the file is gone
    /// from its directory from the start.
    @Test func aSpillFileReadsBackWhatWasAppended() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try SpillFile(directory: directory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let written = Mutex<[(Int64, [UInt8])]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for n in 0..<200 {
                let bytes = (0..<(n % 37 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ t &* 7 &+ n) }
                let offset = file.append(bytes)
                written.withLock { $0.append((offset, bytes)) }
            }
        }
        let all = written.withLock { $0 }
        #expect(all.count == 1_600 && file.size == Int64(all.reduce(0) { $0 + $1.1.count }))
        #expect(Set(all.map(\.0)).count == all.count)
        for (offset, bytes) in all { #expect(file.read(at: offset, count: bytes.count) == bytes) }
        #expect(file.readCount == all.count)
    }

    /// A spill file that cannot be written (here a descriptor opened read-only; in use, a full
    /// disk) keeps what it is given in memory: a fold through it is the fold in memory, and the
    /// failure is reported by name.
    @Test func aSpillFileThatCannotBeWrittenKeepsTheViewsInMemory() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = SpillFile(descriptor: open(path, O_RDONLY))
        let a = file.append([1, 2, 3]), b = file.append([4, 5, 6, 7])
        #expect(file.read(at: a, count: 3) == [1, 2, 3] && file.read(at: b + 1, count: 2) == [5, 6])
        #expect(file.failure?.contains("cannot write 3 bytes to the spill file at byte 0") == true)

        let history = Simulator(users: 60, days: 30, seed: 9, faults: try FaultSpec.parse("all=0.05")).facts
        var inMemory = Projections(), spilled = Projections()
        let unwritable = SpillFile(descriptor: open(path, O_RDONLY))
        spilled.spillViews(to: unwritable, memory: 20_000, pageSize: 8)
        for (i, f) in history.enumerated() {
            let ctx = FactContext(position: Int64(i + 1), occurredAt: f.at)
            inMemory.apply(f.fact, ctx)
            spilled.apply(f.fact, ctx)
        }
        #expect(spilled.spilledViews > 100 && unwritable.failure != nil)
        #expect(try spilled.snapshot() == inMemory.snapshot())
        let report = try #require(SpillReport(spilled, unwritable))
        #expect(report.description.contains("and the rest was kept in memory"))
    }

    @Test func aSpillFileInAMissingDirectoryIsRefusedByName() {
        #expect { try SpillFile(directory: "/nonexistent-ledger-spill-directory") } throws: { error in
            "\(error)".contains("/nonexistent-ledger-spill-directory") && (error as? SpillFileError)?.code == .spillFile
        }
    }

    @Test func sizesAreReadWithTheirUnits() {
        #expect(FoldMemory(parsing: "256MiB")?.limit == 256 << 20)
        #expect(FoldMemory(parsing: "2GiB")?.limit == 2 << 30 && FoldMemory(parsing: "2g")?.limit == 2 << 30)
        #expect(FoldMemory(parsing: "512MB")?.limit == 512 << 20 && FoldMemory(parsing: "1000000")?.limit == 1_000_000)
        #expect(FoldMemory(parsing: " 64 mib ")?.limit == 64 << 20)
        #expect(FoldMemory(parsing: "none")?.limit == nil && FoldMemory(parsing: "none") != nil)
        for bad in ["", "MiB", "-5MiB", "0", "12 parsecs", "99999999999999999999GiB"] {
            #expect(FoldMemory(parsing: bad) == nil, "\(bad)")
        }
        #expect(
            FoldMemory(parsing: "256MiB")?.description == "256 MiB" && FoldMemory.unlimited.description == "no limit")
        #expect(
            FoldMemory(parsing: "2GiB")?.description == "2 GiB"
                && FoldMemory(parsing: "1500000000")?.description == "1430 MiB")
        #expect(FoldMemory(parsing: "1000")?.description == "1000 bytes")
        // 64 MiB, or less where a quarter of the machine's memory is less.
        #expect((FoldMemory.automatic.limit ?? 0) > 0 && (FoldMemory.automatic.limit ?? .max) <= 64 << 20)
        #expect(FoldMemory.automatic.limit == min(64 << 20, (FoldMemory.availableMemory ?? .max) / 4))
    }
}
