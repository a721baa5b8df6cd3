@testable import LedgerFoldStore
import LedgerCore
import Testing

/// The fold's table of views behaves as a dictionary of values: lookups, in-place changes, removal,
/// value semantics across copies.
@Suite("ViewTable")
struct ViewTableTests {
    /// Views over three pages, each changed in place after it was added.
    @Test func behavesAsADictionaryAcrossPages() {
        let n = ViewTable<[Int]>.defaultPageSize * 2 + 9
        var table = ViewTable<[Int]>()
        var reference: [String: [Int]] = [:]
        for i in 0..<n {
            table["k\(i)", default: []].append(i)
            reference["k\(i)", default: []].append(i)
        }
        for i in stride(from: 0, to: n, by: 3) {
            table["k\(i)", default: []].append(-i)
            reference["k\(i)", default: []].append(-i)
        }
        #expect(table.count == n && table.values.count == n && table.values.last == reference["k\(n - 1)"])
        #expect(table.with("k\(n - 1)") { $0.count } == 1 && table.with("k0") { $0 } == [0, 0])
        var inPlace: [String] = []
        table.forEachInPlace { key, value in if value.first == ViewTable<[Int]>.defaultPageSize { inPlace.append(key) }
        }
        #expect(inPlace == ["k\(ViewTable<[Int]>.defaultPageSize)"])
        #expect(table.keys == (0..<n).map { "k\($0)" })
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == reference)
        #expect(table["k\(n - 1)"] == reference["k\(n - 1)"] && table["missing"] == nil)
        #expect(table["missing", default: [7]] == [7] && table.count == n)
    }

    /// Removing a view moves the last one into its place; every other key still finds its view.
    @Test func removalKeepsEveryOtherView() {
        var table = ViewTable<Int>()
        // The last view alone on the last page: removing it removes the page.
        let n = ViewTable<Int>.defaultPageSize * 2 + 1
        for i in 0..<n { table["k\(i)"] = i }
        // The last key changed is remembered with its offset; a removal moves the last view.
        #expect(table.update("k\(n - 2)") { $0 += 0 })
        table["k5"] = nil
        table["k\(n - 1)"] = nil
        table["k\(n - 1)"] = nil
        #expect(table.count == n - 2)
        for i in 0..<n where i != 5 && i != n - 1 { #expect(table["k\(i)"] == i) }
        #expect(table["k5"] == nil)
        table["k5"] = 50
        #expect(table["k5"] == 50 && table.keys.last == "k5")
        #expect(table.with("k\(n - 2)") { $0 } == n - 2 && table.with("k5") { $0 } == 50)
        #expect(table.update("k5") { $0 += 1 } && table["k5"] == 51)
        table["k5"] = nil
        #expect(table.with("k5") { $0 } == nil && !table.contains("k5") && !table.update("k5") { $0 += 1 })
        #expect(Array(table.values) == table.keys.map { table[$0]! } && table.values.count == n - 2)
    }

    /// A copy keeps its views when the original changes (and the other way round).
    @Test func copiesAreIndependent() {
        var a: ViewTable<Int> = ["x": 1, "y": 2]
        let b = a
        a["x", default: 0] += 10
        a["z"] = 3
        #expect(b["x"] == 1 && b["z"] == nil && b.count == 2)
        #expect(a["x"] == 11 && a.count == 3)
        var c: ViewTable<Int> = ["y": 2]
        c["x"] = 1
        #expect(c == b && c != a)
    }

    /// A table put together from runs of views (as a snapshot's parts are): in order, every key
    /// finding its view; a key twice, in one run or two, is refused by name. Reads and changes in
    /// place see the views where they lie.
    @Test func tablesAssembledFromRunsOfViews() throws {
        var table = try ViewTable<Int>.assemble([(["a", "b"], [1, 2]), ([], []), (["c"], [3])]).get()
        #expect(
            table.keys == ["a", "b", "c"] && Array(table.values) == [1, 2, 3] && table["b"] == 2 && table.count == 3)
        // Runs that end inside a page and runs longer than one.
        let size = ViewTable<Int>.defaultPageSize
        let cuts = [0, 3, size - 1, size + 2, 3 * size + 5, 3 * size + 6]
        let runs = zip(cuts, cuts.dropFirst()).map { a, b in ((a..<b).map { "k\($0)" }, Array(a..<b)) }
        let big = try ViewTable<Int>.assemble(runs).get()
        #expect(big.count == cuts.last! && Array(big.values) == Array(0..<cuts.last!))
        #expect((0..<cuts.last!).allSatisfy { big["k\($0)"] == $0 })
        for runs in [[(["a", "b"], [1, 2]), (["c", "a"], [3, 4])], [(["d", "e", "d"], [4, 5, 6])]] {
            guard case .failure(let duplicate) = ViewTable<Int>.assemble(runs) else {
                Issue.record("\(runs) assembled")
                continue
            }
            #expect(duplicate.key == runs.flatMap(\.0).first { k in runs.flatMap(\.0).filter { $0 == k }.count > 1 })
        }
        #expect(table.with("b") { $0 * 10 } == 20 && table.with("z") { $0 } == nil)
        #expect(table.update("c") { $0 += 1 } && !table.update("z") { $0 += 1 })
        #expect(table["c"] == 4 && table.contains("c") && !table.contains("z"))
    }

    /// Thousands of adds and removals in a random order, checked against a dictionary after each
    /// step: removals in the middle of probe runs (the index moves the slots after them back) and
    /// growth in between leave every key finding its own view.
    @Test func randomAddsAndRemovalsAgreeWithADictionary() {
        var rng = SplitMix64(seed: 11)
        var table = ViewTable<Int>()
        var reference: [String: Int] = [:]
        for step in 0..<30_000 {
            let key = "k\(rng.next() % 3_000)"
            if rng.next() % 3 == 0 {
                table[key] = nil
                reference[key] = nil
            } else {
                table[key, default: 0] += step
                reference[key, default: 0] += step
            }
            if step % 997 == 0 || step == 29_999 {
                #expect(table.count == reference.count && Set(table.keys) == Set(reference.keys))
                #expect(reference.allSatisfy { table[$0.key] == $0.value && table.contains($0.key) })
                #expect((0..<3_000).filter { table.contains("k\($0)") }.count == reference.count)
            }
        }
    }

    /// A view of a few fields that writes its own (a spilling table needs that).
    struct Counter: BinaryFields, Equatable {
        var total: Int64
        var note: String
        init(total: Int64, note: String) {
            self.total = total
            self.note = note
        }
        init(binary r: BinaryReader) throws {
            total = try r.int()
            note = try r.string()
        }
        func write(binary w: BinaryWriter) {
            w.int(total)
            w.string(note)
        }
    }

    /// A table that keeps two pages of eight views in memory and four recalled views: after
    /// thousands of changes in a random order (new keys, keys long spilled, keys just recalled),
    /// it agrees with a dictionary through every way of reading it, and a copy taken midway keeps
    /// its own views while the original goes on (both read the same store).
    @Test func aSpillingTableAgreesWithADictionary() {
        var rng = SplitMix64(seed: 5)
        let store = MemorySpillStore()
        var table = ViewTable<Counter>()
        table.spill(to: store, pageSize: 8, residentPages: 2, recallCapacity: 4)
        var reference: [String: Counter] = [:]
        var copy: (table: ViewTable<Counter>, reference: [String: Counter])?
        func check(_ table: ViewTable<Counter>, _ reference: [String: Counter], _ label: String) {
            #expect(table.count == reference.count, "\(label)")
            #expect(Dictionary(uniqueKeysWithValues: Array(table)) == reference, "\(label): iterated")
            #expect(table.keys.count == reference.count && Set(table.keys) == Set(reference.keys), "\(label): keys")
            #expect(Array(table.values) == table.keys.map { reference[$0]! }, "\(label): values in key order")
            #expect(
                table.values.indices.allSatisfy { i in table.values.with(at: i) { $0 } == table.values[i] },
                "\(label): by offset")
            #expect(
                reference.allSatisfy { table[$0.key] == $0.value && table.with($0.key, \.total) == $0.value.total },
                "\(label): by key")
            var inPlace: [String: Counter] = [:]
            table.forEachInPlace { inPlace[$0] = $1 }
            #expect(inPlace == reference, "\(label): in place")
            #expect(!table.contains("absent") && table.with("absent", \.total) == nil, "\(label): absent")
        }
        for step in 0..<6_000 {
            // Mostly recent keys, sometimes any key ever added.
            let n = Int64(reference.count)
            let k =
                n == 0 || rng.next() % 4 == 0
                ? Int64(rng.next() % UInt64(n + 1)) : max(0, n - 1 - Int64(rng.next() % 12))
            let key = "key-\(k)-\(String(repeating: "x", count: Int(k % 20)))"
            switch rng.next() % 3 {
            case 0:
                table[key, default: Counter(total: 0, note: "")].total += Int64(step)
                reference[key, default: Counter(total: 0, note: "")].total += Int64(step)
            case 1:
                let changed = table.update(key) { $0.note += "u\(step)" }
                #expect(changed == (reference[key] != nil))
                reference[key]?.note += "u\(step)"
            default:
                #expect(table.with(key, \.note) == reference[key]?.note)
            }
            if step == 3_000 { copy = (table, reference) }
            if step % 1_000 == 999 { check(table, reference, "step \(step)") }
        }
        #expect(table.spilled.views > table.count / 2 && store.size > 0)
        check(copy!.table, copy!.reference, "the copy")
    }

    /// A table of many spilled pages goes through them in order, whichever way it is read and however
    /// many pages are read back at once ahead of the one gone through (on other threads), with the
    /// changes made after a page was spilled; reading part of it and stopping leaves it as it was.
    @Test func manySpilledPagesAreReadBackInOrder() {
        var table = ViewTable<Counter>()
        table.spill(to: MemorySpillStore(), pageSize: 4, residentPages: 1, recallCapacity: 2)
        let n = 4 * 25 + 3
        for i in 0..<n { table["k\(i)"] = Counter(total: Int64(i), note: "") }
        for i in stride(from: 0, to: n, by: 7) { _ = table.update("k\(i)") { $0.note = "changed" } }
        let keys = (0..<n).map { "k\($0)" }
        let views = (0..<n).map { Counter(total: Int64($0), note: $0 % 7 == 0 ? "changed" : "") }
        #expect(table.spilled.views >= n - 8, "all but the pages kept in memory are spilled")
        #expect(Array(table.values.prefix(6)) == Array(views.prefix(6)), "part of it")
        #expect(table.keys == keys)
        #expect(Array(table.values) == views)
        #expect(table.map(\.key) == keys && table.map(\.value) == views)
        for readAhead in 1...3 {
            var inPlace: [(String, Counter)] = []
            table.forEachInPlace(readAhead: readAhead) { inPlace.append(($0, $1)) }
            #expect(inPlace.map(\.0) == keys && inPlace.map(\.1) == views, "\(readAhead) pages read ahead")
        }
    }

    /// Pages added as their bytes (what a snapshot's part holds), then views added as views: the
    /// table reads, changes and iterates them as if each had been added and spilled one by one,
    /// and a key it already has, spilled or in memory, is refused.
    @Test func pagesAddedAsTheirBytesReadBackAsViews() throws {
        let views = (0..<40).map { i in ("k\(i)", Counter(total: Int64(i), note: String(repeating: "n", count: i % 5)))
        }
        let store = MemorySpillStore()
        var table = ViewTable<Counter>()
        table.spill(to: store, pageSize: 8, residentPages: 2, recallCapacity: 3)
        #expect(table.isAllSpilled && table.spillShape! == (8, 2))
        func bytes(_ key: String, _ view: Counter) -> ArraySlice<UInt8> {
            let w = BinaryWriter()
            ViewRecord.write(key, view, to: w)
            return w.take()[...]
        }
        for p in 0..<3 {
            let page = views[(p * 8)..<(p * 8 + 8)]
            try table.addSpilled(keys: page.map(\.0), bytes: page.map { bytes($0.0, $0.1) })
        }
        #expect(table.count == 24 && table.spilled.views == 24 && table.isAllSpilled)
        for (key, view) in views[24...] {
            let added = table.add(key, view)
            #expect(added)
        }
        #expect(!table.isAllSpilled && table.spilled.views == 24, "16 views fit in the two pages kept")
        var reference = Dictionary(uniqueKeysWithValues: views)
        #expect(Dictionary(uniqueKeysWithValues: Array(table)) == reference)
        #expect(views.allSatisfy { table[$0.0] == $0.1 })
        for (i, (key, _)) in views.enumerated() where i % 3 == 0 {
            table.update(key) { $0.note += "!" }
            reference[key]?.note += "!"
        }
        #expect(Dictionary(uniqueKeysWithValues: Array(table)) == reference)
        let spilledTwice = table.add("k3", Counter(total: 0, note: "")),
            keptTwice = table.add("k30", Counter(total: 0, note: ""))
        #expect(!spilledTwice && !keptTwice)

        var again = ViewTable<Counter>()
        again.spill(to: MemorySpillStore(), pageSize: 8, residentPages: 2, recallCapacity: 3)
        let twice = views[0..<7] + [views[2]]
        #expect(throws: ViewTable<Counter>.DuplicateKey.self) {
            try again.addSpilled(keys: twice.map(\.0), bytes: twice.map { bytes($0.0, $0.1) })
        }
        var later = ViewTable<Counter>()
        later.spill(to: MemorySpillStore(), pageSize: 8, residentPages: 2, recallCapacity: 3)
        try later.addSpilled(keys: views[0..<8].map(\.0), bytes: views[0..<8].map { bytes($0.0, $0.1) })
        let laterTwice = views[8..<15] + [views[5]]
        #expect(throws: ViewTable<Counter>.DuplicateKey.self, "a key of a page spilled before") {
            try later.addSpilled(keys: laterTwice.map(\.0), bytes: laterTwice.map { bytes($0.0, $0.1) })
        }
    }
}
