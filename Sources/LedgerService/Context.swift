import HTTPTypes
import Hummingbird
import Logging

/// The request context: the caller's token name once authenticated, and the body limit.
public struct LedgerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The name of the API token that authenticated the request (never the token).
    public var caller: String?
    public var maxUploadSize: Int

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.caller = nil
        self.maxUploadSize = ServiceLimits.defaultMaximumBodyBytes
    }
}

/// Request limits.
public struct ServiceLimits: Sendable {
    public static let defaultMaximumBodyBytes = 4 << 20
    /// Bodies over this many bytes are refused with 413 before they are parsed.
    public var maximumBodyBytes = ServiceLimits.defaultMaximumBodyBytes
    /// Batches of more events are refused with 413.
    public var maximumBatchEvents = 10_000
    /// Store notifications over this many bytes are refused with 413.
    public var maximumNotificationBytes = 256 * 1024
    /// `GET /v1/events` returns at most this many events per request.
    public var maximumReadEvents = 100_000
    /// How long a client may take to send a request's head and body, and to send the next.
    public var timeouts = RequestTimeouts()
    /// Connections open at once; the next waits in the listen backlog until one closes.
    public var maximumConnections = 1024
    /// Appends one caller (API token) may have in flight; the next is refused with 429 and
    /// Retry-After, so that one busy caller cannot take every database connection from the others.
    public var maximumAppendsPerCaller = 64
    public init() {}
}

/// Sets the body limit on the context.
struct LimitMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let bytes: Int
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.maxUploadSize = bytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > bytes {
            throw Problem.tooLarge(limit: bytes)
        }
        return try await next(request, context)
    }
}

extension LedgerRequestContext {
    /// A path parameter as the client meant it: percent-decoded (`appstore%3Atx%3A9%40app` is
    /// `appstore:tx:9@app`, `a%2Fb` is `a/b`), as every client library encodes path segments.
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        guard let decoded = raw.removingPercentEncoding else {
            throw Problem.badParameter(name, "the path parameter \(name) is not valid percent-encoded UTF-8")
        }
        return decoded
    }
}
