import Dispatch
import LedgerCore
import Synchronization

// Walking a table's views in their order (ViewTable.swift).
extension ViewTable {
    /// The views of a table, in the order of its keys (a copy of the table, not of its views).
    public struct Views: RandomAccessCollection, Sendable {
        let table: ViewTable
        public var count: Int { table.count }
        public var startIndex: Int { 0 }
        public var endIndex: Int { table.count }
        public subscript(i: Int) -> Value { table[offset: i] }

        /// `body` applied to the view at offset `i` where it lies (see ``ViewTable/with(_:_:)``).
        public func with<T>(at i: Int, _ body: (Value) throws -> T) rethrows -> T {
            try table.with(offset: i, body)
        }

        /// Reads a spilled page back once for all its views, not once for each.
        public func makeIterator() -> Iterator { Iterator(table: table) }

        public struct Iterator: IteratorProtocol {
            var pages: ViewTable.PageIterator
            init(table: ViewTable) { pages = PageIterator(table: table) }
            public mutating func next() -> Value? { pages.withNext { $1 } }
            /// `body` applied to the next view where it lies, or nil after the last.
            public mutating func withNext<T>(_ body: (Value) throws -> T) rethrows -> T? { try pages.withNext { try body($1) } }
        }
    }

    /// The views in order, a page at a time: a spilled page is read back whole, the next spilled
    /// page on another thread while this one is gone through (reading back, not what the caller
    /// does with the views, is what takes the time).
    struct PageIterator {
        let table: ViewTable
        var p = 0, i = 0
        var current: Page = ([], 0, [])
        /// Page `p`, being read back.
        var ahead: PageReader?

        init(table: ViewTable) { self.table = table }

        mutating func withNext<T>(_ body: (String, Value) throws -> T) rethrows -> T? {
            while i == current.values.count {
                guard p < table.pages.count else { return nil }
                current = ahead?.wait() ?? table.page(p)
                p += 1
                i = 0
                ahead = p << table.shift < table.spilledBelow ? PageReader(table, p) : nil
            }
            defer { i += 1 }
            let (keys, j) = (current.keys, i)
            return try current.values.withUnsafeBufferPointer { try $0.lend(j) { try body(keys[current.keysFrom + j], $0) } }
        }
    }

    /// A spilled page read back on a thread of its own.
    final class PageReader: Sendable {
        private let page = Mutex<Page?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ table: ViewTable, _ p: Int) {
            DispatchQueue.global().async { [self] in
                let read = table.page(p)
                page.withLock { $0 = read }
                done.signal()
            }
        }

        func wait() -> Page {
            done.wait()
            return page.withLock { page in defer { page = nil }; return page! }
        }
    }
}
