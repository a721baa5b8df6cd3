import Dispatch
import LedgerCore
import Synchronization

extension ViewTable: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline var pages: PageIterator
        @inlinable init(pages: PageIterator) { self.pages = pages }
        @inlinable public mutating func next() -> (key: String, value: Value)? { pages.withNext { ($0, $1) } }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(pages: PageIterator(table: self)) }
    @inlinable public var underestimatedCount: Int { count }
}

extension ViewTable: ExpressibleByDictionaryLiteral {
    @inlinable public init(dictionaryLiteral elements: (String, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}

/// Equal when both hold the same views under the same keys, in whatever order they were added.
extension ViewTable: Equatable where Value: Equatable {
    @inlinable public static func == (a: ViewTable, b: ViewTable) -> Bool {
        a.count == b.count && a.allSatisfy { b[$0.key] == $0.value }
    }
}

/// The keys, then the views in the same order.
extension ViewTable: Codable where Value: Codable {
    @inlinable public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        let keys = try c.decode([String].self)
        let values = try c.decode([Value].self)
        guard keys.count == values.count, case .success(let table) = Self.assemble([(keys, values)]) else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "\(keys.count) keys for \(values.count) views, or a key twice")
        }
        self = table
    }

    @inlinable public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(keys)
        try c.encode(Array(values))
    }
}

/// The same, each view by its own fields.
extension ViewTable: BinaryFields where Value: BinaryFields {
    @inlinable public init(binary r: BinaryReader) throws {
        let keys = try r.array { try r.string() }
        let values = try r.array { try Value(binary: r) }
        guard keys.count == values.count, case .success(let table) = Self.assemble([(keys, values)]) else {
            throw r.invalid("\(keys.count) keys for \(values.count) views, or a key twice")
        }
        self = table
    }

    @inlinable public func write(binary w: BinaryWriter) {
        w.array(keys) { w.string($0) }
        w.count(count)
        forEachInPlace { _, view in view.write(binary: w) }
    }
}
