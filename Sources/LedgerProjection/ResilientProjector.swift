import LedgerCore
import LedgerLog
import Logging

extension Projector {
    /// Runs a projector over `store` until the task is cancelled, surviving server restarts: when
    /// the server goes away the projector is dropped and, with backoff, a new one starts where the
    /// tables are (each batch is committed with its checkpoint, so nothing is applied twice or
    /// skipped), then follows again. Any other failure ends it.
    ///
    /// Snapshots and memory as ``start(_:logger:progress:snapshotEvery:memory:)`` says. `onBatch(applied, position)`
    /// after each batch; `onRestart(error, wait)` before each wait.
    public static func followSurvivingRestarts(
        _ store: EventStore, pollInterval: Duration = .seconds(1), backoff: Backoff = Backoff(),
        logger: Logger = Logger(label: "ledger"), snapshotEvery: Int64 = 1_000_000, memory: FoldMemory = .automatic,
        onStart: @Sendable (Int64) -> Void = { _ in },
        onBatch: @escaping @Sendable (Int64, Int64) -> Void = { _, _ in },
        onRestart: @Sendable (any Error, Duration) -> Void = { _, _ in }
    ) async throws {
        var attempt = 0
        while !Task.isCancelled {
            var projector: Projector?
            do {
                let p = try await start(store, logger: logger, snapshotEvery: snapshotEvery, memory: memory)
                projector = p
                let n = try await p.catchUp()
                attempt = 0
                onStart(await p.position)
                if n > 0 { onBatch(n, await p.position) }
                try await p.follow(pollInterval: pollInterval, onBatch: onBatch)
                await p.close()
                return
            } catch  where isServerUnavailable(error) {
                if let projector { await projector.close() }
                try Task.checkCancellation()
                let wait = backoff.delay(attempt: attempt)
                onRestart(error, wait)
                try await Task.sleep(for: wait)
                attempt += 1
            } catch {
                if let projector { await projector.close() }
                throw error
            }
        }
    }
}
