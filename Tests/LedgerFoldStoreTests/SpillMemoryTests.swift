@testable import LedgerFoldStore
import Testing

/// A table kept to a memory counts what its views take, from the pages it spills, and keeps as
/// many as fit: ids of 24 bytes (on the heap) make fewer views fit than ids of 8.
@Suite("ViewTable kept to a memory")
struct SpillMemoryTests {
    typealias Counter = ViewTableTests.Counter

    @Test func aStringOnTheHeapIsCountedAndAShortOneIsNot() {
        let w = BinaryWriter()
        w.string("fifteen bytes..")
        #expect(w.heapBytes == 0)
        w.string("sixteen bytes...")
        // 32 bytes of header, 16 of text and its terminator, the allocator's 8, rounded to 16 bytes.
        #expect(w.heapBytes == 64 && BinaryWriter.allocation(17) == 64)
        var xs: [Int64] = []
        xs.reserveCapacity(4)
        xs.append(1)
        w.array(xs) { w.int($0) }
        #expect(w.heapBytes == 64 + BinaryWriter.allocation(xs.capacity * 8))
        var ps = PositionList()
        for p in 1...5 { ps.append(Int64(p)) }
        w.positions(ps)
        #expect(w.heapBytes == 64 + BinaryWriter.allocation(xs.capacity * 8), "five positions lie inline")
    }

    /// Two tables told the same memory and the same (far too many) pages to start with: after the
    /// first page spilled, each keeps what fits, and reads back the same views it was given.
    @Test func aTableKeepsTheViewsThatFitItsMemory() {
        let memory = 64 << 10, pageSize = 16
        func filled(note: (Int) -> String) -> (ViewTable<Counter>, [String: Counter]) {
            var table = ViewTable<Counter>()
            table.spill(
                to: MemorySpillStore(), pageSize: pageSize, residentPages: 1_000, recallCapacity: 1_000,
                memory: memory)
            var reference: [String: Counter] = [:]
            for i in 0..<3_000 {
                let key = "k\(i)", view = Counter(total: Int64(i), note: note(i))
                table[key] = view
                reference[key] = view
            }
            // Views long spilled, changed: read back into the cache of recalled views.
            for i in stride(from: 0, to: 1_500, by: 3) {
                _ = table.update("k\(i)") { $0.total += 1 }
                reference["k\(i)"]!.total += 1
            }
            return (table, reference)
        }
        let (long, longReference) = filled { "order-\(String(repeating: "0", count: 18))\($0 % 10)" }
        let (short, shortReference) = filled { "o\($0)" }
        for (table, reference, label) in [(long, longReference, "long"), (short, shortReference, "short")] {
            let kept = table.spillShape!.residentPages
            let perView = table.spill!.bytesPerView
            #expect(kept < 1_000 && perView > MemoryLayout<Counter>.stride, "\(label): \(kept) pages, \(perView) B")
            // What stays in memory fits three quarters of it, but for the page being filled.
            let resident = table.count - table.spilled.views
            #expect((resident - pageSize) * perView <= memory * 3 / 4, "\(label): \(resident) views of \(perView) B")
            #expect(table.spilled.recalled * perView <= memory / 4, "\(label): \(table.spilled.recalled) recalled")
            #expect(Dictionary(uniqueKeysWithValues: Array(table)) == reference, "\(label)")
        }
        // 25 bytes of note: 80 on the heap, which 5 bytes or fewer do not take.
        #expect(long.spill!.bytesPerView - short.spill!.bytesPerView == BinaryWriter.allocation(26))
        #expect(long.spillShape!.residentPages < short.spillShape!.residentPages)
    }

    /// Views that grow after their pages were counted (short notes, then long ones on the heap):
    /// every view still fits, so no page spills to count them by, until the table is told to count
    /// again. Then it keeps what fits, and reads back the same views it was given.
    @Test func viewsThatGrowAfterTheyWereCountedAreCountedAgain() {
        let memory = 64 << 10, pageSize = 16
        var table = ViewTable<Counter>()
        table.spill(
            to: MemorySpillStore(), pageSize: pageSize, residentPages: 1, recallCapacity: 1, memory: memory)
        var reference: [String: Counter] = [:]
        for i in 0..<480 {
            table["k\(i)"] = Counter(total: Int64(i), note: "o\(i)")
            reference["k\(i)"] = Counter(total: Int64(i), note: "o\(i)")
        }
        #expect(table.spilled.views == 0, "480 short views fit 48 KiB")
        let counted = table.spill!.bytesPerView
        for i in 0..<480 {
            let note = "order-\(i)-" + String(repeating: "x", count: 200)
            table.update("k\(i)") { $0.note = note }
            reference["k\(i)"]!.note = note
        }
        #expect(table.spilled.views == 0 && table.spill!.bytesPerView == counted, "nothing counted them again")

        table.keepToMemoryAsViewsGrow()
        let perView = table.spill!.bytesPerView
        #expect(perView >= counted + 200, "\(perView) B a view, \(counted) before")
        let resident = table.count - table.spilled.views
        #expect(table.spilled.views > 0)
        #expect((resident - pageSize) * perView <= memory * 3 / 4, "\(resident) views of \(perView) B")
        #expect(Dictionary(uniqueKeysWithValues: Array(table)) == reference)

        // Views that shrink are not counted as smaller: the pages spilled count them as they are.
        for i in 0..<480 { _ = table.update("k\(i)") { $0.note = "o" } }
        table.keepToMemoryAsViewsGrow()
        #expect(table.spill!.bytesPerView == perView)
    }
}
