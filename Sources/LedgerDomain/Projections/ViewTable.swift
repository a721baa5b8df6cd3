import LedgerCore

/// Views by key: the views side by side in one array, in the order their keys first appeared, and
/// a hash index from each key to its view's offset.
///
/// A `Dictionary` of views keeps each view inline in its hash table's slots, and a hash table runs
/// 25-62 % empty (it doubles when it is three quarters full), so every empty slot carries the size
/// of a whole view: several hundred bytes for an order or a transaction. Here an index slot holds a
/// key and an offset. The array of views keeps spare room as it grows too, but that room is never
/// touched, so it takes address space and no memory; a hash table's empty slots are spread among
/// the full ones and take memory. The views of a
/// 10-million-fact log took 45 % less memory this way than in dictionaries (rebuild and audit
/// peaks of 2.8 GiB instead of 5.0).
///
/// Iteration follows the order keys were added (deterministic, unlike a dictionary's); anything
/// the ledger prints is still sorted by key where its order matters.
public struct ViewTable<Value: Sendable>: Sendable {
    private var index: [String: Int] = [:]
    /// The keys, in the order they were added.
    public private(set) var keys: [String] = []
    /// The views, in the order of ``keys``.
    public private(set) var values: [Value] = []

    public init() {}

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    /// The view under `key`; setting nil removes it (the last view takes its place in the order).
    public subscript(key: String) -> Value? {
        get { index[key].map { values[$0] } }
        set {
            if let i = index[key] {
                if let newValue {
                    values[i] = newValue
                } else {
                    remove(at: i)
                }
            } else if let newValue {
                append(key, newValue)
            }
        }
    }

    /// The view under `key`, added as `defaultValue` first when there is none; changed in place.
    public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        get { index[key].map { values[$0] } ?? defaultValue() }
        _modify {
            let i: Int
            if let found = index[key] {
                i = found
            } else {
                i = values.count
                append(key, defaultValue())
            }
            yield &values[i]
        }
    }

    /// Whether a view is under `key`.
    public func contains(_ key: String) -> Bool { index[key] != nil }

    /// `body` applied to the view under `key` where it lies, or nil when there is none. Reading a
    /// field through ``subscript(_:)`` copies the whole view out first (hundreds of bytes and a
    /// retain for each string); the fold reads through this instead.
    public func with<T>(_ key: String, _ body: (Value) throws -> T) rethrows -> T? {
        guard let i = index[key] else { return nil }
        // Through the buffer: the array's subscript would hand out a copy.
        return try values.withUnsafeBufferPointer { try body($0[i]) }
    }

    /// Changes the view under `key` in place; false when there is none.
    @discardableResult
    public mutating func update(_ key: String, _ body: (inout Value) throws -> Void) rethrows -> Bool {
        guard let i = index[key] else { return false }
        try body(&values[i])
        return true
    }

    /// Adds a view under a key that has none; false (and nothing added) when the key has one.
    mutating func add(_ key: String, _ value: Value) -> Bool {
        guard index[key] == nil else { return false }
        append(key, value)
        return true
    }

    /// The views of `runs` (each a run of keys and their views, as many of one as of the other) in
    /// order, each run's arrays freed once its views are in (so the table never needs twice its
    /// size; the first run's arrays are taken as they are); the first key found twice, if one is.
    static func assemble(_ runs: consuming [([String], [Value])]) -> Result<ViewTable, DuplicateKey> {
        var table = ViewTable()
        let total = runs.reduce(0) { $0 + $1.0.count }
        table.index.reserveCapacity(total)
        for r in runs.indices {
            let (keys, values) = runs[r]
            precondition(keys.count == values.count, "a run of \(keys.count) keys for \(values.count) views")
            runs[r] = ([], [])
            for (i, key) in keys.enumerated() {
                guard table.index.updateValue(table.keys.count + i, forKey: key) == nil else { return .failure(DuplicateKey(key: key)) }
            }
            if table.keys.isEmpty {
                (table.keys, table.values) = (keys, values)
                table.keys.reserveCapacity(total)
                table.values.reserveCapacity(total)
            } else {
                table.keys.append(contentsOf: keys)
                table.values.append(contentsOf: values)
            }
        }
        return .success(table)
    }

    struct DuplicateKey: Error { let key: String }

    private mutating func append(_ key: String, _ value: Value) {
        index[key] = values.count
        keys.append(key)
        values.append(value)
    }

    private mutating func remove(at i: Int) {
        index[keys[i]] = nil
        let last = values.count - 1
        if i != last {
            keys.swapAt(i, last)
            values.swapAt(i, last)
            index[keys[i]] = i
        }
        keys.removeLast()
        values.removeLast()
    }
}

extension ViewTable: Sequence {
    public struct Iterator: IteratorProtocol {
        let table: ViewTable
        var offset = 0
        public mutating func next() -> (key: String, value: Value)? {
            guard offset < table.values.count else { return nil }
            defer { offset += 1 }
            return (table.keys[offset], table.values[offset])
        }
    }

    public func makeIterator() -> Iterator { Iterator(table: self) }
    public var underestimatedCount: Int { values.count }
}

extension ViewTable: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}

/// Equal when both hold the same views under the same keys, in whatever order they were added.
extension ViewTable: Equatable where Value: Equatable {
    public static func == (a: ViewTable, b: ViewTable) -> Bool {
        a.count == b.count && a.allSatisfy { b[$0.key] == $0.value }
    }
}

/// The keys, then the views in the same order.
extension ViewTable: Codable where Value: Codable {
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        let keys = try c.decode([String].self)
        let values = try c.decode([Value].self)
        guard keys.count == values.count, case .success(let table) = Self.assemble([(keys, values)]) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "\(keys.count) keys for \(values.count) views, or a key twice")
        }
        self = table
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(keys)
        try c.encode(values)
    }
}

/// The same, each view by its own fields.
extension ViewTable: BinaryFields where Value: BinaryFields {
    public init(binary r: BinaryReader) throws {
        let keys = try r.array { try r.string() }
        let values = try r.array { try Value(binary: r) }
        guard keys.count == values.count, case .success(let table) = Self.assemble([(keys, values)]) else {
            throw r.invalid("\(keys.count) keys for \(values.count) views, or a key twice")
        }
        self = table
    }

    public func write(binary w: BinaryWriter) {
        w.array(keys) { w.string($0) }
        w.array(values) { $0.write(binary: w) }
    }
}
