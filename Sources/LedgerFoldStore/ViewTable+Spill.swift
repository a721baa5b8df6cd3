import Dispatch
import LedgerCore
import Synchronization

// Spilling a table's oldest views to a SpillStore and reading them back (ViewTable.swift).
extension ViewTable {

    /// From now on, keeps `residentPages` pages of `pageSize` views in memory (the newest) and at
    /// most `recallCapacity` spilled views read back, and spills the others to `store`. Only an
    /// empty table can be told: its page size changes.
    ///
    /// With `memory`, those two counts are where the table starts. From its first full page, and
    /// from each page it spills, it counts what a view of that page takes in memory (its own bytes,
    /// its key, and what its strings, arrays and positions hold on the heap, as
    /// ``BinaryWriter/heapBytes`` estimates while the page is written), and from then on keeps as
    /// many pages as fill three quarters of `memory`, and as many views read back as a quarter
    /// holds. A view's size depends on the log (an id of up to 15 bytes lies in its string, a longer
    /// one on the heap), so a count fixed in advance held a 10-million-fact rebuild to 247 MiB with
    /// short ids and let it reach 332 MiB with ids as long as the stores'.
    @inlinable public mutating func spill(
        to store: any SpillStore, pageSize: Int = defaultPageSize, residentPages: Int, recallCapacity: Int,
        memory: Int? = nil
    )
    where Value: BinaryFields {
        precondition(isEmpty, "a table is told to spill before it has views")
        precondition(
            pageSize > 0 && pageSize & (pageSize - 1) == 0, "a page size of \(pageSize) views is not a power of two")
        precondition(
            residentPages >= 1 && recallCapacity >= 1, "a spilling table keeps at least a page and a recalled view")
        shift = pageSize.trailingZeroBitCount
        spill = Spill(
            settings: .init(
                store: store, shift: shift, memory: memory,
                write: { key, view, w in ViewRecord.write(key, view, to: w) },
                read: { r in try ViewRecord.read(r) }),
            residentPages: residentPages, recallCapacity: recallCapacity)
    }

    /// The store the table spills to, if it spills.
    @inlinable package var spillStore: (any SpillStore)? { spill?.settings.store }

    /// The bytes the newest versions of the spilled views take in the store (what a store
    /// holding nothing else would hold).
    @inlinable package var spilledBytes: Int64 {
        guard let spill else { return 0 }
        var total: Int64 = 0
        for page in spill.locations {
            for l in page { total += Int64(Spill.place(l).count) }
        }
        return total
    }

    /// How many views are spilled, and how many of those are read back now.
    @inlinable public var spilled: (views: Int, recalled: Int) { (spilledBelow, spill?.recalled.count ?? 0) }

    /// For a table that spills: the views a page holds, and how many pages it keeps in memory.
    @inlinable package var spillShape: (pageSize: Int, residentPages: Int)? {
        spill.map { (pageSize, $0.residentPages) }
    }

    /// Whether every view the table has is spilled (or it has none): what
    /// ``addSpilled(keys:bytes:)`` needs.
    @inlinable package var isAllSpilled: Bool { spill != nil && spilledBelow == count }

    /// Adds a whole page of views straight to the spill store, as their bytes: each a
    /// ``ViewRecord``, as the table writes a page it spills, and as a snapshot's part holds them.
    /// Nothing is decoded or encoded again: a projector kept to a memory limit reads most of a
    /// snapshot's views this way (those that would spill anyway).
    /// Only while every view is spilled (``isAllSpilled``); a key the table has already is
    /// refused by name, and the table is not to be used after that.
    @inlinable package mutating func addSpilled(
        keys: some Collection<String>, bytes: some Collection<ArraySlice<UInt8>>
    ) throws(DuplicateKey) {
        precondition(isAllSpilled, "views added spilled after views kept in memory")
        precondition(
            keys.count == pageSize && bytes.count == pageSize,
            "\(keys.count) keys and \(bytes.count) views for a page of \(pageSize)")
        var block: [UInt8] = []
        block.reserveCapacity(bytes.reduce(0) { $0 + $1.count })
        var ends: [Int] = []
        ends.reserveCapacity(pageSize)
        for b in bytes {
            block.append(contentsOf: b)
            ends.append(block.count)
        }
        let first = count
        spill!.write(block: block, ends: ends)
        pages.append([])
        viewCount += pageSize
        spilledBelow = count
        // Each key is checked against those before it (a spilled one is read back to compare
        // only when 32 bits of hash match).
        for (j, key) in zip(first..., keys) {
            let hash = KeyIndex.hash(key)
            guard index.offset(hash, matches: { self.key($0, is: key) }) == nil else { throw DuplicateKey(key: key) }
            index.insert(hash, offset: j)
        }
    }

