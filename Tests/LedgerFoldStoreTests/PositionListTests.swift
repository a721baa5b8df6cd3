import Foundation
@testable import LedgerFoldStore
import Testing

/// A view's packed positions read back as the positions added, whatever they are, inline or not.
@Suite("PositionList")
struct PositionListTests {
    static let sequences: [[Int64]] = [
        [], [1], [0], [-1], [Int64.max], [Int64.min],
        Array(1...30),
        [5, 9, 300, 301, 70_000, 70_002, 9_000_000_000],
        [Int64.min, Int64.max, Int64.min, 0, -5, 5],
        [100, 50, 1, 7, 7],
        (0..<500).map { Int64($0) * 37 + 10_000_000 },
    ]

    @Test(arguments: sequences)
    func readsBackWhatWasAdded(_ positions: [Int64]) {
        var list = PositionList()
        for (n, p) in positions.enumerated() {
            list.append(p)
            #expect(list.last == p && list.count == n + 1 && list.first == positions[0])
        }
        #expect(Array(list) == positions && list.isEmpty == positions.isEmpty)
        #expect(list == PositionList(positions) && list.hashValue == PositionList(positions).hashValue)
        if positions.isEmpty { #expect(list.first == nil && list.last == nil && list.count == 0) }
    }

    /// Lists one position apart in length or in one value differ, on either side of the inline room.
    @Test func equalOnlyWhenThePositionsAre() {
        for n in 0..<40 {
            let base = (0..<n).map { Int64($0) * 3 + 1_000 }
            #expect(PositionList(base) == PositionList(base))
            #expect(PositionList(base) != PositionList(base + [5_000]))
            if n > 0 {
                var changed = base
                changed[n / 2] += 1
                #expect(PositionList(base) != PositionList(changed), "\(n)")
            }
        }
    }

    /// An order's facts close together take no memory of their own (steps under 64 take a byte,
    /// under 8,192 two); a long list does, a byte or two a position.
    @Test func closePositionsStayInline() {
        let order = PositionList((0..<12).map { 4_000_000 + Int64($0) * 40 })
        #expect(order.isInline && order.count == 12)
        let spread = PositionList((0..<10).map { 4_000_000 + Int64($0) * 5_000 })
        #expect(spread.isInline && spread.count == 10)
        #expect(!PositionList((0..<11).map { 4_000_000 + Int64($0) * 5_000 }).isInline)
        let user = PositionList((0..<1_000).map { Int64($0) * 1_000 })
        #expect(!user.isInline && user.count == 1_000 && user.last == 999_000)
        #expect(MemoryLayout<PositionList>.size <= 40)
    }

    /// Encoded as the array of positions it replaces.
    @Test func codableAsAnArray() throws {
        let positions: [Int64] = [3, 4, 900, 1 << 40]
        let data = try JSONEncoder().encode(PositionList(positions))
        #expect(data == (try JSONEncoder().encode(positions)))
        #expect(try JSONDecoder().decode(PositionList.self, from: data) == PositionList(positions))
        #expect(
            PositionList(positions) == [3, 4, 900, 1 << 40]
                && PositionList(positions).description == "[3, 4, 900, 1099511627776]")
    }
}
