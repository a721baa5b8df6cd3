import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerDomain
import LedgerLog

/// `POST /v1/events`, `GET /v1/events`, `GET /v1/streams/{id}`: the log over HTTP. The body is the
/// JSON lines of `ledger append`, decoded and validated by the same code (``EventLines``, the fact
/// catalogue) and appended as one batch by the same ``EventStore/append(_:)``.
struct EventsRoutes {
    let stores: LedgerStores
    let limits: ServiceLimits
    let metrics: ServiceMetrics
    let gate: AppendGate
    /// The live tails' shared view of the head (`Accept: text/event-stream`).
    let watch: HeadWatch

    func append(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let body: ByteBuffer
        do {
            var request = request
            body = try await request.collectBody(upTo: limits.maximumBodyBytes)
        } catch let e as HTTPError where e.status == .contentTooLarge {
            throw Problem.tooLarge(limit: limits.maximumBodyBytes)
        }
        // One key per request: two headers (or one joined from two) would each name another request.
        if request.headers[values: .idempotencyKey].count > 1 {
            throw Problem.badParameter(
                "Idempotency-Key", "give one Idempotency-Key header (the request has several); nothing was written")
        }
        let key = request.headers[.idempotencyKey]
        if let key,
            key.isEmpty || key.utf8.count > 200
                || key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        {
            throw Problem.badParameter(
                "Idempotency-Key", "the Idempotency-Key header must be 1-200 characters with no control characters")
        }
        let decoder = EventLineDecoder(validation: stores.writer.configuration.validation)
        let decoded: (events: [NewEvent], lines: [Int])
        do {
            // JSON lines (application/x-ndjson, text/plain, or no type), or with application/json one
            // fact object or an array of them (a `line` then names the array's element, from 1).
            let lines = try Self.lines(body, contentType: request.headers[.contentType])
            decoded = try EventLines.decode(
                lines, decoder: decoder,
                eventId: key.map { k in
                    { (_: Int, index: Int) -> UUID in Self.eventId(key: k, caller: context.caller ?? "", index: index) }
                })
        } catch {
            throw Problem.input(error)
        }
        if decoded.events.isEmpty {
            throw Problem(
                .unprocessableContent, "empty-batch", "The batch is empty",
                detail: "the body holds no fact lines; nothing was written")
        }
        if decoded.events.count > limits.maximumBatchEvents {
            throw Problem(
                .contentTooLarge, "batch-too-large", "The batch has too many facts",
                detail:
                    "\(decoded.events.count) facts, over the limit of \(limits.maximumBatchEvents) per request; nothing was written"
            )
        }
        // `Prefer: respond-async` (RFC 7240): answered at commit, a position null while the event
        // waits to be sealed (when another writer held the append lock), 202 then.
        let atCommit = Self.prefersAsync(request.headers[values: .prefer])
        let started = ContinuousClock.now
        let appended: [CommittedEvent]
        do {
            appended = try await gate.run(caller: context.caller ?? "", limit: limits.maximumAppendsPerCaller) {
                // The key covers the whole request: another body under it is a conflict, whatever
                // its lines carry (their own event ids included).
                if let key,
                    try await stores.writer.claimRequestKey(
                        caller: context.caller ?? "", key: key,
                        digest: Self.requestDigest(decoded.events)) == .otherBody
                {
                    throw Problem(
                        .conflict, "idempotency-conflict", "The Idempotency-Key was used with another body",
                        detail:
                            "the Idempotency-Key \(Echo.quoted(key, limit: 80)) was sent before with another body; a key names one request for good: use a new key for a new request; nothing was written",
                        field: "Idempotency-Key", key: key)
                }
                if atCommit { return try await stores.writer.appendAtCommit(decoded.events) }
                return try await stores.writer.append(decoded.events).map(CommittedEvent.init)
            }
        } catch let e as Problem where e.code == "idempotency-conflict" {
            metrics.conflict("idempotency-conflict")
            throw e
        } catch let e as LedgerError {
            if e.code == .versionConflict || e.code == .idempotencyConflict { metrics.conflict(e.code.name) }
            throw Problem.ledger(e, line: e.line(events: decoded.events, lines: decoded.lines))
        }
        let elapsed = started.duration(to: .now).components
        metrics.appendLatency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
        metrics.appendRequests.increment()
        let stored = appended.filter { !$0.alreadyStored }.count
        metrics.appendedEvents.increment(by: stored)
        var out = "{\"events\":["
        for (i, (line, a)) in zip(decoded.lines, appended).enumerated() {
            if i > 0 { out += "," }
            out +=
                "{\"line\":\(line),\"eventId\":\"\(a.eventId.lowercased)\",\"stream\":\(JSONValue.string(a.stream).compactText),\"version\":\(a.version),\"position\":\(a.position.map(String.init) ?? "null"),\"alreadyStored\":\(a.alreadyStored)}"
        }
        out += "],\"appended\":\(stored),\"alreadyStored\":\(appended.count - stored)}\n"
        var headers: HTTPFields = [.contentType: "application/json"]
        if atCommit { headers[.preferenceApplied] = "respond-async" }
        let status: HTTPResponse.Status =
            appended.contains { $0.position == nil } ? .accepted : stored == 0 ? .ok : .created
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: out)))
    }

    /// Whether the `Prefer` headers ask for `respond-async` (tokens are case-insensitive, a
    /// header may list several preferences, each with parameters after `;`).
    static func prefersAsync(_ values: [String]) -> Bool {
        values.contains { value in
            value.split(separator: ",").contains { preference in
                preference.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                    == "respond-async"
            }
        }
    }

    /// The body as JSON lines: as sent, or, for `application/json`, each fact of the one object or
    /// the array on a line of its own (its element's number is its line).
    static func lines(_ body: ByteBuffer, contentType: String?) throws(EventInputError) -> [UInt8] {
        let bytes = Array(body.readableBytesView)
        let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else { return bytes }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw EventInputError(message: "not valid UTF-8")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch {
            throw EventInputError(line: error.line, column: error.column, message: "malformed JSON: \(error.message)")
        }
        switch value {
        case .object: return Array(value.compactText.utf8)
        case .array(let facts):
            var out: [UInt8] = []
            for (i, fact) in facts.enumerated() {
                guard case .object = fact else {
                    throw EventInputError(line: i + 1, message: "element \(i + 1) of the array is not a fact object")
                }
                out += Array(fact.compactText.utf8) + [UInt8(ascii: "\n")]
            }
            return out
        default:
            throw EventInputError(line: 1, message: "an application/json body is one fact object or an array of them")
        }
    }

    /// What a request under an Idempotency-Key says, whatever its layout (blank lines, member order,
    /// number spellings): SHA-256 over each fact as decoded, every field in a fixed order.
    static func requestDigest(_ events: [NewEvent]) -> [UInt8] {
        var text = ""
        for e in events {
            let m = e.metadata
            let fields: [JSONValue] = [
                .string(e.eventId.lowercased), .string(e.stream), .string(e.type), .int(Int64(e.schemaVersion)),
                e.payload,
                .array([m.correlationId, m.causationId, m.source, m.actor].map { $0.map(JSONValue.string) ?? .null }),
                .string(e.occurredAt.iso8601), e.idempotencyKey.map(JSONValue.string) ?? .null,
                .string(e.expectedVersion.description),
            ]
            text += JSONValue.array(fields).canonicalText + "\n"
        }
        return SHA256.hash(Array(text.utf8))
    }

    /// The id of the `index`-th fact (blank lines not counted) of a request made with `key` by
    /// `caller`: the same request sent again names the same events, so the log returns the original
    /// positions; other content under the same key is an idempotency conflict.
    static func eventId(key: String, caller: String, index: Int) -> UUID {
        UUID(
            bytes: SHA256.hash(Array("ledger-http-idempotency\u{0}\(caller)\u{0}\(key)\u{0}\(index)".utf8)), version: 5)
    }

    /// The log from a position as NDJSON, streamed page by page up to the head as it stood when the
    /// request came (or `limit`); with `Accept: text/event-stream`, a live tail (``EventTail``). `from` is the first position (inclusive); a `Last-Event-ID` header
    /// (the last position the client holds) resumes after it and wins over `from`.
    func read(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        var after: Int64 = 0
        if let from = request.uri.queryParameters["from"] {
            guard let p = Int64(String(from)), p >= 0 else {
                throw Problem.badParameter("from", "from must be a position >= 0")
            }
            after = max(p, 1) - 1
        }
        if let last = request.headers[.lastEventID] {
            guard let p = Int64(last), p >= 0 else {
                throw Problem.badParameter("Last-Event-ID", "Last-Event-ID must be a position >= 0")
            }
            after = p
        }
        // A live tail, for any language with an EventSource: Server-Sent Events, forever.
        if request.headers[.accept]?.contains("text/event-stream") == true {
            return EventTail(store: stores.reader, watch: watch).response(after: after)
        }
        var limit = Int64(limits.maximumReadEvents)
        if let l = request.uri.queryParameters["limit"] {
            guard let n = Int64(String(l)), n >= 1, n <= Int64(limits.maximumReadEvents) else {
                throw Problem.badParameter("limit", "limit must be between 1 and \(limits.maximumReadEvents)")
            }
            limit = n
        }
        let store = stores.reader
        let head = try await store.headPosition()
        let first = try await store.readAll(after: after, limit: Int(min(limit, 1000)))
        let start = after
        let maximum = limit
        let body = ResponseBody { writer in
            var page = first
            var sent: Int64 = 0
            var cursor = start
            while !page.isEmpty {
                var buffer = ByteBuffer()
                for e in page where e.position <= head && sent < maximum {
                    buffer.writeString(e.jsonLine)
                    buffer.writeInteger(UInt8(ascii: "\n"))
                    sent += 1
                    cursor = e.position
                }
                try await writer.write(buffer)
                if sent >= maximum || cursor >= head { break }
                page = try await store.readAll(after: cursor, limit: Int(min(maximum - sent, 1000)))
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson", .init("Ledger-Head")!: String(head)],
            body: body)
    }

    /// One stream's events in version order (`from` = first version), as NDJSON.
    func stream(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let id = try context.pathParameter("id")
        var from: Int64 = 0
        if let f = request.uri.queryParameters["from"] {
            guard let v = Int64(String(f)), v >= 0 else {
                throw Problem.badParameter("from", "from must be a stream version >= 0")
            }
            from = v
        }
        guard EventValidation.isValidStream(id) else {
            throw Problem.badParameter("id", "a stream id is 1-200 characters of letters, digits and _ . : @ / + = -")
        }
        var events: [RecordedEvent] = []
        var version = from
        while events.count < limits.maximumReadEvents {
            let page = try await stores.reader.readStream(id, fromVersion: version, limit: 1000)
            events += page
            if page.count < 1000 { break }
            version = page.last!.version + 1
        }
        if events.isEmpty && from == 0 { throw Problem.notFound("no stream \(Echo.quoted(id)) in the log") }
        let text = events.map { $0.jsonLine + "\n" }.joined()
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    /// RFC 7240: a client's preferences, and which of them the answer applied.
    static let prefer = HTTPField.Name("Prefer")!
    static let preferenceApplied = HTTPField.Name("Preference-Applied")!
    /// The id of the request on every answer, and on every log line written while answering it.
    static let requestId = HTTPField.Name("Request-Id")!
}
