import Dispatch
import LedgerCore
import Synchronization

/// A view as a snapshot's parts and a spill store hold it: its key, then its fields
/// (``BinaryFields``) preceded by their length (``BinaryWriter/sized(_:)``), so that a reader can
/// pass over a view without decoding it.
@usableFromInline package enum ViewRecord {
    @inlinable package static func write<V: BinaryFields>(_ key: String, _ view: V, to w: BinaryWriter) {
        w.string(key)
        w.sized { view.write(binary: w) }
    }

    @inlinable package static func read<V: BinaryFields>(_ r: BinaryReader) throws -> (String, V) {
        let key = try r.string()
        let end = try r.beginSized()
        let view = try V(binary: r)
        try r.endSized(end)
        return (key, view)
    }

    /// The key, the view passed over.
    @inlinable package static func key(_ r: BinaryReader) throws -> String {
        let key = try r.string()
        try r.skipSized()
        return key
    }
}

/// Views by key: the views side by side in pages, in the order their keys first appeared, and a
/// hash index from each key to its view's offset.
///
/// A `Dictionary` of views keeps each view inline in its hash table's slots, and a hash table runs
/// 25-62 % empty (it doubles when it is three quarters full), so every empty slot carries the size
/// of a whole view: several hundred bytes for an order or a transaction. Here an index slot holds a
/// key's hash bits and an offset. The views of a 10-million-fact log took 45 % less memory this way than in
/// dictionaries (rebuild and audit peaks of 2.8 GiB instead of 5.0).
///
/// The views lie in pages of ``pageSize`` views, each beside a page of their keys. One array would
/// double as it grows, copying every view it holds into fresh memory each time: a sixth of a pure
/// fold's time went into those copies and the page faults of the memory they filled. A full page
/// is never moved; the first page grows as an array does until it is full, so a small table takes
/// no more room than an array. A page's spare room is never touched, so it takes address space and
/// no memory.
///
/// The index is a ``KeyIndex``: eight bytes a slot where a `[String: Int]` took twenty-four (the
/// dictionaries were 14 MB of a 244 MB heap peak, `heaptrack`, auditing 1 M facts).
///
/// **Spilling.** A table told to ``spill(to:pageSize:residentPages:recallCapacity:)`` keeps only
/// its newest pages in memory. When a page more than that fills, the oldest one is written to a
/// ``SpillStore`` (each view with its key) and freed: what stays of a spilled view in memory is
/// its index slot and where its bytes lie, twenty to thirty bytes whatever its size. A spilled view
/// that is changed is read back into a small cache of recalled views; when the cache is full its
/// changed views are appended to the store again and it starts empty. Views tend to be busy just
/// after they first appear (an order is paid, bound and granted within minutes), so the oldest
/// page is the one least likely to be needed; a view needed again later (a refund, a renewal) is
/// read back, which costs time and never a different result.
///
/// Iteration follows the order keys were added (deterministic, unlike a dictionary's); anything
/// the ledger prints is still sorted by key where its order matters.
public struct ViewTable<Value: Sendable>: Sendable {
    @usableFromInline var index = KeyIndex()
    /// How many views the table has.
    @inlinable public var count: Int { viewCount }
    @usableFromInline var viewCount = 0
    /// The keys of the views in memory (from offset ``spilledBelow`` on), in the order they were added.
    @usableFromInline var residentKeys: [String] = []
    /// The views, in the order of their keys: every page but the last holds ``pageSize`` views.
    @usableFromInline var pages: [[Value]] = []
    /// log2 of the views a page holds.
    @usableFromInline var shift = 14
    /// The key last changed or added, and its view's offset (-1: none). A fact's rules look up the
    /// same order or transaction several times in a row; a key compared with the last one is
    /// found without hashing it again. Not part of the table's value.
    @usableFromInline var lastKey = ""
    @usableFromInline var lastOffset = -1
    /// Set when the table spills.
    @usableFromInline var spill: Spill?
    /// The views before this offset are spilled (0 when none is). Kept apart from ``spill``: reading
    /// the optional struct to tell would copy it, a retain and a release of each reference in it.
    @usableFromInline var spilledBelow = 0

