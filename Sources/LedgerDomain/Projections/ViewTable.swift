import LedgerCore

/// Views by key: the views side by side in pages, in the order their keys first appeared, and a
/// hash index from each key to its view's offset.
///
/// A `Dictionary` of views keeps each view inline in its hash table's slots, and a hash table runs
/// 25-62 % empty (it doubles when it is three quarters full), so every empty slot carries the size
/// of a whole view: several hundred bytes for an order or a transaction. Here an index slot holds a
/// key's hash bits and an offset. The views of a 10-million-fact log took 45 % less memory this way than in
/// dictionaries (rebuild and audit peaks of 2.8 GiB instead of 5.0).
///
/// The views lie in pages of ``pageSize`` views. One array would double as it grows, copying
/// every view it holds into fresh memory each time: a sixth of a pure fold's time went into those
/// copies and the page faults of the memory they filled. A full page is never moved; the first
/// page grows as an array does until it is full, so a small table takes no more room than an
/// array. A page's spare room is never touched, so it takes address space and no memory.
///
/// The index is a ``KeyIndex``: eight bytes a slot where a `[String: Int]` took twenty-four (the
/// dictionaries were 14 MB of a 244 MB heap peak, `heaptrack`, auditing 1 M facts).
///
/// Iteration follows the order keys were added (deterministic, unlike a dictionary's); anything
/// the ledger prints is still sorted by key where its order matters.
public struct ViewTable<Value: Sendable>: Sendable {
    private var index = KeyIndex()
    /// The keys, in the order they were added.
    public private(set) var keys: [String] = []
    /// The views, in the order of ``keys``: every page but the last holds ``pageSize`` views.
    private var pages: [[Value]] = []
    /// The key last changed or added, and its view's offset (-1: none). A fact's rules look up the
    /// same order or transaction several times in a row; a key compared with the last one is
    /// found without hashing it again. Not part of the table's value.
    private var lastKey = ""
    private var lastOffset = -1

    /// Views per page: 16,384 (7.7 MB of transactions).
    static var pageShift: Int { 14 }
    static var pageSize: Int { 1 << pageShift }

    public init() {}

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The views, in the order of ``keys``.
    public var values: Views { Views(pages: pages, count: keys.count) }

    /// The views of a table, in the order of its keys (a copy of the table's pages, not of its views).
    public struct Views: RandomAccessCollection, Sendable {
        let pages: [[Value]]
        public let count: Int
        public var startIndex: Int { 0 }
        public var endIndex: Int { count }
        public subscript(i: Int) -> Value { pages[i >> ViewTable.pageShift][i & (ViewTable.pageSize - 1)] }

        /// `body` applied to the view at offset `i` where it lies (see ``ViewTable/with(_:_:)``).
        public func with<T>(at i: Int, _ body: (Value) throws -> T) rethrows -> T {
            // The page lent too: `pages[p]` would retain and release it.
            try pages.withUnsafeBufferPointer { pages in
                try pages.lend(i >> ViewTable.pageShift) { page in
                    try page.withUnsafeBufferPointer { try $0.lend(i & (ViewTable.pageSize - 1), body) }
                }
            }
        }
    }

    /// The offset of the view under `key`, if there is one.
    @inline(__always)
    private func offset(of key: String) -> Int? {
        if lastOffset >= 0, lastKey == key { return lastOffset }
        return index.offset(of: key, in: keys)
    }

    @inline(__always)
    private mutating func remember(_ key: String, _ offset: Int) {
        lastKey = key
        lastOffset = offset
    }

