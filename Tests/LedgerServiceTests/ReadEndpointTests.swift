import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerCore
import LedgerLog
import LedgerProjection
import LedgerService
import LedgerTesting
import NIOCore
import Testing

/// The read side: the log as NDJSON with resume, streams, orders and users from the read models
/// with their timeline, the audit report, health, readiness and metrics.
@Suite("GET endpoints", .timeLimit(.minutes(2)))
struct ReadEndpointTests {
    static func append(_ f: ServiceFixture, _ client: any TestClientProtocol, _ lines: [String]) async throws {
        let r = try await client.execute(
            uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
            body: ByteBuffer(lines: lines))
        #expect(r.status == .created, "\(r.text)")
    }

    @Test func theLogStreamsAsNDJSONAndResumesAfterLastEventID() async throws {
        try await ServiceFixture.with("httpread") { f in
            try await f.test { client in
                try await Self.append(f, client, (1...5).map { ServiceFixture.orderLine("o\($0)") })
                let auth = ServiceFixture.bearer(f.readToken)
                let all = try await client.execute(uri: "/v1/events?from=1", method: .get, headers: auth)
                #expect(all.status == .ok)
                #expect(all.headers[.contentType] == "application/x-ndjson")
                let lines = all.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
                #expect(lines.map { $0["position"] } == (1...5).map { .int($0) })
                let fromThree = try await client.execute(uri: "/v1/events?from=3&limit=2", method: .get, headers: auth)
                #expect(
                    fromThree.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0))["position"] }
                        == [.int(3), .int(4)])
                var resume = auth
                resume[HTTPField.Name("Last-Event-ID")!] = "4"
                let rest = try await client.execute(uri: "/v1/events", method: .get, headers: resume)
                #expect(
                    rest.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0))["position"] } == [
                        .int(5)
                    ])
                let bad = try await client.execute(uri: "/v1/events?from=-1", method: .get, headers: auth)
                #expect(bad.status == .badRequest && bad.json?["field"]?.stringValue == "from")
                let stream = try await client.execute(uri: "/v1/streams/order:o2", method: .get, headers: auth)
                #expect(stream.status == .ok)
                #expect(stream.text.split(separator: "\n").count == 1)
                let missing = try await client.execute(uri: "/v1/streams/order:nope", method: .get, headers: auth)
                #expect(missing.status == .notFound && missing.headers[.contentType] == "application/problem+json")
            }
        }
    }

    /// Ids as client libraries send them in a path (JavaScript's encodeURIComponent, Python's
    /// quote(safe="")): ':' '@' and '/' percent-encoded.
    @Test func pathParametersArePercentDecoded() async throws {
        try await ServiceFixture.with("httpencoded") { f in
            try await f.test { client in
                try await Self.append(f, client, [ServiceFixture.orderLine("a/b@com.example", user: "u:7")])
                let projector = try await Projector.start(try await EventStore.open(f.owner.connecting(as: .projector)))
                _ = try await projector.catchUp()
                await projector.close()
                let auth = ServiceFixture.bearer(f.readToken)
                let stream = try await client.execute(
                    uri: "/v1/streams/order%3Aa%2Fb%40com.example", method: .get, headers: auth)
                #expect(stream.status == .ok && stream.text.split(separator: "\n").count == 1, "\(stream.text)")
                let order = try await client.execute(uri: "/v1/orders/a%2Fb%40com.example", method: .get, headers: auth)
                #expect(
                    order.status == .ok && order.json?["order"]?["order_id"]?.stringValue == "a/b@com.example",
                    "\(order.text)")
                let user = try await client.execute(uri: "/v1/users/u%3A7", method: .get, headers: auth)
                #expect(user.status == .ok, "\(user.text)")
                let broken = try await client.execute(uri: "/v1/users/u%E2%28", method: .get, headers: auth)
                #expect(broken.status == .badRequest && broken.json?["field"]?.stringValue == "id", "\(broken.text)")
            }
        }
    }

    @Test func ordersUsersAndTheAuditComeFromTheReadModelsWithTheirTimeline() async throws {
        try await ServiceFixture.with("httpviews") { f in
            try await f.test { client in
                try await Self.append(
                    f, client,
                    [ServiceFixture.orderLine("o1", user: "u_7"), ServiceFixture.orderLine("o2", user: "u_7")])
                let projector = try await Projector.start(try await EventStore.open(f.owner.connecting(as: .projector)))
                _ = try await projector.catchUp()
                await projector.close()
                let auth = ServiceFixture.bearer(f.readToken)
                let order = try await client.execute(uri: "/v1/orders/o1", method: .get, headers: auth)
                #expect(order.status == .ok, "\(order.text)")
                #expect(order.json?["order"]?["order_id"]?.stringValue == "o1")
                guard case .array(let timeline)? = order.json?["timeline"] else {
                    Issue.record("no timeline: \(order.text)")
                    return
                }
                #expect(timeline.map { $0["type"]?.stringValue } == ["OrderCreated"])
                let user = try await client.execute(uri: "/v1/users/u_7", method: .get, headers: auth)
                #expect(user.status == .ok, "\(user.text)")
                guard case .array(let orders)? = user.json?["orders"] else {
                    Issue.record("no orders: \(user.text)")
                    return
                }
                #expect(orders.count == 2)
                let unknown = try await client.execute(uri: "/v1/users/nobody", method: .get, headers: auth)
                #expect(unknown.status == .notFound)
                let audit = ServiceFixture.bearer(f.auditToken)
                let json = try await client.execute(uri: "/v1/audit?format=json", method: .get, headers: audit)
                #expect(json.status == .ok && json.json != nil)
                let csv = try await client.execute(uri: "/v1/audit?format=csv", method: .get, headers: audit)
                #expect(csv.status == .ok && csv.headers[.contentType]?.hasPrefix("text/csv") == true)
                let html = try await client.execute(
                    uri: "/v1/audit?format=html&as_of=2026-01-01T00:00:00Z", method: .get, headers: audit)
                #expect(html.status == .ok && html.text.contains("<html"))
                let future = try await client.execute(
                    uri: "/v1/audit?as_of=2999-01-01T00:00:00Z", method: .get, headers: audit)
                #expect(future.status == .badRequest && future.json?["field"]?.stringValue == "as_of")
                let format = try await client.execute(uri: "/v1/audit?format=pdf", method: .get, headers: audit)
                #expect(format.status == .badRequest)
            }
        }
    }

    @Test func healthReadinessAndMetrics() async throws {
        try await ServiceFixture.with("httphealth", configure: { $0.maximumProjectorLag = 1 }) { f in
            try await f.test { client in
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .ok, "\(ready.text)")
                #expect(ready.json?["checks"]?["migrations"]?["ok"] == .bool(true))
                try await Self.append(f, client, [ServiceFixture.orderLine("o1"), ServiceFixture.orderLine("o2")])
                // Two events the projector has not seen: over the lag of 1. Appends are still ready;
                // fresh reads are not.
                let appends = try await client.execute(uri: "/readyz", method: .get)
                #expect(
                    appends.status == .ok && appends.json?["checks"]?["projector"]?["lag"] == .int(2), "\(appends.text)"
                )
                let behind = try await client.execute(uri: "/readyz?reads=fresh", method: .get)
                #expect(behind.status == .serviceUnavailable)
                #expect(behind.json?["checks"]?["projector"]?["lag"] == .int(2))
                _ = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                    body: ByteBuffer(lines: [
                        ServiceFixture.orderLine("o1", user: "x").replacingOccurrences(of: "created", with: "again")
                    ]))
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.status == .ok)
                #expect(metrics.text.contains("ledger_appended_events_total 2"))
                #expect(metrics.text.contains("ledger_conflicts_total{kind=\"version-conflict\"} 1"))
                #expect(metrics.text.contains("ledger_projector_lag_events 2"))
                #expect(metrics.text.contains("ledger_pending_events 0"))
                #expect(metrics.text.contains("ledger_append_duration_seconds_bucket"))
                #expect(metrics.text.contains("ledger_database_up 1"))
                // The process's own figures, in Prometheus' standard names.
                for name in [
                    "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                    "process_start_time_seconds",
                ] {
                    let value = metrics.text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                        Double($0.split(separator: " ")[1])
                    }
                    #expect((value ?? 0) > 0, "\(name): \(String(describing: value))")
                }
                // Every family says what it means.
                let lines = metrics.text.split(separator: "\n").map(String.init)
                for (i, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
                    let name = line.split(separator: " ")[2]
                    #expect(i > 0 && lines[i - 1].hasPrefix("# HELP \(name) "), "no # HELP for \(name)")
                }
                // Requests by route, method and status class: the append that answered 2xx, the conflict 4xx.
                #expect(
                    metrics.text.contains(
                        #"ledger_http_requests_total{route="/v1/events",method="POST",status="2xx"} 1"#),
                    "\(metrics.text)")
                #expect(
                    metrics.text.contains(
                        #"ledger_http_requests_total{route="/v1/events",method="POST",status="4xx"} 1"#))
                #expect(
                    metrics.text.contains(#"ledger_http_request_duration_seconds_bucket{route="/readyz",status="5xx""#),
                    "the fresh-reads probe's 503")
                let notFound = try await client.execute(uri: "/v2/nothing", method: .get)
                #expect(notFound.status == .notFound && notFound.headers[.contentType] == "application/problem+json")
                let after = try await client.execute(uri: "/metrics", method: .get)
                #expect(
                    after.text.contains(#"ledger_http_requests_total{route="NotFound",method="GET",status="4xx"} 1"#),
                    "\(after.text)")
                // Every 4xx by its reason: the version conflict, the unknown path, a request without a token.
                _ = try await client.execute(uri: "/v1/events", method: .get)
                let reasons = try await client.execute(uri: "/metrics", method: .get).text
                #expect(
                    reasons.contains(
                        #"ledger_refusals_total{route="/v1/events",status="409",reason="version-conflict"} 1"#),
                    "\(reasons)")
                #expect(
                    reasons.contains(#"ledger_refusals_total{route="NotFound",status="404",reason="not-found"} 1"#)
                        || reasons.contains(
                            #"ledger_refusals_total{route="NotFound",status="404",reason="http-404"} 1"#),
                    "\(reasons)")
                #expect(reasons.contains(#"ledger_refusals_total{route="/v1/events",status="401","#), "\(reasons)")
            }
        }
    }
}