    /// Views per page unless told otherwise: 16,384 (7.7 MB of transactions).
    @inlinable public static var defaultPageSize: Int { 1 << 14 }

    @inlinable public init() {}

    /// Views per page.
    @inlinable public var pageSize: Int { 1 << shift }
    @inlinable public var isEmpty: Bool { count == 0 }

    /// The keys, in the order they were added.
    @inlinable public var keys: [String] {
        var all: [String] = []
        all.reserveCapacity(count)
        for p in pages.indices {
            let page = page(p)
            all.append(contentsOf: page.keys[page.keysFrom..<(page.keysFrom + page.values.count)])
        }
        return all
    }

    /// The views, in the order of ``keys``.
    @inlinable public var values: Views { Views(table: self) }

    // MARK: - finding a key

    @inline(__always)
    @inlinable func isResident(_ i: Int) -> Bool { i >= spilledBelow }

    /// Whether the key at offset `i`, which is in memory, is `key`.
    @inline(__always)
    @inlinable func residentKey(_ i: Int, is key: String) -> Bool {
        residentKeys.withUnsafeBufferPointer { $0[i - spilledBelow] == key }
    }

    /// Whether the key at offset `i` is `key`; a spilled view not recalled is read back to tell.
    @inlinable func key(_ i: Int, is key: String) -> Bool {
        if isResident(i) { return residentKey(i, is: key) }
        if let r = spill!.recalled[i] { return r.key == key }
        return spill!.load(i).key == key
    }

    /// The offset of the view under `key`, if there is one.
    @inline(__always)
    @inlinable func offset(of key: String) -> Int? {
        if lastOffset >= 0, lastKey == key { return lastOffset }
        if spilledBelow == 0 { return index.offset(KeyIndex.hash(key)) { residentKey($0, is: key) } }
        return index.offset(KeyIndex.hash(key)) { self.key($0, is: key) }
    }

    /// The offset of the view under `key`, if there is one, recalled if it is spilled (read back
    /// once, where ``offset(of:)`` followed by a change would read it twice).
    @inline(__always)
    @inlinable mutating func locate(_ key: String) -> Int? {
        if spilledBelow == 0 || (lastOffset >= 0 && lastKey == key) { return offset(of: key) }
        var read: (offset: Int, key: String, value: Value)?
        let found = index.offset(KeyIndex.hash(key)) { i in
            if isResident(i) { return residentKey(i, is: key) }
            if let r = spill!.recalled[i] { return r.key == key }
            let loaded = spill!.load(i)
            guard loaded.key == key else { return false }
            read = (i, loaded.key, loaded.value)
            return true
        }
        if let read { spill!.recall(read.offset, read.key, read.value) }
        return found
    }

    @inline(__always)
    @inlinable mutating func remember(_ key: String, _ offset: Int) {
        lastKey = key
        lastOffset = offset
    }

    // MARK: - reading and changing views