    /// When a page is full: spills the oldest pages beyond those the table keeps, after counting
    /// what a view takes if no page has told it yet (with a memory to keep to).
    @inlinable mutating func keepToMemory() {
        let full = pages.count - 2
        if spill!.bytesPerView == 0, spill!.settings.memory != nil, full >= spill!.firstResident {
            let first = (full << shift) - spilledBelow
            spill!.measure(page: residentKeys[first..<(first + pageSize)], pages[full])
        }
        spillBeyondResidentPages()
    }

    /// Spills the oldest pages beyond those the table keeps: more than one at a time when it has
    /// just learnt its views take more room.
    @inlinable mutating func spillBeyondResidentPages() {
        while pages.count - spill!.firstResident > spill!.residentPages { spillOldestPage() }
    }

    /// With a memory to keep to: counts again what the views in memory take now, from a sample of
    /// about a page of them spread over every page in memory, and spills the oldest pages when the
    /// views no longer fit. A view grows after its page was counted (a user's positions, with each
    /// fact of the user's), and a table whose views all fit adds no page to count them by again:
    /// the fold calls this every so many facts (``Projections``). It only ever counts a view as
    /// taking more than before; the pages spilled count it again as they are.
    @inlinable package mutating func keepToMemoryAsViewsGrow() where Value: BinaryFields {
        guard spill?.settings.memory != nil, spilledBelow < count else { return }
        let resident = count - spilledBelow, mask = pageSize - 1
        let step = Swift.max(1, resident >> shift)
        let w = BinaryWriter()
        var sampled = 0
        for i in stride(from: 0, to: resident, by: step) {
            let o = spilledBelow + i
            spill!.settings.write(residentKeys[i], pages[o >> shift][o & mask], w)
            sampled += 1
        }
        spill!.recount(from: w, views: sampled, atLeast: spill!.bytesPerView)
        spillBeyondResidentPages()
    }

    @inlinable mutating func spillOldestPage() {
        let p = spill!.firstResident
        // The oldest page in memory: its keys are the first ones kept.
        spill!.write(page: Array(residentKeys[..<pageSize]), pages[p])
        residentKeys.removeFirst(pageSize)
        pages[p] = []
        spilledBelow = (p + 1) << shift
    }

    /// What a spilling table keeps to find its spilled views.
    @usableFromInline struct Spill: Sendable {
        /// What never changes, behind one reference: the table is copied and passed around
        /// whole, and it stays small.
        @usableFromInline let settings: Settings
        /// The pages before it are spilled.
        @usableFromInline var firstResident = 0
        /// Where each spilled view's newest bytes lie, by page: their offset in the store (40 bits)
        /// and their length (24 bits). (An array for each page is made to size once; one array
        /// for all would double as it grows, and hold up to twice the room.)
        @usableFromInline var locations: [[UInt64]] = []
        /// Where each spilled page was first written whole (its views' bytes one after another).
        @usableFromInline var blocks: [(offset: Int64, count: Int)] = []
        /// Spilled views read back, by offset; `changed` ones are written again before they go.
        @usableFromInline var recalled: [Int: Recalled] = [:]
        /// How many pages stay in memory, and how many spilled views may be read back at once
        /// (counted again at each page spilled, when the table keeps to a memory).
        @usableFromInline var residentPages: Int
        @usableFromInline var recallCapacity: Int
        /// What a view of the last page counted takes in memory, in bytes (0: none counted yet).
        @usableFromInline var bytesPerView = 0

        @inlinable init(settings: Settings, residentPages: Int, recallCapacity: Int) {
            self.settings = settings
            self.residentPages = residentPages
            self.recallCapacity = recallCapacity
        }

        @usableFromInline final class Settings: Sendable {
            @usableFromInline let store: any SpillStore
            /// log2 of the views a page holds.
            @usableFromInline let shift: Int
            /// The bytes the table keeps its views in, when it measures them (nil: fixed counts).
            @usableFromInline let memory: Int?
            @usableFromInline let write: @Sendable (String, Value, BinaryWriter) -> Void
            @usableFromInline let read: @Sendable (BinaryReader) throws -> (String, Value)

            @inlinable init(
                store: any SpillStore, shift: Int, memory: Int?,
                write: @escaping @Sendable (String, Value, BinaryWriter) -> Void,
                read: @escaping @Sendable (BinaryReader) throws -> (String, Value)
            ) {
                (self.store, self.shift, self.memory, self.write, self.read) = (store, shift, memory, write, read)
            }
        }

        @usableFromInline struct Recalled: Sendable {
            @usableFromInline var key: String
            @usableFromInline var value: Value
            @usableFromInline var changed = false

            @inlinable init(key: String, value: Value) {
                self.key = key
                self.value = value
            }
        }

        /// Where a ``location(_:_:)`` says a view's bytes lie.
        @inlinable static func place(_ location: UInt64) -> (offset: Int64, count: Int) {
            (Int64(location >> 24), Int(location & 0xff_ffff))
        }

