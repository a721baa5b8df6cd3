/// A list that nearly always holds one element: that one lies in the list itself, and only a
/// second moves them out of line into an array.
///
/// A store transaction has one binding, one client report and one grant, nearly always. As three
/// `Array`s each took an allocation of its own (an array header, the element, the allocator's
/// overhead): about 330 bytes a transaction, a quarter of a 10-million-fact audit's heap peak
/// (`heaptrack`: 525 MB of 1.99 GB). Inline, one
/// element costs its own size and no allocation.
public struct Few<Element> {
    @usableFromInline enum Storage {
        case none
        case one(Element)
        case many([Element])
    }

    @usableFromInline var storage = Storage.none

    @inlinable public init() {}

    @inlinable public init<S: Sequence<Element>>(_ elements: S) {
        for e in elements { append(e) }
    }

    @inlinable public mutating func append(_ element: Element) {
        switch storage {
        case .none:
            storage = .one(element)
        case .one(let first):
            storage = .many([first, element])
        case .many(var elements):
            // Taken out first, so the array is not shared and grows in place.
            storage = .none
            elements.append(element)
            storage = .many(elements)
        }
    }
}

extension Few: RandomAccessCollection, MutableCollection {
    @inlinable public var startIndex: Int { 0 }

    @inlinable public var endIndex: Int {
        switch storage {
        case .none: return 0
        case .one: return 1
        case .many(let elements): return elements.count
        }
    }

    @inlinable public subscript(i: Int) -> Element {
        get {
            switch storage {
            case .one(let e) where i == 0: return e
            case .many(let elements): return elements[i]
            default: preconditionFailure("index \(i) out of range of \(count) elements")
            }
        }
        set {
            switch storage {
            case .one where i == 0:
                storage = .one(newValue)
            case .many(var elements):
                storage = .none
                elements[i] = newValue
                storage = .many(elements)
            default:
                preconditionFailure("index \(i) out of range of \(count) elements")
            }
        }
    }
}

extension Few: Sendable where Element: Sendable {}
extension Few.Storage: Sendable where Element: Sendable {}

extension Few: Equatable where Element: Equatable {
    @inlinable public static func == (a: Few, b: Few) -> Bool { a.elementsEqual(b) }
}

extension Few: Hashable where Element: Hashable {
    @inlinable public func hash(into h: inout Hasher) {
        h.combine(count)
        for e in self { h.combine(e) }
    }
}

extension Few: ExpressibleByArrayLiteral {
    @inlinable public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension Few: CustomStringConvertible {
    @inlinable public var description: String { Array(self).description }
}

/// As the array it replaces.
extension Few: Codable where Element: Codable {
    @inlinable public init(from decoder: any Decoder) throws {
        self.init(try [Element](from: decoder))
    }

    @inlinable public func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}