    /// The view under `key`; setting nil removes it (the last view takes its place in the order).
    @inlinable public subscript(key: String) -> Value? {
        get { offset(of: key).map { self[offset: $0] } }
        set {
            if let i = locate(key) {
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
    @inlinable public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        get { offset(of: key).map { self[offset: $0] } ?? defaultValue() }
        _modify {
            let i = offsetAdding(key, defaultValue)
            yield &self[offset: i]
        }
    }

    /// `body` applied to the view under `key` in place, added as `defaultValue` first when there
    /// is none. What the fold changes views with: a function, where the subscript's accessor is
    /// a coroutine whose frame, once it may hold a view read back, is allocated on each call.
    @inline(__always)
    @inlinable public mutating func modify<T>(
        _ key: String, default defaultValue: @autoclosure () -> Value, _ body: (inout Value) throws -> T
    ) rethrows -> T {
        try modify(offset: offsetAdding(key, defaultValue), body)
    }

    /// The offset of `key`'s view, added as `defaultValue` first when there is none.
    @inline(__always)
    @inlinable mutating func offsetAdding(_ key: String, _ defaultValue: () -> Value) -> Int {
        let i: Int
        if let found = locate(key) {
            i = found
        } else {
            i = count
            append(key, defaultValue())
        }
        remember(key, i)
        return i
    }

    @inlinable subscript(offset i: Int) -> Value {
        get {
            if isResident(i) { return pages[i >> shift][i & ((1 << shift) - 1)] }
            return spill!.recalled[i]?.value ?? spill!.load(i).value
        }
        set { modify(offset: i) { $0 = newValue } }
        _modify {
            var view = self[offset: i]
            defer { self[offset: i] = view }
            yield &view
        }
    }

    /// `body` applied to the view at offset `i` in place: in its page, or (spilled) read back.
    @inline(__always)
    @inlinable mutating func modify<T>(offset i: Int, _ body: (inout Value) throws -> T) rethrows -> T {
        guard isResident(i) else { return try modifySpilled(i, body) }
        return try body(&pages[i >> shift][i & ((1 << shift) - 1)])
    }

    @inline(never)
    @inlinable mutating func modifySpilled<T>(_ i: Int, _ body: (inout Value) throws -> T) rethrows -> T {
        if spill!.recalled[i] == nil {
            let loaded = spill!.load(i)
            spill!.recall(i, loaded.key, loaded.value)
        }
        spill!.recalled[i]!.changed = true
        return try body(&spill!.recalled[i]!.value)
    }

    /// `body` applied to the view at offset `i` where it lies.
    @inline(__always)
    @inlinable func with<T>(offset i: Int, _ body: (Value) throws -> T) rethrows -> T {
        guard isResident(i) else { return try body(self[offset: i]) }
        // The page lent too: `pages[p]` would retain and release it.
        return try pages.withUnsafeBufferPointer { pages in
            try pages.lend(i >> shift) { page in
                try page.withUnsafeBufferPointer { try $0.lend(i & ((1 << shift) - 1), body) }
            }
        }
    }

    /// Whether a view is under `key`.
    @inlinable public func contains(_ key: String) -> Bool { offset(of: key) != nil }

    /// `body` applied to the view under `key` where it lies, or nil when there is none. Reading a
    /// field through ``subscript(_:)`` copies the whole view out first (hundreds of bytes and a
    /// retain for each string); the fold reads through this instead.
    @inlinable public func with<T>(_ key: String, _ body: (Value) throws -> T) rethrows -> T? {
        guard let i = offset(of: key) else { return nil }
        return try with(offset: i, body)
    }

    /// `body` applied to each key and its view where it lies, in order; spilled pages read back
    /// `readAhead` at once on other threads, each a page of views in memory until its turn.
    @inlinable public func forEachInPlace(readAhead: Int = 1, _ body: (String, Value) throws -> Void) rethrows {
        var views = PageIterator(table: self, readAhead: readAhead)
        while try views.withNext(body) != nil {}
    }

    /// Changes the view under `key` in place; false when there is none.
    @discardableResult
    @inlinable public mutating func update(_ key: String, _ body: (inout Value) throws -> Void) rethrows -> Bool {
        guard let i = locate(key) else { return false }
        remember(key, i)
        try modify(offset: i, body)
        return true
    }

    /// Adds a view under a key that has none; false (and nothing added) when the key has one.
    @inlinable package mutating func add(_ key: String, _ value: Value) -> Bool {
        guard offset(of: key) == nil else { return false }
        append(key, value)
        remember(key, count - 1)
        return true
    }

    /// `body` for each view in order, with a function that writes it as a ``ViewRecord``: a
    /// spilled view not changed since it was spilled is copied as the bytes it was spilled as,
    /// never read back nor encoded again (what a snapshot of a limited fold is made of).
    @inlinable package func forEachRecord(_ body: (_ write: (BinaryWriter) -> Void) throws -> Void) rethrows
    where Value: BinaryFields {
        for p in pages.indices {
            let first = p << shift
            guard first < spilledBelow else {
                try pages[p].withUnsafeBufferPointer { views in
                    for j in views.indices {
                        try views.lend(j) { view in
                            try body { ViewRecord.write(residentKeys[first + j - spilledBelow], view, to: $0) }
                        }
                    }
                }
                continue
            }
            let spill = spill!
            let block = spill.blocks[p]
            let bytes = spill.settings.store.read(at: block.offset, count: block.count)
            for (j, location) in spill.locations[p].enumerated() {
                if let r = spill.recalled[first + j] {
                    try body { ViewRecord.write(r.key, r.value, to: $0) }
                    continue
                }
                let (offset, count) = Spill.place(location)
                let start = Int(offset - block.offset)
                if start >= 0 && start + count <= block.count {
                    try body { $0.raw(bytes[start..<(start + count)]) }
                } else {
                    // Written again since (changed after its page was spilled).
                    try body { $0.raw(spill.settings.store.read(at: offset, count: count)[...]) }
                }
            }
        }
    }

    /// Page `p`'s keys and views: the page itself, or read back from the store.
    /// A page's views, and their keys: from `keysFrom` on in `keys` (the table's own keys in
    /// memory, not copied, or those read back with a spilled page).
    @usableFromInline typealias Page = (keys: [String], keysFrom: Int, values: [Value])

    /// Page `p`: the page itself, or read back from the store.
    @inlinable func page(_ p: Int) -> Page {
        let first = p << shift
        guard first < spilledBelow else { return (residentKeys, first - spilledBelow, pages[p]) }
        let (keys, values) = spill!.page(p, from: first, count: pageSize)
        return (keys, 0, values)
    }

    // MARK: - building

    /// The views of `runs` (each a run of keys and their views, as many of one as of the other) in
    /// order, each run's arrays freed once its views are in (so the table never needs twice its
    /// size); the first key found twice, if one is.
    @inlinable package static func assemble(_ runs: consuming [([String], [Value])]) -> Result<ViewTable, DuplicateKey>
    {
        var table = ViewTable()
        let total = runs.reduce(0) { $0 + $1.0.count }
        table.index.reserveCapacity(total)
        table.pages.reserveCapacity((total + table.pageSize - 1) / table.pageSize)
        table.residentKeys.reserveCapacity(total)
        for r in runs.indices {
            let (keys, values) = runs[r]
            precondition(keys.count == values.count, "a run of \(keys.count) keys for \(values.count) views")
            runs[r] = ([], [])
            for (key, value) in zip(keys, values) {
                let hash = KeyIndex.hash(key)
                guard table.index.offset(hash, matches: { table.residentKey($0, is: key) }) == nil else {
                    return .failure(DuplicateKey(key: key))
                }
                table.append(key, value, hash: hash, reserving: total)
            }
        }
        return .success(table)
    }

    @usableFromInline package struct DuplicateKey: Error {
        @usableFromInline package let key: String
        @inlinable init(key: String) { self.key = key }
    }

    /// Adds a view under a key that has none. A new page is made whole at once (the first grows as
    /// an array does, or holds `reserving` views when that is fewer); when a page more than the
    /// table keeps in memory is made, the oldest is spilled.
    @inlinable mutating func append(_ key: String, _ value: Value, hash: UInt32? = nil, reserving total: Int = 0) {
        index.insert(hash ?? KeyIndex.hash(key), offset: count)
        // A full last page (or none): a new one. (Not `pages.last`'s count: a page added spilled,
        // ``addSpilled(keys:bytes:)``, is an empty array.)
        if count & (pageSize - 1) == 0 {
            pages.append([])
            let room = pages.count > 1 ? pageSize : Swift.min(pageSize, total)
            if room > 0 { pages[pages.count - 1].reserveCapacity(room) }
            if spill != nil { keepToMemory() }
        }
        pages[pages.count - 1].append(value)
        residentKeys.append(key)
        viewCount += 1
    }

    @inlinable mutating func remove(at i: Int) {
        precondition(spill == nil, "a spilling table's views are never removed")
        lastOffset = -1
        let key = residentKeys[i]
        index.remove(slot: index.slot(KeyIndex.hash(key)) { $0 == i }!)
        let last = count - 1
        let movedKey = residentKeys.removeLast()
        let moved = pages[pages.count - 1].removeLast()
        if pages[pages.count - 1].isEmpty { pages.removeLast() }
        if i != last {
            index.move(slot: index.slot(KeyIndex.hash(movedKey)) { $0 == last }!, to: i)
            residentKeys[i] = movedKey
            self[offset: i] = moved
        }
        viewCount -= 1
    }
}
