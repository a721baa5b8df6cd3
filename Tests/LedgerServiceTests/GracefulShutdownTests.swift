import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerService
import LedgerTesting
import Logging
import ServiceLifecycle
import Testing

/// The real server on 127.0.0.1 (an ephemeral port): a graceful shutdown while appends are in
/// flight lets every one of them finish and answer, then closes the database connections.
@Suite("Graceful shutdown", .timeLimit(.minutes(2)))
struct GracefulShutdownTests {
    @Test func appendsInFlightFinishBeforeTheServiceStops() async throws {
        try await ServiceFixture.with("httpdrain") { f in
            let token = f.appendToken
            let perBatch = 3000
            let statuses = try await f.serving { port, group in
                try await withThrowingTaskGroup(of: Int.self) { tasks in
                    for b in 0..<4 {
                        tasks.addTask {
                            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/events")!)
                            request.httpMethod = "POST"
                            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
                            let body = (0..<perBatch).map { i in
                                "{\"stream\":\"order:d\(b)-\(i)\",\"type\":\"OrderCreated\",\"payload\":{\"orderId\":\"d\(b)-\(i)\",\"userId\":\"u\",\"channel\":\"appstore\",\"productId\":\"p\",\"amount\":600,\"currency\":\"CNY\"},\"occurredAt\":\"2026-03-31T08:15:00Z\"}"
                            }.joined(separator: "\n")
                            request.httpBody = Data(body.utf8)
                            // A request that had not connected when the server stopped accepting fails to
                            // connect (-1): it was never taken, so it must have written nothing.
                            guard let (_, response) = try? await URLSession.shared.exchange(request) else { return -1 }
                            return (response as? HTTPURLResponse)?.statusCode ?? -2
                        }
                    }
                    // Shut down as soon as an append is in flight (bounded by count: at most 2,000 polls).
                    for _ in 0..<2000 where await f.service.gate.appendsInFlight == 0 {
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    #expect(await f.service.gate.appendsInFlight > 0)
                    await group.triggerGracefulShutdown()
                    // While the appends in flight finish, no new connection is taken (at most 200
                    // attempts, 5 ms apart, for the listener to close: a hang guard on a loaded machine).
                    var refused = false
                    for _ in 0..<2000 where !refused {
                        if let probe = try? RawHTTP(port: port) {
                            probe.close()
                            try await Task.sleep(for: .milliseconds(5))
                        } else {
                            refused = true
                        }
                    }
                    #expect(refused, "new connections were still taken after the shutdown began")
                    var out: [Int] = []
                    for try await s in tasks { out.append(s) }
                    return out
                }
            }
            // No request was cut: each answered 201 or was never taken.
            #expect(statuses.allSatisfy { $0 == 201 || $0 == -1 }, "\(statuses)")
            #expect(statuses.contains(201))
            // Every answered append is in the log, and nothing else.
            #expect(try await f.rows() == Int64(statuses.filter { $0 == 201 }.count * perBatch))
            #expect(await f.service.gate.appendsInFlight == 0)
        }
    }

    /// `ledger serve --project`: the projector runs inside the service, so an appended order shows
    /// in /v1/orders without another process, and it stops with the service.
    @Test func theProjectorInsideTheServiceKeepsOrdersCurrent() async throws {
        try await ServiceFixture.with("httpproject", projector: true) { f in
            let token = f.allToken
            try await f.serving { port, _ in
                var append = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/events")!)
                append.httpMethod = "POST"
                append.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
                append.httpBody = Data(ServiceFixture.orderLine("p1").utf8)
                let (_, appended) = try await URLSession.shared.exchange(append)
                #expect((appended as? HTTPURLResponse)?.statusCode == 201)
                var order = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/orders/p1")!)
                order.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
                var status = 0
                for _ in 0..<250 where status != 200 {
                    let (_, r) = try await URLSession.shared.exchange(order)
                    status = (r as? HTTPURLResponse)?.statusCode ?? -1
                    if status != 200 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(status == 200)
            }
        }
    }

    /// Events a writer committed as pending and never sealed (it stopped in between) reach the log
    /// while the service runs, with no append to seal them.
    @Test func theServiceSealsWhatAWriterLeftPending() async throws {
        try await ServiceFixture.with("httpseal", configure: { $0.sealInterval = .milliseconds(50) }) { f in
            let store = f.service.stores.writer
            try await TestDatabase.leavePending(f.owner, stream: "s", version: 0)
            #expect(try await store.pendingCount() == 1)
            try await f.serving { _, _ in
                // Bounded by count: at most 1,000 polls.
                for _ in 0..<1000 where try await store.pendingCount() > 0 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(try await store.pendingCount() == 0)
                #expect(try await store.headPosition() == 1)
                #expect(try await store.verifyChain().isIntact)
            }
        }
    }
}
