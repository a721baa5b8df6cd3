import LedgerPostgres

/// How long a tail waits between attempts while the database is unavailable: doubling from
/// `first` up to `maximum`, forever (a tail exits only when its task is cancelled).
public struct Backoff: Sendable {
    public var first: Duration
    public var maximum: Duration

    public init(first: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.first = first
        self.maximum = maximum
    }

    /// The wait before attempt `n` (0-based) after a failure.
    public func delay(attempt n: Int) -> Duration {
        var d = first
        for _ in 0..<min(n, 30) where d < maximum { d = d * 2 }
        return min(d, maximum)
    }
}

/// True when `error` means the server went away or is not back yet (connection refused or
/// broken, shutting down, starting up): worth waiting for, unlike any other failure.
public func isServerUnavailable(_ error: any Error) -> Bool {
    switch error {
    case let e as PostgresError: return e.isConnectionFailure
    case LedgerError.database(let e): return e.isConnectionFailure
    default: return false
    }
}

extension EventStore {
    /// Runs `body` until it succeeds, waiting with `backoff` while the server is unavailable; any
    /// other error, and cancellation, ends it. `onRetry` hears each failure before the wait.
    public func retryingWhileUnavailable<T: Sendable>(
        backoff: Backoff = Backoff(), onRetry: @Sendable (any Error, Duration) -> Void = { _, _ in },
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await body()
            } catch  where isServerUnavailable(error) {
                try Task.checkCancellation()
                let wait = backoff.delay(attempt: attempt)
                onRetry(error, wait)
                logger.warning("database unavailable, retrying", metadata: ["error": "\(error)", "in": "\(wait)"])
                try await Task.sleep(for: wait)
                attempt += 1
            }
        }
    }
}
