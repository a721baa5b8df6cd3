import LedgerCore
import LedgerPostgres

extension EventStore {
    /// Tails the global log from `after` (exclusive), forever: wakes on NOTIFY from appends and falls
    /// back to polling every `pollInterval` if a notification is missed or the listener breaks.
    /// When the server goes away (a restart, a crash) it waits, reconnects with backoff and resumes
    /// from its position; it ends only when its task is cancelled.
    ///
    /// Pull-based: pages are read only as fast as the consumer iterates (bounded memory). Positions
    /// are gapless and commit-ordered, so the subscriber never skips or repeats an event; it checks
    /// this and throws rather than skip.
    /// `onRetry` hears each time the server was unavailable, before the wait.
    public func subscribe(
        after: Int64, pageSize: Int = 1000, pollInterval: Duration = .seconds(1), backoff: Backoff = Backoff(),
        onRetry: @escaping @Sendable (any Error, Duration) -> Void = { _, _ in }
    ) -> EventSubscription {
        EventSubscription(
            store: self, after: after, pageSize: pageSize, pollInterval: pollInterval, backoff: backoff,
            onRetry: onRetry)
    }
}

/// The events of the global log in position order, as they are appended.
public struct EventSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent
    let store: EventStore
    let after: Int64
    let pageSize: Int
    let pollInterval: Duration
    let backoff: Backoff
    let onRetry: @Sendable (any Error, Duration) -> Void

    public struct AsyncIterator: AsyncIteratorProtocol {
        let cursor: SubscriptionCursor
        public mutating func next() async throws -> RecordedEvent? {
            try await cursor.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            cursor: SubscriptionCursor(
                store: store, after: after, pageSize: pageSize, pollInterval: pollInterval,
                backoff: backoff, onRetry: onRetry))
    }
}

/// A subscriber's position. Not shared: each iterator has its own.
actor SubscriptionCursor {
    let store: EventStore
    let pageSize: Int
    private(set) var position: Int64
    private var buffer: [RecordedEvent] = []
    private var bufferIndex = 0
    private let signal: AppendSignal
    let backoff: Backoff
    let onRetry: @Sendable (any Error, Duration) -> Void

    init(
        store: EventStore, after: Int64, pageSize: Int, pollInterval: Duration, backoff: Backoff,
        onRetry: @escaping @Sendable (any Error, Duration) -> Void
    ) {
        self.store = store
        self.backoff = backoff
        self.onRetry = onRetry
        self.position = after
        self.pageSize = pageSize
        self.signal = AppendSignal(store: store, pollInterval: pollInterval)
    }

    func next() async throws -> RecordedEvent? {
        while true {
            if bufferIndex < buffer.count {
                let event = buffer[bufferIndex]
                bufferIndex += 1
                guard event.position == position + 1 else {
                    throw LedgerError.database(
                        PostgresError(
                            kind: .protocolViolation,
                            message:
                                "subscription expected position \(position + 1) but read \(event.position); refusing to skip"
                        ))
                }
                position = event.position
                return event
            }
            // Listen before reading, so that an append committed after the read wakes us. While the
            // server is away (a restart), wait and read again from the same position: the tail
            // survives, and since positions are gapless nothing is skipped or repeated.
            await signal.arm()
            let from = position, size = pageSize
            buffer = try await store.retryingWhileUnavailable(backoff: backoff, onRetry: onRetry) {
                try await store.readAll(after: from, limit: size)
            }
            bufferIndex = 0
            if buffer.isEmpty { try await signal.wait() }
        }
    }
}

/// Waits for the log to grow: wakes on the appends' NOTIFY (LISTEN on a connection of its own) and
/// falls back to polling every `pollInterval` if a notification is missed or the listener breaks.
package actor AppendSignal {
    let store: EventStore
    let pollInterval: Duration
    private var listener: PostgresConnection?

    package init(store: EventStore, pollInterval: Duration) {
        self.store = store
        self.pollInterval = pollInterval
    }

    isolated deinit {
        if let listener { Task { await listener.close() } }
    }

    /// Listens (again, if the listener broke). Call it before reading the log, so that an append
    /// committed after the read wakes the next ``wait()``.
    package func arm() async {
        if let listener, await listener.isConnected { return }
        listener = nil
        do {
            let connection = try await PostgresConnection.connect(
                store.configuration.connectionString, applicationName: "ledger-subscriber")
            try await connection.listen(store.configuration.channel)
            listener = connection
        } catch {
            store.logger.warning("cannot LISTEN, polling instead", metadata: ["error": "\(error)"])
        }
    }

    /// Returns on a notification, after `pollInterval`, or throws on cancellation.
    package func wait() async throws {
        let deadline = ContinuousClock.now + pollInterval
        while ContinuousClock.now < deadline {
            try Task.checkCancellation()
            guard let listener else {
                try await Task.sleep(for: min(pollInterval, .milliseconds(250)))
                continue
            }
            do {
                let got = try await listener.waitForNotifications(timeoutMilliseconds: 100)
                if !got.isEmpty { return }
            } catch {
                self.listener = nil
                return
            }
        }
    }

    package func close() async {
        await listener?.close()
        listener = nil
    }
}
