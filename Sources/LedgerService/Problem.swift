import Foundation
import Synchronization
import HTTPTypes
import Hummingbird
import NIOHTTP1
import LedgerCore
import LedgerLog
import LedgerPostgres

/// An RFC 9457 problem: every refusal of the service, as `application/problem+json`, naming the
/// line, field or key at fault. Its text never holds a secret (no token, key or password: the
/// database's own messages are redacted of connection strings, and a presented token is never echoed).
public struct Problem: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A short, stable name (`version-conflict`, `invalid-fact`...); the `type` is `urn:ledger:problem:<code>`.
    public var code: String
    public var title: String
    public var detail: String
    public var line: Int?
    public var field: String?
    public var key: String?
    public var extra: [(String, JSONValue)] = []
    public var headers: HTTPFields = [:]

    public init(
        _ status: HTTPResponse.Status, _ code: String, _ title: String, detail: String,
        line: Int? = nil, field: String? = nil, key: String? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.line = line
        self.field = field
        self.key = key
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", .string("urn:ledger:problem:" + code)), ("title", .string(title)),
            ("status", .int(Int64(status.code))),
            ("detail", .string(Echo.shown(ConnectionString.redacted(detail), limit: 2000))),
        ]
        if let line { members.append(("line", .int(Int64(line)))) }
        if let field { members.append(("field", .string(field))) }
        if let key { members.append(("key", .string(key))) }
        members.append(contentsOf: extra)
        members.append(("nothingWritten", .bool(true)))
        return .makeObject(members)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json.compactText + "\n")))
    }
}

extension Problem {
    /// A fact line refused before anything was sent: 400 when it is not JSON, 422 when it is not a valid fact.
    public static func input(_ e: EventInputError) -> Problem {
        let malformed = e.message.hasPrefix("malformed JSON") || e.message == "not valid UTF-8"
        var p = Problem(
            malformed ? .badRequest : .unprocessableContent, malformed ? "malformed-json" : "invalid-fact",
            malformed ? "The body is not JSON lines" : "A fact is invalid",
            detail: e.description + "; nothing was written", line: e.line, field: e.field)
        if let id = e.eventId { p.extra.append(("eventId", .string(id))) }
        if let c = e.column { p.extra.append(("column", .int(Int64(c)))) }
        return p
    }

    /// What the log refused, by its code: conflicts 409, invalid 422, unavailable 503. `line`: the
    /// line (or array element) of the event a conflict is about.
    public static func ledger(_ error: LedgerError, line: Int? = nil) -> Problem {
        switch error {
        case .versionConflict(let stream, _, _, let eventId):
            var p = Problem(
                .conflict, "version-conflict", "A stream is not at the expected version",
                detail: (line.map { "line \($0): " } ?? "") + error.description, line: line, field: "expectedVersion")
            p.extra = [("stream", .string(stream)), ("eventId", .string(eventId.lowercased))]
            return p
        case .idempotencyConflict(let key, let eventId, _, _):
            var p = Problem(
                .conflict, "idempotency-conflict", "An idempotency key or event id is stored with other content",
                detail: (line.map { "line \($0): " } ?? "") + error.description, line: line,
                field: key == nil ? "eventId" : "idempotencyKey", key: key)
            p.extra = [("eventId", .string(eventId.lowercased))]
            return p
        case .invalidEvent(let e):
            return input(e)
        case .migration, .database:
            return unavailable(error)
        }
    }

    public static func unavailable(_ error: any Error) -> Problem {
        let code = (error as? any LedgerCodedError)?.code ?? (error as? PostgresError).map(LedgerError.Code.init)
        if code == .databaseUnavailable {
            var p = Problem(
                .serviceUnavailable, "database-unavailable", "The database cannot be reached",
                detail:
                    "the database cannot be reached; retry the same request later: sent again with the same Idempotency-Key or event ids, it is never written twice, and answers with its positions if it was"
            )
            p.headers[.retryAfter] = "1"
            return p
        }
        if code == .schemaNotMigrated || code == .migration {
            return Problem(
                .serviceUnavailable, "not-migrated", "The ledger's schema is not migrated",
                detail: "the ledger's schema is missing or not migrated (run `ledger migrate`); nothing was written")
        }
        return Problem(
            .internalServerError, "internal", "Internal error",
            detail: "the request failed inside the service; nothing was written")
    }