    /// The view under `key`; setting nil removes it (the last view takes its place in the order).
    public subscript(key: String) -> Value? {
        get { offset(of: key).map { self[offset: $0] } }
        set {
            if let i = offset(of: key) {
                if let newValue {
                    self[offset: i] = newValue
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
        get { offset(of: key).map { self[offset: $0] } ?? defaultValue() }
        _modify {
            let i: Int
            if let found = offset(of: key) {
                i = found
            } else {
                i = keys.count
                append(key, defaultValue())
            }
            remember(key, i)
            yield &self[offset: i]
        }
    }

    private subscript(offset i: Int) -> Value {
        get { pages[i >> Self.pageShift][i & (Self.pageSize - 1)] }
        _modify { yield &pages[i >> Self.pageShift][i & (Self.pageSize - 1)] }
    }

    /// Whether a view is under `key`.
    public func contains(_ key: String) -> Bool { offset(of: key) != nil }

    /// `body` applied to the view under `key` where it lies, or nil when there is none. Reading a
    /// field through ``subscript(_:)`` copies the whole view out first (hundreds of bytes and a
    /// retain for each string); the fold reads through this instead.
    public func with<T>(_ key: String, _ body: (Value) throws -> T) rethrows -> T? {
        guard let i = offset(of: key) else { return nil }
        return try values.with(at: i, body)
    }

    /// `body` applied to each key and its view where it lies, in order.
    public func forEachInPlace(_ body: (String, Value) throws -> Void) rethrows {
        var offset = 0
        for page in pages {
            try page.withUnsafeBufferPointer { views in
                for i in views.indices { try views.lend(i) { try body(keys[offset + i], $0) } }
            }
            offset += page.count
        }
    }

    /// Changes the view under `key` in place; false when there is none.
    @discardableResult
    public mutating func update(_ key: String, _ body: (inout Value) throws -> Void) rethrows -> Bool {
        guard let i = offset(of: key) else { return false }
        remember(key, i)
        try body(&self[offset: i])
        return true
    }

    /// Adds a view under a key that has none; false (and nothing added) when the key has one.
    mutating func add(_ key: String, _ value: Value) -> Bool {
        guard offset(of: key) == nil else { return false }
        append(key, value)
        remember(key, keys.count - 1)
        return true
    }

    /// The views of `runs` (each a run of keys and their views, as many of one as of the other) in
    /// order, each run's arrays freed once its views are in (so the table never needs twice its
    /// size); the first key found twice, if one is.
    static func assemble(_ runs: consuming [([String], [Value])]) -> Result<ViewTable, DuplicateKey> {
        var table = ViewTable()
        let total = runs.reduce(0) { $0 + $1.0.count }
        table.index.reserveCapacity(total)
        table.keys.reserveCapacity(total)
        table.pages.reserveCapacity((total + pageSize - 1) / pageSize)
        for r in runs.indices {
            let (keys, values) = runs[r]
            precondition(keys.count == values.count, "a run of \(keys.count) keys for \(values.count) views")
            runs[r] = ([], [])
            for key in keys {
                guard table.index.insert(key, offset: table.keys.count, in: table.keys) else { return .failure(DuplicateKey(key: key)) }
                table.keys.append(key)
            }
            var from = 0
            while from < values.count {
                if table.pages.last.map({ $0.count == pageSize }) ?? true {
                    table.pages.append([])
                    table.pages[table.pages.count - 1].reserveCapacity(Swift.min(pageSize, total - (table.pages.count - 1) * pageSize))
                }
                let n = Swift.min(values.count - from, pageSize - table.pages[table.pages.count - 1].count)
                table.pages[table.pages.count - 1].append(contentsOf: values[from..<(from + n)])
                from += n
            }
        }
        return .success(table)
    }

    struct DuplicateKey: Error { let key: String }

    private mutating func append(_ key: String, _ value: Value) {
        let added = index.insert(key, offset: keys.count, in: keys)
        precondition(added, "\(key) is in the table already")
        keys.append(key)
        if pages.last.map({ $0.count == Self.pageSize }) ?? true {
            pages.append([])
            // The first page grows as an array does; the others are made whole at once.
            if pages.count > 1 { pages[pages.count - 1].reserveCapacity(Self.pageSize) }
        }
        pages[pages.count - 1].append(value)
    }

    private mutating func remove(at i: Int) {
        lastOffset = -1
        index.remove(keys[i], in: keys)
        let last = keys.count - 1
        let moved = pages[pages.count - 1].removeLast()
        if pages[pages.count - 1].isEmpty { pages.removeLast() }
        if i != last {
            index.move(keys[last], to: i, in: keys)
            keys.swapAt(i, last)
            self[offset: i] = moved
        }
        keys.removeLast()
    }
}

extension ViewTable: Sequence {
    public struct Iterator: IteratorProtocol {
        let table: ViewTable
        var offset = 0
        public mutating func next() -> (key: String, value: Value)? {
            guard offset < table.count else { return nil }
            defer { offset += 1 }
            return (table.keys[offset], table[offset: offset])
        }
    }

    public func makeIterator() -> Iterator { Iterator(table: self) }
    public var underestimatedCount: Int { count }
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
        try c.encode(Array(values))
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
        w.count(count)
        forEachInPlace { _, view in view.write(binary: w) }
    }
}
