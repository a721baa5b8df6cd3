import Foundation
@testable import LedgerFoldStore
import Testing

/// A list of nearly always one element behaves as the array it replaces, with none, one or many.
@Suite("Few")
struct FewTests {
    @Test(arguments: 0..<6)
    func behavesAsAnArray(_ n: Int) throws {
        var few = Few<String>()
        var array: [String] = []
        for i in 0..<n {
            few.append("element \(i)")
            array.append("element \(i)")
            #expect(Array(few) == array && few.count == array.count && few.last == array.last)
        }
        for i in few.indices {
            few[i] += " changed"
            array[i] += " changed"
        }
        #expect(Array(few) == array && few.first == array.first && few.isEmpty == array.isEmpty)
        #expect(few == Few(array) && few.hashValue == Few(array).hashValue && few.description == array.description)
        if n > 0 { #expect(few != Few(array.dropLast())) }
        let data = try JSONEncoder().encode(few)
        #expect(data == (try JSONEncoder().encode(array)))
        #expect(try JSONDecoder().decode(Few<String>.self, from: data) == few)
    }

    /// A copy keeps its elements when the original changes (the array behind many is shared
    /// until then).
    @Test func copiesAreIndependent() {
        var a: Few = [1, 2]
        let b = a
        a.append(3)
        a[0] = 10
        #expect(Array(a) == [10, 2, 3] && Array(b) == [1, 2])
        var c: Few = [1]
        let d = c
        c[0] = 5
        #expect(Array(c) == [5] && Array(d) == [1])
    }

    /// One element takes no room beyond its own (and no allocation).
    @Test func oneElementLiesInline() {
        struct Record {
            var key: String
            var at: Int64
            var note: String?
        }
        #expect(MemoryLayout<Few<Record>>.size <= MemoryLayout<Record>.size + 1)
        #expect(MemoryLayout<Few<Int64>>.size <= MemoryLayout<Int64>.size + 1)
    }
}
