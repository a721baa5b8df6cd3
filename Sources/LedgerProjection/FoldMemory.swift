#if canImport(Glibc)
import CMalloc
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LedgerDomain
import LedgerFoldStore
import LedgerLog
import Synchronization

/// How much memory a fold (an audit's, a rebuild's, a projector's) keeps its views in. Beyond it
/// the oldest views are spilled to a temporary file and read back when a later fact needs them
/// (see ``ViewTable``): the results are the same, the fold takes longer, and the memory it needs
/// stops growing with the views. What stays in memory for each view is twenty to thirty bytes, so a
/// limit bounds the fold's memory up to the number of orders, transactions, subscriptions and
/// users, not the number of facts.
public struct FoldMemory: Sendable, Hashable, CustomStringConvertible {
    /// The bytes of views kept in memory; nil: no limit (nothing is spilled).
    public var limit: Int?
    /// Where the spill file is made (it is removed as soon as it is open, so nothing is left behind).
    public var directory: String
    /// Views per page of each table: 4,096, a quarter of a table's in memory, so that what is read
    /// back or written out at once is small beside the limit (with 16,384, a rebuild of 10 M facts
    /// kept to 32 MiB peaked at 276 MiB instead of 207). Tests make it smaller still, so that
    /// small logs spill.
    var pageSize = 1 << 12
    /// How much the spill file may hold beyond twice what its views need before a projector
    /// compacts it (``compacted(_:)``). Tests make it nothing.
    var compactionSlack: Int64 = 64 << 20

    public init(limit: Int?, directory: String = FoldMemory.temporaryDirectory) {
        self.limit = limit
        self.directory = directory
    }

    /// Everything in memory.
    public static let unlimited = FoldMemory(limit: nil)

    /// What a fold takes unless told otherwise: ``defaultLimit``, or a quarter of the memory this
    /// process may use (the machine's, or its control group's limit when that is lower, as in a
    /// container) when that is less.
    public static var automatic: FoldMemory {
        FoldMemory(limit: min(defaultLimit, availableMemory.map { $0 / 4 } ?? defaultLimit))
    }

    /// 64 MiB. On the 10-million-fact benchmark log (200,000 users), a rebuild kept to it took
    /// the time of an unlimited one, give or take the machine's noise, an audit a quarter more CPU
    /// (its spilled views encoded and decoded), and both peaked at about a sixth of their memory,
    /// under 256 MiB with short ids and with ids as long as the stores' (figures in
    /// docs/benchmarks.md). Its shares (``Projections/spillViews(to:memory:pageSize:)``) keep the
    /// newest orders, transactions and subscriptions, a page or two of each: older ones spill even
    /// in a small log, and are rarely read back (33 reads in an audit of 200,000 facts). How many
    /// users stay in memory depends on what a user's view takes, which grows with the ids' length
    /// and, in a rebuild, with the user's history: about 80,000 of that log's 200,000 with short
    /// ids (a rebuild read 554,000 views back), fewer with ids as long as the stores' (952,000).
    public static let defaultLimit = 64 << 20

    /// `$TMPDIR`, or /tmp.
    public static var temporaryDirectory: String {
        getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// The machine's memory, or the control group's limit (v2 `memory.max`, v1
    /// `memory.limit_in_bytes`) when it is lower: read once, for every fold of the process.
    static let availableMemory: Int? = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        let physical = pages > 0 && size > 0 ? pages * size : nil
        let limits = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"].compactMap { path in
            (try? String(contentsOfFile: path, encoding: .utf8)).flatMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        return ([physical].compactMap { $0 } + limits.filter { $0 > 0 }).min()
    }()