        @inlinable static func location(_ offset: Int64, _ count: Int) -> UInt64 {
            precondition(offset >= 0 && offset < 1 << 40, "a spill store of more than a terabyte")
            precondition(count < 1 << 24, "a view of \(count) bytes to spill: more than 16 MiB")
            return UInt64(offset) << 24 | UInt64(count)
        }

        /// Writes the next page to spill (the views and keys in it) as one block; with a memory to
        /// keep to, counts again how many pages and recalled views fit in it.
        @inlinable mutating func write(page keys: [String], _ views: [Value]) {
            let w = BinaryWriter()
            var ends: [Int] = []
            ends.reserveCapacity(views.count)
            for (key, view) in zip(keys, views) {
                settings.write(key, view, w)
                ends.append(w.count)
            }
            recount(from: w, views: views.count)
            write(block: w.take(), ends: ends)
        }

        /// Counts what the views of a full page take in memory, before any page is spilled: a
        /// table whose views take far more than it assumed would otherwise fill its memory many
        /// times over before its first spill told it so.
        @inlinable mutating func measure(page keys: ArraySlice<String>, _ views: [Value]) {
            let w = BinaryWriter()
            for (key, view) in zip(keys, views) { settings.write(key, view, w) }
            recount(from: w, views: views.count)
        }

        /// With a memory to keep to, counts again how many pages and recalled views fit in it,
        /// from the `views` that `w` wrote (a full page, or a sample): taking a view to need at
        /// least `atLeast` bytes.
        @inlinable mutating func recount(from w: BinaryWriter, views: Int, atLeast: Int = 0) {
            guard let memory = settings.memory, views > 0 else { return }
            // A view's own bytes and its key's in the page's arrays, and what they hold on the heap.
            let counted = MemoryLayout<Value>.stride + MemoryLayout<String>.stride + w.heapBytes / views
            bytesPerView = Swift.max(atLeast, counted)
            residentPages = Swift.max(1, memory * 3 / 4 / ((1 << settings.shift) * bytesPerView))
            recallCapacity = Swift.max(1, memory / 4 / bytesPerView)
        }

        /// Writes the next page to spill as `bytes`, its views one after another, each ending
        /// where `ends` says.
        @inlinable mutating func write(block bytes: [UInt8], ends: [Int]) {
            let base = settings.store.append(bytes)
            blocks.append((base, bytes.count))
            var page: [UInt64] = [], start = 0
            page.reserveCapacity(ends.count)
            for end in ends {
                page.append(Self.location(base + Int64(start), end - start))
                start = end
            }
            locations.append(page)
            firstResident += 1
        }

        /// The key and view at spilled offset `i`, as last written.
        @inlinable func load(_ i: Int) -> (key: String, value: Value) {
            let l = locations[i >> settings.shift][i & ((1 << settings.shift) - 1)]
            let (offset, count) = Self.place(l)
            do {
                return try BinaryCoding.read(settings.store.read(at: offset, count: count), settings.read)
            } catch {
                fatalError("a spilled view at byte \(offset) of the spill store does not read back: \(error)")
            }
        }

        /// Keeps a spilled view read back; first, when the cache is full, writes its changed views
        /// again and empties it.
        @inlinable mutating func recall(_ i: Int, _ key: String, _ value: Value) {
            if recalled.count >= recallCapacity { writeBack() }
            recalled[i] = Recalled(key: key, value: value)
        }

        @inlinable mutating func writeBack() {
            let w = BinaryWriter()
            var written: [(offset: Int, end: Int)] = []
            for i in recalled.keys.sorted() {
                guard let r = recalled[i], r.changed else { continue }
                settings.write(r.key, r.value, w)
                written.append((i, w.count))
            }
            recalled = [:]
            guard !written.isEmpty else { return }
            let base = settings.store.append(w.take())
            var start = 0
            for (i, end) in written {
                locations[i >> settings.shift][i & ((1 << settings.shift) - 1)] = Self.location(
                    base + Int64(start), end - start)
                start = end
            }
        }

        /// Spilled page `p`, whose `count` views start at offset `first`: its block read back
        /// whole, and the views changed since it was written in their newest versions.
        @inlinable func page(_ p: Int, from first: Int, count: Int) -> (keys: [String], values: [Value]) {
            let block = blocks[p]
            var keys: [String] = [], values: [Value] = []
            keys.reserveCapacity(count)
            values.reserveCapacity(count)
            do {
                try BinaryCoding.read(settings.store.read(at: block.offset, count: block.count)) { r in
                    for _ in 0..<count {
                        let (key, value) = try settings.read(r)
                        keys.append(key)
                        values.append(value)
                    }
                }
            } catch {
                fatalError("a spilled page at byte \(block.offset) of the spill store does not read back: \(error)")
            }
            for j in 0..<count {
                let i = first + j
                if let r = recalled[i] {
                    (keys[j], values[j]) = (r.key, r.value)
                } else if Self.place(locations[p][j]).offset >= block.offset + Int64(block.count) {
                    (keys[j], values[j]) = load(i)
                }
            }
            return (keys, values)
        }
    }
}
