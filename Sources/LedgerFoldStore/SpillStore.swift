import Synchronization

/// Where a ``ViewTable`` keeps the views it spills out of memory: bytes appended once and never
/// changed, read back by where they lie. A view changed after it was spilled is appended again
/// (the table keeps where its newest bytes lie), so copies of a table that share a store each keep
/// reading their own versions: the table stays a value.
///
/// The fold cannot handle a failure: a store that cannot write keeps the bytes some other way (the
/// spill file keeps them in memory and says why), and one that cannot read them back stops the
/// process with the reason. The fold folds a log that stays in PostgreSQL, so it can run again.
public protocol SpillStore: AnyObject, Sendable {
    /// Appends `bytes`; the offset they start at.
    func append(_ bytes: [UInt8]) -> Int64
    /// The `count` bytes at `offset` (appended earlier).
    func read(at offset: Int64, count: Int) -> [UInt8]
    /// Bytes appended so far.
    var size: Int64 { get }
}

/// A spill store in this process's memory: for tests of the spilling itself, and for tables too
/// small to be worth a file.
public final class MemorySpillStore: SpillStore {
    private let bytes = Mutex<[UInt8]>([])

    public init() {}

    public func append(_ bytes: [UInt8]) -> Int64 {
        self.bytes.withLock { all in
            defer { all.append(contentsOf: bytes) }
            return Int64(all.count)
        }
    }

    public func read(at offset: Int64, count: Int) -> [UInt8] {
        bytes.withLock { all in
            precondition(offset >= 0 && Int(offset) + count <= all.count, "\(count) bytes at \(offset) of \(all.count)")
            return Array(all[Int(offset)..<(Int(offset) + count)])
        }
    }

    public var size: Int64 { Int64(bytes.withLock { $0.count }) }
}
