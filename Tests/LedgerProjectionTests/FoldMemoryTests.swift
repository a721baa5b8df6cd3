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
            let inMemory = try await store.audit(memory: .unlimited)
            let spilled = try await store.audit(memory: Self.tiny)
            #expect(inMemory.spill == nil)
            let spill = try #require(spilled.spill)
            #expect(spill.views > 100 && spill.bytes > 0 && spill.reads > 0)
            #expect(!inMemory.findings.isEmpty)
            #expect(spilled.findings == inMemory.findings)
            #expect(spilled.verifiedByChannel == inMemory.verifiedByChannel && spilled.sandbox == inMemory.sandbox)
            #expect(spilled.daily == inMemory.daily && spilled.headHash == inMemory.headHash)

            let rebuilt = try await store.rebuild(RebuildOptions(snapshot: false, memory: .unlimited))
            let again = try await store.rebuild(RebuildOptions(verify: true, memory: Self.tiny))
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
        for bad in ["", "MiB", "-5MiB", "0", "12 parsecs", "99999999999999999999GiB"] { #expect(FoldMemory(parsing: bad) == nil, "\(bad)") }
        #expect(FoldMemory(parsing: "256MiB")?.description == "256 MiB" && FoldMemory.unlimited.description == "no limit")
        #expect(FoldMemory(parsing: "2GiB")?.description == "2 GiB" && FoldMemory(parsing: "1500000000")?.description == "1430 MiB")
        #expect(FoldMemory(parsing: "1000")?.description == "1000 bytes")
        #expect(FoldMemory.automatic.limit.map { $0 > 0 } ?? true)
    }
}
