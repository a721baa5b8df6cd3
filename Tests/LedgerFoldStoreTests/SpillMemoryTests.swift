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
}
