import Dispatch
import Foundation
import LedgerDomain
import Synchronization

/// Decoding and folding on two cores: the connection's thread decodes rows into facts and hands
/// them over in batches; a thread of its own folds them, in log order. The result is the fold of
/// the same facts in the same order, as folding inline would give (a test compares them).
final class FoldPipeline: Sendable {
    private struct Queue {
        var pending: [ScannedFact] = []
        var batches: [[ScannedFact]] = []
        var finished = false
    }

    private let queue = Mutex(Queue())
    private let box: FoldBox
    private let filled = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let drained = DispatchSemaphore(value: 0)
    private let batchSize: Int

    /// `depth` batches of `batchSize` facts may wait between the two threads.
    init(_ initial: Projections, batchSize: Int = 2_048, depth: Int = 8) {
        box = FoldBox(initial)
        self.batchSize = batchSize
        free = DispatchSemaphore(value: depth)
        let thread = Thread { [self] in self.foldLoop() }
        thread.name = "ledger-fold"
        thread.start()
    }

    /// On the decoding thread: queues one fact (handed over when a batch is full; may wait for room).
    func add(_ fact: ScannedFact) {
        let full: [ScannedFact]? = queue.withLock { q in
            q.pending.append(fact)
            guard q.pending.count >= batchSize else { return nil }
            defer { q.pending = []; q.pending.reserveCapacity(batchSize) }
            return q.pending
        }
        if let full { hand(full) }
    }

    private func hand(_ batch: [ScannedFact]) {
        free.wait()
        queue.withLock { $0.batches.append(batch) }
        filled.signal()
    }

    /// Hands over the last facts and waits (off the caller's thread) until all are folded.
    func finish() async -> Projections {
        let rest = queue.withLock { q in defer { q.pending = [] }; return q.pending }
        if !rest.isEmpty { hand(rest) }
        queue.withLock { $0.finished = true }
        filled.signal()
        let drained = self.drained
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { drained.wait(); c.resume() }
        }
        return box.value
    }

    private func foldLoop() {
        while true {
            filled.wait()
            let next: [ScannedFact]? = queue.withLock { q in q.batches.isEmpty ? nil : q.batches.removeFirst() }
            guard let batch = next else {
                if queue.withLock({ $0.finished && $0.batches.isEmpty }) { break }
                continue
            }
            box.state.withLock { p in for f in batch { p.apply(f) } }
            free.signal()
        }
        drained.signal()
    }
}
