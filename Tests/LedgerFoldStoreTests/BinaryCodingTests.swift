@testable import LedgerFoldStore
import LedgerCore
import Testing

/// The snapshot's binary form: every shape the fold's state uses reads back equal, equal values
/// write equal bytes, and damaged bytes are refused.
@Suite("Binary coding")
struct BinaryCodingTests {
    enum Kind: String, Codable, Hashable { case one, two }
    enum Shape: Codable, Hashable {
        case none
        case point(x: Int64, label: String?)
        case pair(Int32, Kind)
    }
    struct Inner: Codable, Hashable {
        var name: String
        var when: Int64?
    }
    struct Outer: Codable, Hashable {
        var id: String
        var count: Int
        var flag: Bool
        var ratio: Double
        var small: UInt8
        var maybe: String?
        var absent: Int32?
        var inner: Inner
        var innerMaybe: Inner?
        var list: [Int64]
        var optionals: [String?]
        var shapes: [Shape]
        var byName: [String: Inner]
        var byKind: [Kind: Int64]
        var names: Set<String>
        var nested: [[Int64]]
        var last: Shape
    }

    static let sample = Outer(
        id: "o-1", count: -42, flag: true, ratio: 0.25, small: 200, maybe: "é ✓", absent: nil,
        inner: Inner(name: "a", when: 1_774_944_900_000_000), innerMaybe: nil,
        list: [0, 1, -1, Int64.max, Int64.min], optionals: [nil, "x", nil],
        shapes: [.none, .point(x: 7, label: nil), .pair(-3, .two), .point(x: -8, label: "p")],
        byName: ["b": Inner(name: "b", when: nil), "a": Inner(name: "a", when: 5)],
        byKind: [.two: 2, .one: 1], names: ["z", "y", "x"], nested: [[], [1], [2, 3]], last: .none)

    @Test func everyShapeReadsBackEqual() throws {
        let bytes = try BinaryCoding.encode(Self.sample)
        #expect(try BinaryCoding.decode(Outer.self, from: bytes) == Self.sample)
        var other = Self.sample
        other.innerMaybe = Inner(name: "", when: 0)
        other.absent = Int32.min
        other.last = .pair(Int32.max, .one)
        #expect(try BinaryCoding.decode(Outer.self, from: try BinaryCoding.encode(other)) == other)
    }

    /// Dictionaries and sets are written sorted: equal values, equal bytes, whatever their order.
    @Test func equalValuesWriteEqualBytes() throws {
        var a = Self.sample, b = Self.sample
        a.byName = [:]
        b.byName = [:]
        a.names = []
        b.names = []
        for i in 0..<200 {
            a.byName["k\(i)"] = Inner(name: "\(i)", when: Int64(i))
            a.names.insert("n\(i)")
        }
        for i in (0..<200).reversed() {
            b.byName["k\(i)"] = Inner(name: "\(i)", when: Int64(i))
            b.names.insert("n\(i)")
        }
        #expect(try BinaryCoding.encode(a) == BinaryCoding.encode(b))
    }

    @Test func damagedBytesAreRefused() throws {
        let bytes = try BinaryCoding.encode(Self.sample)
        #expect(throws: DecodingError.self) { try BinaryCoding.decode(Outer.self, from: Array(bytes.dropLast(3))) }
        #expect(throws: DecodingError.self) { try BinaryCoding.decode(Outer.self, from: bytes + [0]) }
        #expect(throws: DecodingError.self) { try BinaryCoding.decode(Outer.self, from: [0xFF, 0xFF, 0xFF]) }
    }

    /// A sized value reads back, can be passed over, and a size that does not match what it
    /// holds (or that runs past the bytes) is refused.
    @Test func sizedValuesReadBackOrArePassedOver() throws {
        let w = BinaryWriter()
        w.sized {
            w.string("first")
            w.int(-7)
        }
        w.sized { w.string(String(repeating: "x", count: 300)) }
        w.string("after")
        let bytes = w.take()
        let read = try BinaryCoding.read(bytes) { r in
            let end = try r.beginSized()
            let (s, i) = (try r.string(), try r.int())
            try r.endSized(end)
            try r.skipSized()
            return (s, i, try r.string())
        }
        #expect(read.0 == "first" && read.1 == -7 && read.2 == "after")
        #expect(throws: DecodingError.self, "a sized value read short") {
            try BinaryCoding.read(bytes) { r in
                let end = try r.beginSized()
                _ = try r.string()
                try r.endSized(end)
            }
        }
        #expect(throws: DecodingError.self, "a size beyond the bytes") {
            try BinaryCoding.read(Array(bytes.prefix(10))) { r in try r.skipSized() }
        }
        #expect(throws: DecodingError.self, "fewer than four bytes of size") {
            try BinaryCoding.read([1, 0]) { r in try r.skipSized() }
        }
        #expect(
            try BinaryCoding.read(bytes[bytes.index(bytes.endIndex, offsetBy: -6)...]) { try $0.string() } == "after")
    }
}
