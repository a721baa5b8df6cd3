import LedgerCore
@testable import LedgerFoldStore
import Testing

/// The key index finds every key it holds, and none it does not, through growth by a quarter,
/// removals that move displaced slots back, and probes that wrap past the last slot.
@Suite("KeyIndex")
struct KeyIndexTests {
    /// Random inserts, removals and moves, checked against a dictionary after each step. The
    /// hashes come from a few values (so probes run long and collide), from both ends of the
    /// range (so their home slots are the first and the last, and probes wrap), and from anywhere.
    @Test(arguments: [1 as UInt64, 2, 3])
    func agreesWithADictionary(_ seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var index = KeyIndex()
        var model: [Int: UInt32] = [:]  // offset -> hash
        var nextOffset = 0
        func randomHash() -> UInt32 {
            switch rng.next() % 4 {
            case 0: UInt32(rng.next() % 8) * 0x2000_0000
            case 1: UInt32.max - UInt32(rng.next() % 4)
            case 2: UInt32(rng.next() % 4)
            default: UInt32(truncatingIfNeeded: rng.next())
            }
        }
        func find(_ offset: Int, _ hash: UInt32) -> Int? { index.offset(hash) { $0 == offset } }
        var live: [Int] = []  // the offsets in `model`, in a fixed order
        for step in 0..<3_000 {
            let action = rng.next() % 8
            if action < 3 && !live.isEmpty {
                let k = Int(rng.next() % UInt64(live.count))
                let offset = live[k]
                let hash = model[offset]!
                let slot = index.slot(hash) { $0 == offset }!
                model[offset] = nil
                if action < 2 {
                    // Remove a key.
                    index.remove(slot: slot)
                    live.remove(at: k)
                    #expect(find(offset, hash) == nil, "step \(step): \(offset) still found after its removal")
                } else {
                    // Point a key at another offset.
                    index.move(slot: slot, to: nextOffset)
                    model[nextOffset] = hash
                    live[k] = nextOffset
                    nextOffset += 1
                }
            } else {
                let hash = randomHash()
                index.insert(hash, offset: nextOffset)
                model[nextOffset] = hash
                live.append(nextOffset)
                nextOffset += 1
            }
            #expect(index.count == model.count)
            #expect(index.count * 4 <= index.slots.count * 3, "step \(step): more than three quarters full")
            if step % 100 == 0 || step > 2_900 {
                for (offset, hash) in model {
                    #expect(find(offset, hash) == offset, "step \(step): \(offset) (hash \(hash)) not found")
                }
                #expect(index.slots.filter { $0 != 0 }.count == model.count)
            }
        }
    }

    /// It grows by a quarter, so it stays at least three fifths full once it has grown, and a
    /// reserved capacity takes its keys without growing.
    @Test func growsByAQuarter() {
        var index = KeyIndex()
        var fullest = 0.0
        for i in 0..<100_000 {
            let before = index.slots.count
            index.insert(UInt32(truncatingIfNeeded: i &* 2_654_435_761), offset: i)
            if index.slots.count != before && before > 0 {
                #expect(index.slots.count == before + before / 4, "grew from \(before) to \(index.slots.count)")
                fullest = max(fullest, Double(i) / Double(before))
            }
        }
        #expect(fullest > 0.74 && fullest <= 0.75)
        #expect(Double(index.count) / Double(index.slots.count) >= 0.6)
        var reserved = KeyIndex()
        reserved.reserveCapacity(50_000)
        let capacity = reserved.slots.count
        for i in 0..<50_000 { reserved.insert(UInt32(truncatingIfNeeded: i &* 40_503), offset: i) }
        #expect(reserved.slots.count == capacity && capacity <= 50_000 * 4 / 3 + 1)
        for i in stride(from: 0, to: 50_000, by: 997) {
            #expect(reserved.offset(UInt32(truncatingIfNeeded: i &* 40_503)) { $0 == i } == i)
        }
    }
}
