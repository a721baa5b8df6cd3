import HTTPTypes
import Hummingbird
import LedgerCore

/// Counts the appends in flight so that shutdown waits for them: once closed, new appends are
/// refused with 503 (nothing written) and ``drain()`` returns when the last one in flight is done.
/// It also bounds each caller's appends in flight: one over the limit is refused with 429.
public actor AppendGate {
    private var inFlight = 0
    private var byCaller: [String: Int] = [:]
    private var closed = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Runs `body` as an append in flight; with `caller`, as one of that caller's, of which at most
    /// `limit` may be in flight at once.
    func run<T: Sendable>(
        caller: String? = nil, limit: Int = .max, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        guard !closed else {
            var p = Problem(
                .serviceUnavailable, "shutting-down", "The service is shutting down",
                detail:
                    "the service is shutting down and takes no new appends; nothing was written; retry on another instance"
            )
            p.headers[.retryAfter] = "1"
            throw p
        }
        if let caller {
            let mine = byCaller[caller, default: 0]
            guard mine < limit else {
                var p = Problem(
                    .tooManyRequests, "too-many-appends", "Too many appends in flight",
                    detail:
                        "\(Echo.quoted(caller)) has \(mine) appends in flight, the most one caller may have (--max-appends-per-caller); nothing was written; retry after Retry-After seconds"
                )
                p.headers[.retryAfter] = "1"
                throw p
            }
            byCaller[caller] = mine + 1
        }
        inFlight += 1
        defer {
            inFlight -= 1
            if let caller {
                let left = byCaller[caller, default: 1] - 1
                byCaller[caller] = left == 0 ? nil : left
            }
            if inFlight == 0 {
                waiters.forEach { $0.resume() }
                waiters.removeAll()
            }
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