    /// A size such as `256MiB`, `2GiB`, `512MB` or a number of bytes; `none` for no limit. Units
    /// are binary whichever way they are spelled (`MB` is 1,048,576 bytes, as in PostgreSQL's
    /// settings).
    public init?(parsing text: String, directory: String = FoldMemory.temporaryDirectory) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "none" || t == "unlimited" {
            self.init(limit: nil, directory: directory)
            return
        }
        let units: [(String, Int)] = [
            ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("kb", 1 << 10), ("mb", 1 << 20),
            ("gb", 1 << 30), ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("b", 1),
        ]
        var digits = Substring(t), scale = 1
        if let (unit, s) = units.first(where: { t.hasSuffix($0.0) }) {
            digits = t.dropLast(unit.count)
            scale = s
        }
        guard let n = Int(digits.trimmingCharacters(in: .whitespaces)), n > 0, n <= Int.max / scale else { return nil }
        self.init(limit: n * scale, directory: directory)
    }

    public var description: String {
        guard let limit else { return "no limit" }
        return limit % (1 << 30) == 0
            ? "\(limit >> 30) GiB" : limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes"
    }

    /// An empty fold state that keeps to this limit, and its spill file when it has a limit.
    public func emptyState(keepsUserPositions: Bool = true) throws -> (Projections, SpillFile?) {
        var state = Projections()
        state.keepsUserPositions = keepsUserPositions
        guard let limit else { return (state, nil) }
        let file = try SpillFile(directory: directory)
        state.spillViews(to: file, memory: limit, pageSize: pageSize)
        return (state, file)
    }
}

extension FoldMemory {
    /// `state`, whose tables spill, put into new tables that spill to a new file, as a snapshot of
    /// it would be read back: the new file holds each spilled view's newest bytes only. (A view
    /// changed after it was spilled is appended to the file again, and its old bytes stay: a
    /// projector that follows the log for long would otherwise fill the disk.) The old file goes
    /// when the last copy of the old state does.
    func compacted(_ state: Projections) throws -> Projections {
        var reader = try snapshotReader()
        try state.writeSnapshot(partBytes: SnapshotStore.partBytes) { try reader.add($0) }
        return try reader.finish(tracksChanges: state.tracksChanges)
    }

    /// A snapshot reader that keeps to this limit.
    func snapshotReader() throws -> SnapshotReader {
        guard let limit else { return SnapshotReader() }
        return SnapshotReader(spillingTo: try SpillFile(directory: directory), memory: limit, pageSize: pageSize)
    }
}

/// What a fold spilled: views written out of memory, the bytes written (views changed after they
/// were spilled are written again) and the reads back.
public struct SpillReport: Sendable, Hashable, Codable, CustomStringConvertible {
    public var views: Int
    public var bytes: Int64
    public var reads: Int
    /// Why the spill file could not be written, if it could not (the views went on in memory).
    public var failure: String?

    public init(views: Int, bytes: Int64, reads: Int, failure: String? = nil) {
        (self.views, self.bytes, self.reads, self.failure) = (views, bytes, reads, failure)
    }

    init?(_ state: Projections, _ file: SpillFile?) {
        guard let file, state.spilledViews > 0 else { return nil }
        (views, bytes, reads, failure) = (state.spilledViews, file.size, file.readCount, file.failure)
    }

    public var description: String {
        "\(views) views spilled to a temporary file (\(bytes >> 20) MiB written, \(reads) reads back)"
            + (failure.map { "; then \($0), and the rest was kept in memory" } ?? "")
    }
}

/// A spill store in a temporary file. The file is removed from its directory as soon as it is
/// open: it lives while the store does, and nothing is left behind when the process ends,
/// however it ends. Appends and reads may come from any thread (`pwrite` and `pread` at offsets
/// handed out atomically).
///
/// When a write fails (the disk is full), the bytes of that append and of every one after it are
/// kept in memory instead, and ``failure`` says why: the fold goes on with the same results, in more
/// memory, rather than stopping a process that may be serving appends too. A read that fails is a
/// damaged disk: the process stops with the reason.
public final class SpillFile: SpillStore {
    private let fd: Int32
    private let end = Atomic<Int64>(0)
    private let reads = Atomic<Int>(0)
    /// The lowest offset kept in memory (`Int64.max` while every write succeeds).
    private let keptFrom = Atomic<Int64>(.max)
    /// The appends kept in memory since a write failed, by offset; and why it failed.
    private let kept = Mutex<(blocks: [(offset: Int64, bytes: [UInt8])], failure: String?)>(([], nil))

