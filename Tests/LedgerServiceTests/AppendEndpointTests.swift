import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerCore
import LedgerPostgres
import LedgerService
import LedgerTesting
import NIOCore
import Testing

/// `POST /v1/events`: the batch is appended with every guarantee of the library, or refused with a
/// problem naming its line, field or key and nothing written.
@Suite("POST /v1/events", .timeLimit(.minutes(2)))
struct AppendEndpointTests {
    @Test func aBatchIsAppendedAndARetryReturnsTheOriginalPositions() async throws {
        try await ServiceFixture.with("httpappend") { f in
            try await f.test { client in
                // No business keys and no event ids in the lines: only the header makes the retry safe,
                // and a retry that differs in blank lines is still the same request.
                let lines = [
                    ServiceFixture.orderLine("o1", expected: "\"any\"", businessKey: false),
                    ServiceFixture.orderLine("o2", expected: "\"any\"", businessKey: false),
                ]
                let headers = ServiceFixture.bearer(f.appendToken, [HTTPField.Name("Idempotency-Key")!: "batch-1"])
                let first = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(lines: lines))
                #expect(first.status == .created)
                let second = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers,
                    body: ByteBuffer(lines: [lines[0], "", lines[1]]))
                #expect(second.status == .ok)
                guard case .array(let a)? = first.json?["events"], case .array(let b)? = second.json?["events"] else {
                    Issue.record("no events in \(first.text)")
                    return
                }
                #expect(a.map { $0["position"] } == [.int(1), .int(2)])
                #expect(a.map { $0["position"] } == b.map { $0["position"] })
                #expect(a.map { $0["eventId"] } == b.map { $0["eventId"] })
                #expect(b.allSatisfy { $0["alreadyStored"] == .bool(true) })
                #expect(a.map { $0["line"] } == [.int(1), .int(2)])
            }
            #expect(try await f.rows() == 2)
        }
    }

    /// `Prefer: respond-async`: answered at commit. A writer alone gets its positions (201); one
    /// that finds the append lock taken (another process appending to the same log) gets 202 with
    /// position null, and the event is in the log once sealed (by the service itself here).
    @Test func respondAsyncIsAnsweredAtCommitAndSealedLater() async throws {
        try await ServiceFixture.with("httpasync") { f in
            let admin = try await TestDatabase.admin(f.owner)
            let s = quoteIdentifier(f.owner.schema)
            try await f.test { client in
                var headers = ServiceFixture.bearer(f.appendToken)
                headers[HTTPField.Name("Prefer")!] = "wait=5, respond-async"
                let alone = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o1")]))
                #expect(alone.status == .created)
                #expect(alone.headers[HTTPField.Name("Preference-Applied")!] == "respond-async")
                guard case .array(let first)? = alone.json?["events"] else {
                    Issue.record("no events in \(alone.text)")
                    return
                }
                #expect(first.map { $0["position"] } == [.int(1)])

                // Another session holds the append lock, as another writer in the middle of its commit.
                try await admin.execute("BEGIN")
                _ = try await admin.query(
                    "SELECT pg_advisory_xact_lock(4243, hashtext($1))", [.text("ledger-append:" + f.owner.schema)])
                let line = ServiceFixture.orderLine("o2")
                let pending = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(lines: [line]))
                #expect(pending.status == .accepted)
                guard case .array(let events)? = pending.json?["events"] else {
                    Issue.record("no events in \(pending.text)")
                    return
                }
                #expect(events.map { $0["position"] } == [.null])
                #expect(events.map { $0["alreadyStored"] } == [.bool(false)])
                #expect(events.map { $0["version"] } == [.int(0)])
                #expect(pending.json?["appended"] == .int(1))
                // A retry while it is pending: the original, still without a position.
                let retry = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(lines: [line]))
                #expect(retry.status == .accepted)
                #expect(retry.json?["alreadyStored"] == .int(1))
                // Stored pending, not in the log while the lock is held.
                #expect(try await f.rows() == 1)

                try await admin.execute("COMMIT")
                while try await admin.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) != 0 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                let sealed = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                    body: ByteBuffer(lines: [line]))
                #expect(sealed.status == .ok)
                guard case .array(let after)? = sealed.json?["events"] else {
                    Issue.record("no events in \(sealed.text)")
                    return
                }
                #expect(after.map { $0["position"] } == [.int(2)])
                #expect(after.map { $0["eventId"] } == events.map { $0["eventId"] })
            }
            await admin.close()
            #expect(try await f.rows() == 2)
        }
    }

    /// With a sealer (`ledger serve --sealing sealer`), `Prefer: respond-async` never takes the
    /// append lock: 202 with position null for a writer alone too, and the service's sealer puts the
    /// event in the log with nothing more appended. Without the header, a position as always.
    @Test func respondAsyncWithASealerLeavesTheSealToIt() async throws {
        // The service's periodic seal off: only the elected sealer seals.
        try await ServiceFixture.with("httpsealer", sealing: .sealer, configure: { $0.sealInterval = nil }) { f in
            let admin = try await TestDatabase.admin(f.owner)
            let s = quoteIdentifier(f.owner.schema)
            try await f.test { client in
                var headers = ServiceFixture.bearer(f.appendToken)
                headers[HTTPField.Name("Prefer")!] = "respond-async"
                let line = ServiceFixture.orderLine("o1")
                let answered = try await client.execute(
                    uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(lines: [line]))
                #expect(answered.status == .accepted)
                guard case .array(let events)? = answered.json?["events"] else {
                    Issue.record("no events in \(answered.text)")
                    return
                }
                #expect(events.map { $0["position"] } == [.null])
                try await TestDatabase.waitUntil(admin, "SELECT count(*) FROM \(s).pending_events", equals: 0)
                #expect(try await f.rows() == 1)
                let waited = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o2")]))
                #expect(waited.status == .created)
                guard case .array(let second)? = waited.json?["events"] else {
                    Issue.record("no events in \(waited.text)")
                    return
                }
                #expect(second.map { $0["position"] } == [.int(2)])
            }
            await admin.close()
        }
    }

    @Test func conflictsAre409AndWriteNothing() async throws {
        try await ServiceFixture.with("httpconflict") { f in
            try await f.test { client in
                let auth = ServiceFixture.bearer(f.appendToken)
                _ = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o1")]))
                // A version conflict: the stream exists; the batch's other fact is not written either.
                let version = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [
                        ServiceFixture.orderLine("o9"),
                        ServiceFixture.orderLine("o1", user: "u_2").replacingOccurrences(
                            of: "order:o1:created", with: "order:o1:again"),
                    ]))
                #expect(version.status == .conflict)
                #expect(version.headers[.contentType] == "application/problem+json")
                #expect(version.json?["type"]?.stringValue == "urn:ledger:problem:version-conflict")
                #expect(version.json?["stream"]?.stringValue == "order:o1")
                // The conflicting fact is the body's second line.
                #expect(version.json?["line"]?.intValue == 2)
                // The same Idempotency-Key with other content.
                let k = ServiceFixture.bearer(f.appendToken, [HTTPField.Name("Idempotency-Key")!: "k"])
                _ = try await client.execute(
                    uri: "/v1/events", method: .post, headers: k,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o2")]))
                let key = try await client.execute(
                    uri: "/v1/events", method: .post, headers: k,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o3")]))
                #expect(key.status == .conflict)
                #expect(key.json?["type"]?.stringValue == "urn:ledger:problem:idempotency-conflict")
                // A business idempotency key stored with other content.
                let business = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o2", user: "u_other", expected: "\"any\"")]))
                #expect(business.status == .conflict)
                #expect(
                    business.json?["key"]?.stringValue == "order:o2:created" && business.json?["line"]?.intValue == 1)
            }
            #expect(try await f.rows() == 2)
        }
    }

    @Test(
        "an Idempotency-Key covers the whole request: another body under it is 409 even when its lines carry their own event ids; two key headers are 400"
    )
    func anIdempotencyKeyCoversTheWholeRequest() async throws {
        try await ServiceFixture.with("httpkeyall") { f in
            try await f.test { client in
                let k = ServiceFixture.bearer(f.appendToken, [HTTPField.Name("Idempotency-Key")!: "req-1"])
                let own = { (order: String, id: String) in
                    ServiceFixture.orderLine(order, expected: "\"any\"", eventId: id, businessKey: false)
                }
                let first = try await client.execute(
                    uri: "/v1/events", method: .post, headers: k,
                    body: ByteBuffer(lines: [own("o1", "3f2b8c4e-0d1a-4c5e-9f6a-7b8c9d0e1f21")]))
                #expect(first.status == .created)
                // The same request again: its original result.
                let again = try await client.execute(
                    uri: "/v1/events", method: .post, headers: k,
                    body: ByteBuffer(lines: ["", own("o1", "3f2b8c4e-0d1a-4c5e-9f6a-7b8c9d0e1f21")]))
                #expect(again.status == .ok)
                // Another body under the key, its line with an event id of its own: 409, nothing written.
                let other = try await client.execute(
                    uri: "/v1/events", method: .post, headers: k,
                    body: ByteBuffer(lines: [own("o2", "3f2b8c4e-0d1a-4c5e-9f6a-7b8c9d0e1f22")]))
                #expect(other.status == .conflict, "\(other.text)")
                #expect(
                    other.json?["type"]?.stringValue == "urn:ledger:problem:idempotency-conflict"
                        && other.json?["key"]?.stringValue == "req-1")
                // Two Idempotency-Key headers: 400, and neither key alone writes again.
                var two = ServiceFixture.bearer(f.appendToken)
                two.append(HTTPField(name: HTTPField.Name("Idempotency-Key")!, value: "req-2"))
                two.append(HTTPField(name: HTTPField.Name("Idempotency-Key")!, value: "req-3"))
                let doubled = try await client.execute(
                    uri: "/v1/events", method: .post, headers: two,
                    body: ByteBuffer(lines: [own("o3", "3f2b8c4e-0d1a-4c5e-9f6a-7b8c9d0e1f23")]))
                #expect(
                    doubled.status == .badRequest && doubled.json?["field"]?.stringValue == "Idempotency-Key",
                    "\(doubled.text)")
                // The key is the caller's: another token's request under the same key is its own.
                let byOther = try await client.execute(
                    uri: "/v1/events", method: .post,
                    headers: ServiceFixture.bearer(f.allToken, [HTTPField.Name("Idempotency-Key")!: "req-1"]),
                    body: ByteBuffer(lines: [own("o4", "3f2b8c4e-0d1a-4c5e-9f6a-7b8c9d0e1f24")]))
                #expect(byOther.status == .created, "\(byOther.text)")
            }
            #expect(try await f.rows() == 2)
        }
    }

    @Test(
        "application/json takes one fact object (pretty-printed too) or an array of them; JSON lines stay the default")
    func aJSONBodyIsOneFactOrAnArray() async throws {
        try await ServiceFixture.with("httpjsonbody") { f in
            try await f.test { client in
                var json = ServiceFixture.bearer(f.appendToken)
                json[.contentType] = "application/json; charset=utf-8"
                let pretty = ServiceFixture.orderLine("j1").replacingOccurrences(of: ",\"", with: ",\n  \"")
                let one = try await client.execute(
                    uri: "/v1/events", method: .post, headers: json, body: ByteBuffer(string: pretty))
                #expect(one.status == .created, "\(one.text)")
                let array = "[\n" + ServiceFixture.orderLine("j2") + ",\n  " + ServiceFixture.orderLine("j3") + "\n]"
                let two = try await client.execute(
                    uri: "/v1/events", method: .post, headers: json, body: ByteBuffer(string: array))
                #expect(two.status == .created, "\(two.text)")
                guard case .array(let events)? = two.json?["events"] else {
                    Issue.record("no events: \(two.text)")
                    return
                }
                #expect(
                    events.map { $0["line"] } == [.int(1), .int(2)]
                        && events.map { $0["position"] } == [.int(2), .int(3)])
                let notAFact = try await client.execute(
                    uri: "/v1/events", method: .post, headers: json,
                    body: ByteBuffer(string: "[" + ServiceFixture.orderLine("j4") + ", 7]"))
                #expect(
                    notAFact.status == .unprocessableContent && notAFact.json?["line"] == .int(2), "\(notAFact.text)")
                let malformed = try await client.execute(
                    uri: "/v1/events", method: .post, headers: json, body: ByteBuffer(string: "[{\"stream\": "))
                #expect(malformed.status == .badRequest, "\(malformed.text)")
                // Without application/json, the body is JSON lines: a pretty-printed object is not.
                let lines = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                    body: ByteBuffer(string: pretty))
                #expect(lines.status == .badRequest)
            }
            #expect(try await f.rows() == 3)
        }
    }

    @Test("a method a route does not take is 405 with the methods it does (Allow); an unknown path stays 404")
    func aWrongMethodIs405() async throws {
        try await ServiceFixture.with("http405") { f in
            try await f.test { client in
                let auth = ServiceFixture.bearer(f.allToken)
                let delete = try await client.execute(uri: "/v1/events", method: .delete, headers: auth)
                #expect(
                    delete.status == .methodNotAllowed && delete.headers[.allow] == "GET, POST",
                    "\(delete.status) \(delete.text)")
                #expect(delete.headers[.contentType] == "application/problem+json")
                let put = try await client.execute(uri: "/v1/streams/order%3Ao1", method: .put, headers: auth)
                #expect(put.status == .methodNotAllowed && put.headers[.allow] == "GET")
                let post = try await client.execute(uri: "/healthz", method: .post)
                #expect(post.status == .methodNotAllowed && post.headers[.allow] == "GET")
                let nowhere = try await client.execute(uri: "/v1/nothing", method: .get, headers: auth)
                #expect(nowhere.status == .notFound)
            }
        }
    }

    @Test func badBodiesAreRefusedNamingTheLineAndFieldWithNothingWritten() async throws {
        try await ServiceFixture.with("httpbad", configure: { $0.limits.maximumBodyBytes = 4096 }) { f in
            try await f.test { client in
                let auth = ServiceFixture.bearer(f.appendToken)
                let malformed = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [ServiceFixture.orderLine("o1"), "{\"stream\": "]))
                #expect(malformed.status == .badRequest)
                #expect(malformed.json?["line"] == .int(2))
                let invalid = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [
                        ServiceFixture.orderLine("o1"),
                        ServiceFixture.orderLine("o2").replacingOccurrences(
                            of: "\"amount\":600", with: "\"amount\":\"six\""),
                    ]))
                #expect(invalid.status == .unprocessableContent)
                #expect(invalid.json?["line"] == .int(2))
                #expect(invalid.json?["field"]?.stringValue?.contains("amount") == true)
                let unknownType = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: [
                        ServiceFixture.orderLine("o1").replacingOccurrences(of: "OrderCreated", with: "OrderCreatd")
                    ]))
                #expect(unknownType.status == .unprocessableContent)
                #expect(unknownType.json?["field"]?.stringValue == "type")
                let big = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth,
                    body: ByteBuffer(lines: (0..<20).map { ServiceFixture.orderLine("big\($0)") }))
                #expect(big.status == .contentTooLarge)
                #expect(big.headers[.contentType] == "application/problem+json")
                let empty = try await client.execute(
                    uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(string: "\n\n"))
                #expect(empty.status == .unprocessableContent)
            }
            #expect(try await f.rows() == 0)
        }
    }

    @Test func tokensAndScopesAreEnforcedWithoutEchoingTheToken() async throws {
        try await ServiceFixture.with("httpauth") { f in
            try await f.test { client in
                let body = ByteBuffer(lines: [ServiceFixture.orderLine("o1")])
                let none = try await client.execute(uri: "/v1/events", method: .post, body: body)
                #expect(none.status == .unauthorized)
                #expect(none.headers[.contentType] == "application/problem+json")
                #expect(none.headers[.wwwAuthenticate] != nil)
                let forged = f.appendToken.dropLast() + (f.appendToken.hasSuffix("A") ? "B" : "A")
                let wrong = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(String(forged)), body: body)
                #expect(wrong.status == .unauthorized)
                #expect(!wrong.text.contains(String(forged)))
                let reader = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.readToken), body: body)
                #expect(reader.status == .forbidden)
                #expect(!reader.text.contains(f.readToken))
                let audit = try await client.execute(
                    uri: "/v1/audit", method: .get, headers: ServiceFixture.bearer(f.appendToken))
                #expect(audit.status == .forbidden)
                let read = try await client.execute(
                    uri: "/v1/events?from=1", method: .get, headers: ServiceFixture.bearer(f.auditToken))
                #expect(read.status == .forbidden)
            }
            #expect(try await f.rows() == 0)
        }
    }

    @Test func theTokenTableKeepsOnlyDigests() throws {
        let (token, line) = TokenTable.issue(name: "billing", scopes: [.append, .read])
        #expect(!line.contains(token))
        let table = try TokenTable(parsing: "# services\n" + line + "\n")
        #expect(table.authenticate(token)?.name == "billing")
        #expect(table.authenticate(token + "x") == nil)
        #expect(throws: TokenTableError.self) { try TokenTable(parsing: "billing append,delete sha256:00") }
    }

    /// A client's retries racing its original under one Idempotency-Key (eight copies of one
    /// request at once, five rounds): one is 201, the others 200 with the same position, none a
    /// conflict or an error, and the fact is stored once.
    @Test func retriesRacingTheirOriginalGetItsResult() async throws {
        try await ServiceFixture.with("httpkeyrace") { f in
            try await f.test { client in
                for round in 0..<5 {
                    let headers = ServiceFixture.bearer(
                        f.appendToken, [HTTPField.Name("Idempotency-Key")!: "race-\(round)"])
                    let body = ByteBuffer(lines: [ServiceFixture.orderLine("race\(round)")])
                    let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, Int64?).self) { group in
                        for _ in 0..<8 {
                            group.addTask {
                                let r = try await client.execute(
                                    uri: "/v1/events", method: .post, headers: headers, body: body)
                                guard case .array(let events)? = r.json?["events"] else { return (r.status, nil) }
                                return (r.status, events.first?["position"]?.intValue)
                            }
                        }
                        var all: [(HTTPResponse.Status, Int64?)] = []
                        for try await a in group { all.append(a) }
                        return all
                    }
                    #expect(answers.filter { $0.0 == .created }.count == 1, "round \(round): \(answers.map(\.0))")
                    #expect(answers.filter { $0.0 == .ok }.count == 7, "round \(round): \(answers.map(\.0))")
                    #expect(Set(answers.map(\.1)).count == 1 && answers[0].1 != nil)
                }
            }
            #expect(try await f.rows() == 5)
        }
    }

    /// One caller may have `maximumAppendsPerCaller` appends in flight; the next is 429 with
    /// Retry-After and writes nothing, while another caller is still served.
    @Test func aCallerOverItsAppendsInFlightIsTold429() async throws {
        try await ServiceFixture.with("httpbusy", configure: { $0.limits.maximumAppendsPerCaller = 1 }) { f in
            let admin = try await TestDatabase.admin(f.owner)
            // Hold the append lock: the first append commits as pending and waits, in flight.
            let lock = "4243, hashtext('ledger-append:' || $1)"
            _ = try await admin.query("SELECT pg_advisory_lock(\(lock))", [.text(f.owner.schema)])
            do {
                try await f.test { client in
                    let held = Task {
                        try await client.execute(
                            uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                            body: ByteBuffer(lines: [ServiceFixture.orderLine("busy1")])
                        ).status
                    }
                    // Bounded by count (at most 6,000 polls) while the first append gets in flight.
                    for _ in 0..<6000 where await f.service.gate.appendsInFlight == 0 {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    #expect(await f.service.gate.appendsInFlight == 1)
                    let refused = try await client.execute(
                        uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                        body: ByteBuffer(lines: [ServiceFixture.orderLine("busy2")]))
                    #expect(refused.status == .tooManyRequests)
                    #expect(refused.headers[.retryAfter] == "1")
                    #expect(refused.json?["type"] == .string("urn:ledger:problem:too-many-appends"))
                    #expect(refused.json?["nothingWritten"] == .bool(true))
                    _ = try await admin.query("SELECT pg_advisory_unlock(\(lock))", [.text(f.owner.schema)])
                    #expect(try await held.value == .created)
                    // Its slot is free again.
                    let after = try await client.execute(
                        uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.appendToken),
                        body: ByteBuffer(lines: [ServiceFixture.orderLine("busy3")]))
                    #expect(after.status == .created)
                }
            } catch {
                await admin.close()
                throw error
            }
            await admin.close()
            // busy1 and busy3; busy2 was never written.
            #expect(try await f.rows() == 2)
        }
    }
}
