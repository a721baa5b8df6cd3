@testable import LedgerDomain
import Testing

/// The fold's table of views behaves as a dictionary of values: lookups, in-place changes, removal,
/// value semantics across copies.
@Suite("ViewTable")
struct ViewTableTests {
    /// Thousands of views, each changed in place after it was added.
    @Test func behavesAsADictionaryAcrossPages() {
        let n = 9_000
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
        #expect(table.count == n && table.values.count == n)
        #expect(table.keys == (0..<n).map { "k\($0)" })
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == reference)
        #expect(table["k\(n - 1)"] == reference["k\(n - 1)"] && table["missing"] == nil)
        #expect(table["missing", default: [7]] == [7] && table.count == n)
    }

    /// Removing a view moves the last one into its place; every other key still finds its view.
    @Test func removalKeepsEveryOtherView() {
        var table = ViewTable<Int>()
        let n = 5_003
        for i in 0..<n { table["k\(i)"] = i }
        table["k5"] = nil
        table["k\(n - 1)"] = nil
        table["k\(n - 1)"] = nil
        #expect(table.count == n - 2)
        for i in 0..<n where i != 5 && i != n - 1 { #expect(table["k\(i)"] == i) }
        #expect(table["k5"] == nil)
        table["k5"] = 50
        #expect(table["k5"] == 50 && table.keys.last == "k5")
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
        #expect(table.keys == ["a", "b", "c"] && table.values == [1, 2, 3] && table["b"] == 2 && table.count == 3)
        for runs in [[(["a", "b"], [1, 2]), (["c", "a"], [3, 4])], [(["d", "e", "d"], [4, 5, 6])]] {
            guard case .failure(let duplicate) = ViewTable<Int>.assemble(runs) else { Issue.record("\(runs) assembled"); continue }
            #expect(duplicate.key == runs.flatMap(\.0).first { k in runs.flatMap(\.0).filter { $0 == k }.count > 1 })
        }
        #expect(table.with("b") { $0 * 10 } == 20 && table.with("z") { $0 } == nil)
        #expect(table.update("c") { $0 += 1 } && !table.update("z") { $0 += 1 })
        #expect(table["c"] == 4 && table.contains("c") && !table.contains("z"))
    }
}
