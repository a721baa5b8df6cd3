import Dispatch
import LedgerCore
import Synchronization

// Walking a table's views in their order (ViewTable.swift).
extension ViewTable {
    /// The views of a table, in the order of its keys (a copy of the table, not of its views).
    public struct Views: RandomAccessCollection, Sendable {
        @usableFromInline let table: ViewTable
        @inlinable init(table: ViewTable) { self.table = table }
        @inlinable public var count: Int { table.count }
        @inlinable public var startIndex: Int { 0 }
        @inlinable public var endIndex: Int { table.count }
        @inlinable public subscript(i: Int) -> Value { table[offset: i] }

        /// `body` applied to the view at offset `i` where it lies (see ``ViewTable/with(_:_:)``).
        @inlinable public func with<T>(at i: Int, _ body: (Value) throws -> T) rethrows -> T {
            try table.with(offset: i, body)
        }

        /// Reads a spilled page back once for all its views, not once for each.
        @inlinable public func makeIterator() -> Iterator { Iterator(table: table) }

        public struct Iterator: IteratorProtocol {
            @usableFromInline var pages: ViewTable.PageIterator
            @inlinable init(table: ViewTable) { pages = PageIterator(table: table) }
            @inlinable public mutating func next() -> Value? { pages.withNext { $1 } }
            /// `body` applied to the next view where it lies, or nil after the last.
            @inlinable public mutating func withNext<T>(_ body: (Value) throws -> T) rethrows -> T? {
                try pages.withNext { try body($1) }
            }
        }
    }

    /// The views in order, a page at a time: a spilled page is read back whole, and the next
    /// `readAhead` spilled pages on other threads while this one is gone through (reading back,
    /// not what the caller does with the views, is what takes the time).
    @usableFromInline struct PageIterator {
        @usableFromInline let table: ViewTable
        @usableFromInline let readAhead: Int
        @usableFromInline var p = 0, i = 0
        @usableFromInline var current: Page = ([], 0, [])
        /// Pages `p`, `p + 1`, ... being read back, in order (spilled pages come first in a table,
        /// so the pages being read are always the next ones).
        @usableFromInline var ahead: [PageReader] = []
        /// The next page to start reading back.
        @usableFromInline var scheduled = 0

        @inlinable init(table: ViewTable, readAhead: Int = 1) {
            precondition(readAhead >= 1, "at least one page read ahead")
            self.table = table
            self.readAhead = readAhead
        }

        @inlinable mutating func withNext<T>(_ body: (String, Value) throws -> T) rethrows -> T? {
            while i == current.values.count {
                guard p < table.pages.count else { return nil }
                current = ahead.isEmpty ? table.page(p) : ahead.removeFirst().wait()
                p += 1
                i = 0
                scheduled = Swift.max(scheduled, p)
                while scheduled < p + readAhead, scheduled << table.shift < table.spilledBelow {
                    ahead.append(PageReader(table, scheduled))
                    scheduled += 1
                }
            }
            defer { i += 1 }
            let (keys, j) = (current.keys, i)
            return try current.values.withUnsafeBufferPointer {
                try $0.lend(j) { try body(keys[current.keysFrom + j], $0) }
            }
        }
    }

    /// A spilled page read back on a thread of its own.
    @usableFromInline final class PageReader: Sendable {
        @usableFromInline let page = Mutex<Page?>(nil)
        @usableFromInline let done = DispatchSemaphore(value: 0)

        @inlinable init(_ table: ViewTable, _ p: Int) {
            DispatchQueue.global().async { [self] in
                let read = table.page(p)
                page.withLock { $0 = read }
                done.signal()
            }
        }

        @inlinable func wait() -> Page {
            done.wait()
            return page.withLock { page in
                defer { page = nil }
                return page!
            }
        }
    }
}
