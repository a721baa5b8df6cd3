import CoreMetrics
import Foundation
import Hummingbird
import Metrics
import Prometheus
import Synchronization

/// The service's metrics, through swift-metrics with a Prometheus registry of its own (one per
/// service, so tests can run several): appends, latencies, conflicts, refusals, projector lag, events waiting to be sealed and
/// the last audit's findings by kind. `GET /metrics` prints them in Prometheus text format.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    let appendedEvents: Metrics.Counter
    let appendRequests: Metrics.Counter
    let appendLatency: Metrics.Timer
    let projectorLag: Metrics.Gauge
    let logHead: Metrics.Gauge
    let pendingEvents: Metrics.Gauge
    let databaseUp: Metrics.Gauge
    private let findingKinds = Mutex<Set<String>>([])

    /// Every metric family /metrics may show (the process's own included).
    public static var familyNames: Set<String> { Set(help.keys).union(ProcessMetrics.familyNames) }

    /// What each family means: printed as `# HELP` before its `# TYPE`.
    static let help: [String: String] = [
        "ledger_appended_events_total":
            "Events appended through the service (retries that stored nothing new not counted).",
        "ledger_append_requests_total": "POST /v1/events requests that appended or found their events stored.",
        "ledger_append_duration_seconds":
            "Time to append one request's batch, from the first statement to the commit's answer.",
        "ledger_projector_lag_events":
            "How many events the slowest read model is behind the head (as of the last /metrics or /readyz).",
        "ledger_log_head_position": "The log's last position (as of the last /metrics or /readyz).",
        "ledger_pending_events":
            "Events committed by a writer that found the append lock taken, not yet sealed (normally 0).",
        "ledger_database_up": "1 when the last /metrics could read the database, 0 when it could not.",
        "ledger_conflicts_total": "Appends refused as version or idempotency conflicts, by kind.",
        "ledger_client_timeouts_total": "Connections closed because the client passed a deadline (header, body, idle).",
        "ledger_notifications_total": "Store notifications received, by store and outcome.",
        "ledger_findings": "Findings of the last audit run by the service, by kind.",
        "ledger_refusals_total": "Requests refused with a 4xx, by route, status and reason (the problem's code).",
        "ledger_http_requests_total": "HTTP requests answered, by route, method and status class (2xx, 4xx, 5xx...).",
        "ledger_http_request_duration_seconds":
            "Time to answer an HTTP request (to its head; a stream's body may go on), by route and status class.",
    ]

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(2),
        ]
        self.factory = factory
        appendedEvents = Metrics.Counter(label: "ledger_appended_events_total", factory: factory)
        appendRequests = Metrics.Counter(label: "ledger_append_requests_total", factory: factory)
        appendLatency = Metrics.Timer(label: "ledger_append_duration_seconds", factory: factory)
        projectorLag = Metrics.Gauge(label: "ledger_projector_lag_events", factory: factory)
        logHead = Metrics.Gauge(label: "ledger_log_head_position", factory: factory)
        pendingEvents = Metrics.Gauge(label: "ledger_pending_events", factory: factory)
        databaseUp = Metrics.Gauge(label: "ledger_database_up", factory: factory)
    }

    /// A request refused with a 4xx, by route, status and reason.
    func refused(route: String, status: Int, reason: String) {
        Metrics.Counter(
            label: "ledger_refusals_total",
            dimensions: [("route", route), ("status", String(status)), ("reason", reason)],
            factory: factory
        ).increment()
    }

    /// One answered request: counted by route, method and status class, timed by route and class.
    func answered(route: String, method: String, status: Int, nanoseconds: Int64) {
        let statusClass = "\(status / 100)xx"
        Metrics.Counter(
            label: "ledger_http_requests_total",
            dimensions: [("route", route), ("method", method), ("status", statusClass)],
            factory: factory
        ).increment()
        Metrics.Timer(
            label: "ledger_http_request_duration_seconds", dimensions: [("route", route), ("status", statusClass)],
            factory: factory
        ).recordNanoseconds(nanoseconds)
    }

    func conflict(_ kind: String) {
        Metrics.Counter(label: "ledger_conflicts_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// A connection closed because the client passed a deadline (`header`, `body`, `idle`).
    func timedOut(_ deadline: String) {
        Metrics.Counter(label: "ledger_client_timeouts_total", dimensions: [("deadline", deadline)], factory: factory)
            .increment()
    }

    func notification(_ store: String, outcome: String) {
        Metrics.Counter(
            label: "ledger_notifications_total", dimensions: [("store", store), ("outcome", outcome)], factory: factory
        ).increment()
    }

    /// The findings of the last audit run by the service, by kind (kinds that went away drop to 0).
    func findings(_ byKind: [String: Int]) {
        let kinds = findingKinds.withLock { known in
            known.formUnion(byKind.keys)
            return known
        }
        for kind in kinds {
            Metrics.Gauge(label: "ledger_findings", dimensions: [("kind", kind)], factory: factory).record(
                byKind[kind] ?? 0)
        }
    }

    /// The Prometheus text, each family with its `# HELP`.
    public func text() -> String {
        var out = ""
        for line in registry.emitToString().split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst(7).split(separator: " ").first,
                let help = Self.help[String(name)]
            {
                out += "# HELP \(name) \(help)\n"
            }
            out += line + "\n"
        }
        return out.hasSuffix("\n\n") ? String(out.dropLast()) : out
    }
}

/// Counts and times every request by the route that answered it (its pattern, `/v1/orders/{id}`;
/// `NotFound` for none) and its status class. Outermost, so refusals are counted as answered.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        /// Counts the answer and logs it (info; the request's id is on the line); the answer carries
        /// its id in `Request-Id`, so a client can quote it.
        func record(_ response: Response) -> Response {
            let elapsed = started.duration(to: .now).components
            let nanoseconds = elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
            let route = context.endpointPath ?? "NotFound"
            metrics.answered(
                route: route, method: request.method.rawValue, status: response.status.code, nanoseconds: nanoseconds)
            context.logger.info(
                "answered",
                metadata: [
                    "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
                    "milliseconds": "\(Double(nanoseconds / 1000) / 1000)",
                ])
            var response = response
            response.headers[.requestId] = context.id
            return response
        }
        do {
            return record(try await next(request, context))
        } catch let e as any HTTPResponseError {
            // Every refusal, by its reason (the problem's code: unauthorized, forbidden, body-too-large...).
            if (400..<500).contains(e.status.code) {
                metrics.refused(
                    route: context.endpointPath ?? "NotFound", status: e.status.code,
                    reason: (e as? Problem)?.code ?? "http-\(e.status.code)")
            }
            return record(try e.response(from: request, context: context))
        } catch {
            _ = record(Response(status: .internalServerError))
            throw error
        }
    }
}
