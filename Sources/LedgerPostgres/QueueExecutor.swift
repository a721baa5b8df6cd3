#if os(Linux)
@preconcurrency import Dispatch
#else
import Dispatch
#endif

/// A serial executor backed by its own dispatch queue, so that an actor using it runs blocking
/// libpq calls on that queue's thread and never on Swift's shared cooperative pool.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        self.queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: UnownedJob) {
        queue.async {
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

// The executor holds only an immutable reference to a DispatchQueue, which is thread-safe;
// on Linux DispatchQueue is not yet marked Sendable.
#if os(Linux)
extension QueueExecutor: @unchecked Sendable {}
#endif