    public static func notFound(_ what: String) -> Problem {
        Problem(.notFound, "not-found", "Not found", detail: what)
    }

    public static func badParameter(_ name: String, _ detail: String) -> Problem {
        Problem(.badRequest, "bad-parameter", "A parameter is invalid", detail: detail, field: name)
    }

    public static func tooLarge(limit: Int) -> Problem {
        Problem(
            .contentTooLarge, "body-too-large", "The body is too large",
            detail: "the body is over the limit of \(limit) bytes; split the batch; nothing was written")
    }
}

/// Turns every error into a problem: the service's own, the router's (404, 405), the log's, and any
/// other as a 500 that says nothing about its cause (it is logged without secrets).
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let known: KnownRoutes

    public init(known: KnownRoutes = KnownRoutes()) { self.known = known }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let p as Problem {
            throw p
        } catch let e as HTTPParserError {
            // A malformed request (a bad chunk size...): the server answers 400 and closes the
            // connection, which cannot be trusted to carry another request.
            throw e
        } catch let e as LedgerError {
            throw Problem.ledger(e)
        } catch let e as EventInputError {
            throw Problem.input(e)
        } catch let e as PositionNotReached {
            // A hot standby behind the moment asked for: it will get there.
            var p = Problem(.serviceUnavailable, "position-not-reached", "Not replayed here yet", detail: e.description)
            p.headers[.retryAfter] = "1"
            throw p
        } catch let e as HTTPError {
            if e.status == .contentTooLarge { throw Problem.tooLarge(limit: context.maxUploadSize) }
            // No route for this method, but one for another: 405 with the methods there are.
            if e.status == .notFound, case let allowed = known.methods(for: request.uri.path), !allowed.isEmpty {
                var p = Problem(
                    .methodNotAllowed, "method-not-allowed", "Method not allowed",
                    detail:
                        "\(request.method) is not a method of \(request.uri.path): use \(allowed.joined(separator: " or "))"
                )
                p.headers[.allow] = allowed.joined(separator: ", ")
                throw p
            }
            throw Problem(
                e.status, "http-\(e.status.code)", e.status.reasonPhrase,
                detail: e.body.map { Echo.shown($0, limit: 300) }
                    ?? "\(request.method) \(request.uri.path): \(e.status.reasonPhrase)")
        } catch let e as PostgresError {
            context.logger.error(
                "request failed",
                metadata: ["path": "\(request.uri.path)", "error": "\(ConnectionString.redacted(e.description))"])
            throw Problem.unavailable(e)
        } catch {
            context.logger.error(
                "request failed", metadata: ["path": "\(request.uri.path)", "error": "\(type(of: error))"])
            throw Problem.unavailable(error)
        }
    }
}

/// The service's routes (path patterns and methods), for telling a wrong method (405) from a
/// wrong path (404). Filled once, when the router is built.
public final class KnownRoutes: Sendable {
    private let routes = Mutex<[(segments: [Substring], method: String)]>([])

    public init() {}

    func set(_ list: [(path: String, method: String)]) {
        routes.withLock { $0 = list.map { (Self.segments($0.path), $0.method) } }
    }

    /// The methods routed for `path` (a `{parameter}` or `:parameter` segment matches any one segment).
    func methods(for path: String) -> [String] {
        let asked = Self.segments(path)
        return routes.withLock { routes in
            Array(
                Set(
                    routes.filter { r in
                        r.segments.count == asked.count
                            && zip(r.segments, asked).allSatisfy { p, s in
                                p.hasPrefix("{") || p.hasPrefix(":") || p == s
                            }
                    }.map(\.method))
            ).sorted()
        }
    }

    static func segments(_ path: String) -> [Substring] { path.split(separator: "/") }
}
