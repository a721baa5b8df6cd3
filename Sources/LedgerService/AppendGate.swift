import HTTPTypes
import Hummingbird

/// Counts the appends in flight so that shutdown waits for them: once closed, new appends are
/// refused with 503 (nothing written) and ``drain()`` returns when the last one in flight is done.
public actor AppendGate {
    private var inFlight = 0
    private var closed = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard !closed else {
            var p = Problem(.serviceUnavailable, "shutting-down", "The service is shutting down",
                            detail: "the service is shutting down and takes no new appends; nothing was written; retry on another instance")
            p.headers[.retryAfter] = "1"
            throw p
        }
        inFlight += 1
        defer {
            inFlight -= 1
            if inFlight == 0 { waiters.forEach { $0.resume() }; waiters.removeAll() }
        }
        return try await body()
    }

    /// Stops taking appends and waits for those in flight.
    public func drain() async {
        closed = true
        if inFlight == 0 { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    public var appendsInFlight: Int { inFlight }
}
