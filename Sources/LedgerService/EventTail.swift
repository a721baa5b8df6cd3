import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerLog
import ServiceLifecycle

/// The log's head as the service last read it, for every live tail at once: while any tail waits,
/// one loop reads the head every `interval` and wakes the tails it has passed, so a thousand tails
/// cost one query per interval, not a connection each.
actor HeadWatch {
    let store: EventStore
    let interval: Duration
    private var waiters: [(after: Int64, until: ContinuousClock.Instant, resume: CheckedContinuation<Bool, Never>)] = []
    private var polling = false

    init(store: EventStore, interval: Duration = .milliseconds(200)) {
        self.store = store
        self.interval = interval
    }

    /// Returns true once the head is past `position`, false after `timeout` (or on shutdown).
    func wait(beyond position: Int64, timeout: Duration) async -> Bool {
        if stopped { return false }
        return await withCheckedContinuation { c in
            waiters.append((position, .now + timeout, c))
            if !polling {
                polling = true
                Task { await self.poll() }
            }
        }
    }

    /// Whether the service is shutting down: tails end.
    private(set) var stopped = false

    /// Ends every tail: wakes those waiting (false: not moved), and any later wait returns at once.
    func stop() {
        stopped = true
        for w in waiters { w.resume.resume(returning: false) }
        waiters = []
    }

    private func poll() async {
        while !waiters.isEmpty {
            // While the database is away the head is not known: tails keep waiting (their
            // heartbeats go on), and read again once it is back.
            let head = try? await store.headPosition()
            let now = ContinuousClock.now
            var still: [(after: Int64, until: ContinuousClock.Instant, resume: CheckedContinuation<Bool, Never>)] = []
            for w in waiters {
                if let head, head > w.after {
                    w.resume.resume(returning: true)
                } else if now >= w.until {
                    w.resume.resume(returning: false)
                } else {
                    still.append(w)
                }
            }
            waiters = still
            if waiters.isEmpty { break }
            try? await Task.sleep(for: interval)
        }
        polling = false
    }
}

/// `GET /v1/events` with `Accept: text/event-stream`: the log as Server-Sent Events, from a
/// position (`from`, or `Last-Event-ID`: the last position the client holds), forever. Each fact
/// is one event (`id:` its position, `event: fact`, `data:` its JSON line); a comment every
/// `heartbeat` while nothing is appended keeps proxies from closing the stream. Positions are
/// checked to follow one another, so nothing is skipped or repeated; while the database is away the
/// stream waits and reads again from where it was. It ends when the service shuts down (the client
/// reconnects with `Last-Event-ID`).
struct EventTail {
    let store: EventStore
    let watch: HeadWatch
    var heartbeat: Duration = .seconds(15)

    func response(after start: Int64) -> Response {
        let store = store, watch = watch, heartbeat = heartbeat
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            var after = start
            while await !watch.stopped {
                let page: [RecordedEvent]
                do {
                    page = try await store.readAll(after: after, limit: 500)
                } catch  where isServerUnavailable(error) {
                    // The database is away: wait and read again from the same position (a shutdown
                    // meanwhile ends the stream instead).
                    _ = await watch.wait(beyond: Int64.max, timeout: .seconds(1))
                    continue
                }
                if page.isEmpty {
                    if await !watch.wait(beyond: after, timeout: heartbeat), await !watch.stopped {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                    continue
                }
                var buffer = ByteBuffer()
                for e in page {
                    guard e.position == after + 1 else {
                        throw LedgerError.database(
                            .init(
                                kind: .protocolViolation,
                                message: "tail expected position \(after + 1) but read \(e.position); refusing to skip")
                        )
                    }
                    buffer.writeString("id: \(e.position)\nevent: fact\ndata: \(e.jsonLine)\n\n")
                    after = e.position
                }
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}

/// Ends the live tails when a graceful shutdown begins, before the server waits for the requests
/// in flight (a tail never finishes by itself): it runs after the application in the service group,
/// so it is told first.
struct TailStopper: Service {
    let watch: HeadWatch
    func run() async throws {
        try? await gracefulShutdown()
        await watch.stop()
    }
}
