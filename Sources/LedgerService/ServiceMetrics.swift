import CoreMetrics
import Foundation
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
    private let findingKinds = Mutex<Set<String>>([])

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                                                   .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(2)]
        self.factory = factory
        appendedEvents = Metrics.Counter(label: "ledger_appended_events_total", factory: factory)
        appendRequests = Metrics.Counter(label: "ledger_append_requests_total", factory: factory)
        appendLatency = Metrics.Timer(label: "ledger_append_duration_seconds", factory: factory)
        projectorLag = Metrics.Gauge(label: "ledger_projector_lag_events", factory: factory)
        logHead = Metrics.Gauge(label: "ledger_log_head_position", factory: factory)
        pendingEvents = Metrics.Gauge(label: "ledger_pending_events", factory: factory)
    }

    func conflict(_ kind: String) {
        Metrics.Counter(label: "ledger_conflicts_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// A connection closed because the client passed a deadline (`header`, `body`, `idle`).
    func timedOut(_ deadline: String) {
        Metrics.Counter(label: "ledger_client_timeouts_total", dimensions: [("deadline", deadline)], factory: factory).increment()
    }

    func refused(_ route: String, status: Int) {
        Metrics.Counter(label: "ledger_refusals_total", dimensions: [("route", route), ("status", String(status))], factory: factory).increment()
    }

    func notification(_ store: String, outcome: String) {
        Metrics.Counter(label: "ledger_notifications_total", dimensions: [("store", store), ("outcome", outcome)], factory: factory).increment()
    }

    /// The findings of the last audit run by the service, by kind (kinds that went away drop to 0).
    func findings(_ byKind: [String: Int]) {
        let kinds = findingKinds.withLock { known in
            known.formUnion(byKind.keys)
            return known
        }
        for kind in kinds {
            Metrics.Gauge(label: "ledger_findings", dimensions: [("kind", kind)], factory: factory).record(byKind[kind] ?? 0)
        }
    }

    public func text() -> String { registry.emitToString() }
}
