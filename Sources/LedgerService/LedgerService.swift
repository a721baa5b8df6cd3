import Hummingbird
import LedgerLog
import LedgerProjection
import Logging
import NIOCore
import ServiceLifecycle

/// `ledger serve`: the ledger over HTTP. Every route is a thin adapter over the library: the body
/// is decoded and validated by the code `ledger append` uses and appended by ``EventStore``; reads
/// come from the read models and the audit from ``AuditRun``.
public struct LedgerService: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        /// 0 picks a free port (see ``LedgerService/run(onListening:)``).
        public var port = 8080
        public var limits = ServiceLimits()
        public var tokens = TokenTable()
        public var notifications = NotificationConfiguration()
        /// `/readyz` fails when the read models are further than this behind the head.
        public var maximumProjectorLag: Int64 = 10_000
        /// Runs the projector inside the service on this store (opened as the projector role).
        public var projector: EventStore?
        /// How often the service seals events a writer committed as pending and left unsealed (a
        /// writer that stopped between its commit and its seal); nil: never (appends seal them too).
        public var sealInterval: Duration? = .seconds(2)
        /// How much memory `GET /v1/audit`'s fold, and the projector's, keep their views in (``FoldMemory``).
        public var foldMemory = FoldMemory.automatic
        public init() {}
    }

    public let configuration: Configuration
    public let stores: LedgerStores
    public let metrics: ServiceMetrics
    public let gate = AppendGate()
    let watch: HeadWatch
    let logger: Logger

    public init(configuration: Configuration, stores: LedgerStores, logger: Logger = Logger(label: "ledger-serve")) {
        self.configuration = configuration
        self.stores = stores
        self.metrics = ServiceMetrics()
        self.watch = HeadWatch(store: stores.reader)
        self.logger = logger
    }

    /// Every route of the service (the OpenAPI document lists the same).
    public func router() -> Router<LedgerRequestContext> {
        let router = Router(context: LedgerRequestContext.self)
        let known = KnownRoutes()
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.add(middleware: ProblemMiddleware(known: known))
        let tokens = configuration.tokens
        let events = EventsRoutes(
            stores: stores, limits: configuration.limits, metrics: metrics, gate: gate, watch: watch)
        let reads = ReadRoutes(stores: stores, metrics: metrics, foldMemory: configuration.foldMemory)
        let health = HealthRoutes(
            stores: stores, metrics: metrics, maximumProjectorLag: configuration.maximumProjectorLag)
        let notifications = NotificationRoutes(
            stores: stores, configuration: configuration.notifications,
            limit: configuration.limits.maximumNotificationBytes, metrics: metrics, gate: gate,
            logger: logger)
        router.get("/healthz", use: health.healthz)
        router.get("/readyz", use: health.readyz)
        router.get("/metrics", use: health.metricsText)
        router.group("/v1/events").add(middleware: LimitMiddleware(bytes: configuration.limits.maximumBodyBytes))
            .add(middleware: TokenMiddleware(table: tokens, scope: .append)).post(use: events.append)
        let read = router.group("/v1").add(middleware: TokenMiddleware(table: tokens, scope: .read))
        read.get("events", use: events.read)
        read.get("streams/{id}", use: events.stream)
        read.get("orders/{id}", use: reads.entity(.order))
        read.get("users/{id}", use: reads.entity(.user))
        router.group("/v1/audit").add(middleware: TokenMiddleware(table: tokens, scope: .audit)).get(use: reads.audit)
        let notify = router.group("/v1/notifications").add(
            middleware: LimitMiddleware(bytes: configuration.limits.maximumNotificationBytes))
        notify.post("appstore", use: notifications.appStore)
        notify.post("googleplay", use: notifications.googlePlay)
        notify.post("wechatpay", use: notifications.weChatPay)
        known.set(router.routes.map { (path: "\($0.path)", method: $0.method.rawValue) })
        return router
    }

    /// The Hummingbird application, with a service that closes the stores after the server has
    /// drained (the server stops accepting, finishes the requests in flight, then the stores close).
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol
    {
        let metrics = metrics, logger = logger
        var app = Application(
            router: router(),
            server: .guardedHTTP1(configuration.limits.timeouts) { which in
                metrics.timedOut(which)
                logger.info("connection closed: the client took too long", metadata: ["deadline": "\(which)"])
            },
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "ledger",
                availableConnectionsDelegate: .maximum(configuration.limits.maximumConnections, logger: logger)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        app.addServices(StoresService(stores: stores, gate: gate))
        if let interval = configuration.sealInterval {
            app.addServices(SealerService(store: stores.writer, interval: interval, logger: logger))
        }
        if let projector = configuration.projector {
            app.addServices(ProjectorService(store: projector, memory: configuration.foldMemory, logger: logger))
        }
        return app
    }

    /// What runs the service, in the order a service group starts them (and stops them in
    /// reverse): the application, then what ends the live tails when a shutdown begins.
    public func services(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> [any Service] {
        [application(onListening: onListening), TailStopper(watch: watch)]
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully: no new connections, the live tails
    /// end, the requests in flight (appends included) finish, then the database connections close.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services(onListening: onListening),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
