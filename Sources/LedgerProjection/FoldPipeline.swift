import Dispatch
import Foundation
import LedgerDomain
import Synchronization

/// One stage of a pipeline: elements handed over in batches to a thread of its own, which works
/// through them in the order they came.
final class BatchStage<Element: Sendable>: Sendable {
    private struct Queue {
        var pending: [Element] = []
        var batches: [[Element]] = []
        var finished = false
    }

    private let queue = Mutex(Queue())
    private let filled = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let drained = DispatchSemaphore(value: 0)
    private let batchSize: Int
    /// Given each batch to keep: the stage holds no other reference to it, so the work may take
    /// its elements out without copying them.
    private let work: @Sendable (inout [Element]) -> Void

    /// `depth` batches of `batchSize` elements may wait for the stage's thread.
    init(
        name: String, batchSize: Int = 2_048, depth: Int = 8, work: @escaping @Sendable (inout [Element]) -> Void
    ) {
        self.batchSize = batchSize
        self.work = work
        free = DispatchSemaphore(value: depth)
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.start()
    }

    /// Queues one element (handed over when a batch is full; may wait for room).
    func add(_ element: Element) {
        var full: [Element]? = queue.withLock { q in
            q.pending.append(element)
            guard q.pending.count >= batchSize else { return nil }
            defer {
                q.pending = []
                q.pending.reserveCapacity(batchSize)
            }
            return q.pending
        }
        if let batch = full.take() { hand(batch) }
    }

    /// Queues a whole batch, after any elements queued one by one. Taken (`consuming`): the stage
    /// holds the only reference, so the work's changes to it copy nothing.
    func add(batch: consuming [Element]) {
        let rest = queue.withLock { q in
            defer { q.pending = [] }
            return q.pending
        }
        if !rest.isEmpty { hand(rest) }
        if !batch.isEmpty { hand(batch) }
    }

    private func hand(_ batch: consuming [Element]) {
        free.wait()
        // Moved into the queue: a copy kept here until the signal was a second reference when
        // the stage's thread took the batch (and its first change copied every element).
        var moving = Optional(batch)
        queue.withLock { $0.batches.append(moving.take()!) }
        filled.signal()
    }

    /// Hands over the last elements and blocks until the stage's thread has worked through all.
    func finishBlocking() {
        let rest = queue.withLock { q in
            defer { q.pending = [] }
            return q.pending
        }
        if !rest.isEmpty { hand(rest) }
        queue.withLock { $0.finished = true }
        filled.signal()
        drained.wait()
    }

    /// ``finishBlocking()``, waiting off the caller's thread.
    func finish() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [self] in
                self.finishBlocking()
                c.resume()
            }
        }
    }

    private func loop() {
        while true {
            filled.wait()
            guard var batch = queue.withLock({ q in q.batches.isEmpty ? nil : q.batches.removeFirst() }) else {
                if queue.withLock({ $0.finished && $0.batches.isEmpty }) { break }
                continue
            }
            work(&batch)
            free.signal()
        }
        drained.signal()
    }
}

/// Reading, decoding and folding on three threads: the connection's thread reads rows (and hashes
/// them onto the chain, in an audit) and hands them over in batches; a thread of its own decodes
/// their payloads into facts; another folds them, in log order. The result is the fold of the same
/// facts in the same order, as folding inline would give (a test compares them).
final class FoldPipeline: Sendable {
    private let box: FoldBox
    private let folding: BatchStage<ScannedFact>
    private let decoding: BatchStage<ScannedRows>

    init(_ initial: Projections) {
        let box = FoldBox(initial)
        let folding = BatchStage<ScannedFact>(name: "ledger-fold") { batch in
            // Each fact moved into the fold, in order (the batch reversed, then taken from its end).
            // Read where it lay, each was copied (every id retained) and the copy freed after it.
            batch.reverse()
            box.state.withLock { p in while let fact = batch.popLast() { p.apply(fact) } }
        }
        self.box = box
        self.folding = folding
        // The reading thread hands over whole batches of rows: each is one element here.
        self.decoding = BatchStage<ScannedRows>(name: "ledger-decode", batchSize: 1) { batches in
            // Room for the ids of the purchases in flight (a purchase's facts lie close together
            // in the log), not for every user's: 128 KiB.
            let shared = SharedStrings(slots: 8192)
            for rows in batches { folding.add(batch: rows.decoded(shared: shared)) }
        }
    }

    /// On the reading thread: queues a batch of rows (may wait for room).
    func add(_ rows: ScannedRows) { decoding.add(rows) }

    /// Hands over the last rows and waits (off the caller's thread) until all are folded.
    func finish() async -> Projections {
        await decoding.finish()
        await folding.finish()
        return box.value
    }
}

/// A fold's state handed over to be freed on another thread. The state of a ten-million-fact log
/// is millions of views and arrays, freed one by one: a second or so that a finished audit or
/// rebuild need not wait for.
final class Discarded: Sendable {
    private let state: Mutex<Projections?>

    private init(_ state: consuming Projections) { self.state = Mutex(state) }

    /// Frees `state` on a background thread. The caller gives up its state (`consume`), so the
    /// last reference to its views is the one freed there.
    static func free(_ state: consuming Projections) {
        let box = Discarded(state)
        DispatchQueue.global(qos: .utility).async { box.state.withLock { $0 = nil } }
    }
}
