import Foundation
import LedgerCore
import LedgerLog
import LedgerServer
import LedgerService
import LedgerTesting
import Testing

/// `GET /v1/events` with `Accept: text/event-stream`: a live tail any language can follow.
@Suite("Live tail (Server-Sent Events)", .timeLimit(.minutes(2)))
struct EventTailTests {
    /// Reads the stream until `count` events have come (at most 3,000 polls of 10 ms each).
    static func ids(_ client: RawHTTP, count: Int) async -> [Int64] {
        var text = ""
        var ids: [Int64] = []
        for _ in 0..<30 where ids.count < count {
            text += await client.readSome()
            // By scalars: "\r\n" (chunk framing) is one Character, and would join lines.
            ids = text.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
                .compactMap { $0.hasPrefix("id: ") ? Int64($0.dropFirst(4)) : nil }
        }
        return ids
    }

    /// A valid OrderCreated fact of its own order.
    static func order(_ id: String) -> NewEvent {
        NewEvent(
            stream: "order:\(id)", type: "OrderCreated",
            payload: .makeObject([
                ("orderId", .string(id)), ("userId", .string("u")), ("channel", .string("appstore")),
                ("productId", .string("p")), ("amount", .int(600)), ("currency", .string("CNY")),
            ]),
            occurredAt: Timestamp("2026-03-31T08:15:00Z")!, idempotencyKey: "order:\(id):created")
    }

    static func request(_ token: String, from: String = "", lastEventID: Int64? = nil) -> String {
        "GET /v1/events\(from) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n"
            + (lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test(
        "follows concurrent appends in order, each once; Last-Event-ID resumes after it; the stream ends when the service shuts down"
    )
    func followsConcurrentAppends() async throws {
        try await ServiceFixture.with("httpsse") { f in
            let token = f.readToken
            let writer = f.service.stores.writer
            _ = try await writer.append([Self.order("before")])
            try await f.serving { port, group in
                let client = try RawHTTP(port: port, timeout: 60)
                defer { client.close() }
                client.send(Self.request(token, from: "?from=1"))
                // Three writers, ten appends each, while the tail follows.
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for w in 0..<3 {
                        tasks.addTask { for i in 0..<10 { _ = try await writer.append([Self.order("w\(w)-\(i)")]) } }
                    }
                    try await tasks.waitForAll()
                }
                let seen = await Self.ids(client, count: 31)
                #expect(seen == Array(1...31), "skipped, repeated or out of order: \(seen)")
                let resumed = try RawHTTP(port: port, timeout: 60)
                defer { resumed.close() }
                resumed.send(Self.request(token, lastEventID: 28))
                #expect(await Self.ids(resumed, count: 3) == [29, 30, 31])
                await group.triggerGracefulShutdown()
                // The stream's last chunk: the response ended (chunked encoding's terminator).
                #expect(await client.readUntil("0\r\n\r\n"), "the stream did not end with the service")
            }
        }
    }

    /// The README's clients (tools/clients): each follows the tail from after position 1 for
    /// three facts, two stored before it started and one appended while it runs.
    static func followed(by command: @escaping @Sendable (Int) -> [String], _ f: ServiceFixture) async throws {
        let writer = f.service.stores.writer, token = f.readToken
        _ = try await writer.append([Self.order("c1"), Self.order("c2"), Self.order("c3")])
        try await f.serving { port, _ in
            var env = ProcessInfo.processInfo.environment
            env["LEDGER_TOKEN"] = token
            let args = command(port)
            async let run = ChildProcess.run(args[0], Array(args.dropFirst()), environment: env)
            _ = try await writer.append([Self.order("c4")])
            let out = try await run
            #expect(out.status == 0, "\(out.stderr)")
            let lines = out.stdout.split(separator: "\n").map(String.init)
            #expect(lines.map { $0.split(separator: " ").first.map(String.init) } == ["2", "3", "4"], "\(out.stdout)")
            #expect(lines.allSatisfy { $0.contains("OrderCreated") }, "\(out.stdout)")
        }
    }

    static let clients = TestDatabase.packageRoot.appendingPathComponent("tools/clients")

    @Test("the Python client (standard library only) follows the tail")
    func thePythonClientFollows() async throws {
        try await ServiceFixture.with("ssepython") { f in
            let script = Self.clients.appendingPathComponent("follow.py").path
            try await Self.followed(
                by: { ["/usr/bin/env", "python3", script, "http://127.0.0.1:\($0)", "--after", "1", "--count", "3"] }, f
            )
        }
    }

    @Test(
        "the Node client (its own fetch) follows the tail",
        .enabled(
            if: Node.path != nil || Node.required,
            "node is not installed: the Node client is not run (tools/ensure-deps.sh node installs it)"))
    func theNodeClientFollows() async throws {
        guard let node = Node.path else {
            Issue.record("node is required here (CI=true or LEDGER_REQUIRE_NODE=1) but not installed")
            return
        }
        try await ServiceFixture.with("ssenode") { f in
            let script = Self.clients.appendingPathComponent("follow.mjs").path
            try await Self.followed(by: { [node, script, "http://127.0.0.1:\($0)", "1", "3"] }, f)
        }
    }

    /// The README's day-one clients (tools/clients/roundtrip.*), written from the OpenAPI document:
    /// append, retry, read back by an encoded id, follow the tail, audit, each without a special case.
    static func roundTrip(by command: @escaping @Sendable (Int) -> [String], _ f: ServiceFixture) async throws {
        let token = f.allToken
        try await f.serving { port, _ in
            var env = ProcessInfo.processInfo.environment
            env["LEDGER_TOKEN"] = token
            let args = command(port)
            let out = try await ChildProcess.run(args[0], Array(args.dropFirst()), environment: env)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(
                out.stdout.split(separator: "\n").map(String.init) == [
                    "appended 201 position 1", "retried 200 position 1 alreadyStored true",
                    "read 1 events of order:rt/1@a",
                    "followed position 1 OrderCreated", "audited 0 findings as of position 1",
                ], "\(out.stdout)\(out.stderr)")
        }
    }

    @Test("the Python day-one client appends, retries, reads, follows and audits")
    func thePythonClientRoundTrips() async throws {
        try await ServiceFixture.with("rtpython") { f in
            let script = Self.clients.appendingPathComponent("roundtrip.py").path
            try await Self.roundTrip(
                by: { ["/usr/bin/env", "python3", script, "http://127.0.0.1:\($0)", "rt/1@a"] }, f)
        }
    }

    @Test(
        "the Node day-one client appends, retries, reads, follows and audits",
        .enabled(
            if: Node.path != nil || Node.required,
            "node is not installed: the Node client is not run (tools/ensure-deps.sh node installs it)"))
    func theNodeClientRoundTrips() async throws {
        guard let node = Node.path else {
            Issue.record("node is required here (CI=true or LEDGER_REQUIRE_NODE=1) but not installed")
            return
        }
        try await ServiceFixture.with("rtnode") { f in
            let script = Self.clients.appendingPathComponent("roundtrip.mjs").path
            try await Self.roundTrip(by: { [node, script, "http://127.0.0.1:\($0)", "rt/1@a"] }, f)
        }
    }
}

/// Node, for the Node client's test: required in CI and when LEDGER_REQUIRE_NODE=1 (unless
/// LEDGER_SKIP_NODE=1); otherwise a visible skip.
enum Node {
    static let path = ["/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var required: Bool {
        let env = ProcessInfo.processInfo.environment
        if env["LEDGER_SKIP_NODE"] == "1" { return false }
        return env["CI"] == "true" || env["LEDGER_REQUIRE_NODE"] == "1"
    }
}