    /// Makes the file in `directory`.
    public convenience init(directory: String) throws {
        var template = Array("\(directory)/ledger-spill-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw SpillFileError(
                description: "cannot make a spill file in \(directory): \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.init(descriptor: fd)
    }

    /// A store on an open file descriptor, which it closes when it goes (tests give one that
    /// cannot be written).
    init(descriptor: Int32) { fd = descriptor }

    deinit { close(fd) }

    /// Bytes appended so far.
    public var size: Int64 { end.load(ordering: .relaxed) }
    /// Reads so far.
    public var readCount: Int { reads.load(ordering: .relaxed) }
    /// Why a write failed, if one did (what was appended since is in memory).
    public var failure: String? { kept.withLock { $0.failure } }

    public func append(_ bytes: [UInt8]) -> Int64 {
        let offset = end.add(Int64(bytes.count), ordering: .relaxed).oldValue
        if offset == 0 { Self.returnFreedBuffers }
        guard keptFrom.load(ordering: .acquiring) == .max else {
            keep(bytes, at: offset, failure: nil)
            return offset
        }
        let written: Int32? = bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return n == 0 ? ENOSPC : errno }
                done += n
            }
            return nil
        }
        if let error = written {
            keep(
                bytes, at: offset,
                failure:
                    "cannot write \(bytes.count) bytes to the spill file at byte \(offset): \(String(cString: strerror(error)))"
            )
        }
        return offset
    }

    /// From the first spill on, the C allocator gives buffers of 2 MiB or more their own mappings,
    /// returned to the system when freed: glibc otherwise raises that threshold as big buffers come
    /// and go, and keeps them once freed (a snapshot's parts, the encoding of a page). On the
    /// 10 M-fact log kept to 32 MiB, a projector's start from a snapshot peaked at 297 MiB instead
    /// of 347-375, a rebuild at 189 MiB instead of 210-227. At 1 MiB the rows a rebuild writes
    /// (1 MiB chunks) were mapped and unmapped one by one, and it took 2-5 s longer.
    /// Process-wide, set once.
    private static let returnFreedBuffers: Void = {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, 2 << 20)
        #endif
    }()

    private func keep(_ bytes: [UInt8], at offset: Int64, failure: String?) {
        kept.withLock { kept in
            let i = kept.blocks.firstIndex { $0.offset > offset } ?? kept.blocks.endIndex
            kept.blocks.insert((offset, bytes), at: i)
            if kept.failure == nil { kept.failure = failure }
        }
        while true {
            let lowest = keptFrom.load(ordering: .relaxed)
            if offset >= lowest
                || keptFrom.compareExchange(expected: lowest, desired: offset, ordering: .releasing).exchanged
            {
                break
            }
        }
    }

    public func read(at offset: Int64, count: Int) -> [UInt8] {
        reads.add(1, ordering: .relaxed)
        if offset >= keptFrom.load(ordering: .acquiring),
            let bytes = kept.withLock({ kept -> [UInt8]? in
                // The last block starting at or before `offset`, if the bytes lie in it.
                guard let block = kept.blocks.last(where: { $0.offset <= offset }),
                    offset + Int64(count) <= block.offset + Int64(block.bytes.count)
                else { return nil }
                let from = Int(offset - block.offset)
                return Array(block.bytes[from..<(from + count)])
            })
        {
            return bytes
        }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    fatalError(
                        "cannot read \(count) bytes of the fold's spill file at byte \(offset): "
                            + (n == 0 ? "it ends first" : String(cString: strerror(errno))))
                }
                done += n
            }
            initialized = count
        }
    }
}

/// The spill file could not be made.
public struct SpillFileError: LedgerCodedError, CustomStringConvertible {
    public var code: LedgerError.Code { .spillFile }
    public var description: String
}

extension LedgerError.Code {
    /// A fold could not make its spill file (the directory is missing or not writable).
    public static let spillFile = LedgerError.Code("spill-file")
}
