import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerNotifications
import LedgerPostgres
import Logging

/// Which stores the service takes notifications from; an endpoint without a configuration answers 404.
public struct NotificationConfiguration: Sendable {
    public var appStore: AppleVerifier?
    public var googlePlay: GooglePlayVerifier?
    /// Reads a Google subscription's price, order and expiry for its notification; without it those
    /// notifications await the verification the backend appends.
    public var googlePlayAPI: GooglePlayAPI?
    public var weChatPay: WeChatPayVerifier?
    public init(
        appStore: AppleVerifier? = nil, googlePlay: GooglePlayVerifier? = nil, googlePlayAPI: GooglePlayAPI? = nil,
        weChatPay: WeChatPayVerifier? = nil
    ) {
        self.appStore = appStore
        self.googlePlay = googlePlay
        self.googlePlayAPI = googlePlayAPI
        self.weChatPay = weChatPay
    }
}

/// `POST /v1/notifications/{appstore,googleplay,wechatpay}`: verify, keep the raw payload, append
/// the facts the notification implies (deduplicated on the store's notification id). A refused
/// notification writes nothing; a verified one is always kept and answered 200, translated or not
/// (what could not be translated is recorded on its notification fact, and counted).
struct NotificationRoutes {
    let stores: LedgerStores
    let configuration: NotificationConfiguration
    let limit: Int
    let metrics: ServiceMetrics
    let gate: AppendGate
    var logger = Logger(label: "ledger-serve")

    /// These routes logging to the request's logger (its id on every line).
    private func logging(_ context: LedgerRequestContext) -> NotificationRoutes {
        var routes = self
        routes.logger = context.logger
        return routes
    }

    func appStore(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        guard let verifier = configuration.appStore else { throw notConfigured("appstore") }
        let body = try await collect(request)
        let facts = try await refusing("appstore") {
            let verified = try await verifier.verifyNotification(body: body)
            return NotificationTranslator.appStore(verified, raw: body)
        }
        return try await logging(context).store(facts, route: "appstore")
    }

    func googlePlay(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        guard let verifier = configuration.googlePlay else { throw notConfigured("googleplay") }
        let body = try await collect(request)
        let authorization = request.headers[.authorization]
        let verified = try await refusing("googleplay") {
            try verifier.verify(authorization: authorization, body: body)
        }
        let routes = logging(context)
        let (read, failure) = await routes.googleRead(verified)
        let (product, productFailure) = await routes.googleProductRead(verified)
        let (items, itemsFailure) = await routes.googleItemsRead(verified)
        // A request cancelled while it read (the service stopping) writes nothing: the store
        // delivers the notification again, and it is read then. Stored, it would await a
        // verification for good, with "cancelled" as the read's failure.
        try Task.checkCancellation()
        return try await routes.store(
            NotificationTranslator.googlePlay(
                verified, raw: body, subscription: read, product: product, itemsProduct: items,
                readFailure: failure ?? productFailure ?? itemsFailure), route: "googleplay")
    }

    /// The plan in force after a SUBSCRIPTION_ITEMS_CHANGED, from the v2 read.
    private func googleItemsRead(_ v: GooglePlayVerifier.Verified) async -> (String?, String?) {
        guard let api = configuration.googlePlayAPI, let s = v.notification["subscriptionNotification"],
            s["notificationType"]?.intValue == 17,
            let token = s["purchaseToken"]?.stringValue, let package = v.notification["packageName"]?.stringValue
        else { return (nil, nil) }
        return await reading(v) { () async throws(GooglePlayAPI.APIError) in
            try await api.subscriptionProduct(package: package, token: token)
        }
    }

    /// The Play Developer API's read of the one-time purchase a ONE_TIME_PRODUCT_PURCHASED names.
    private func googleProductRead(_ v: GooglePlayVerifier.Verified) async -> (GooglePlayProductRead?, String?) {
        guard let api = configuration.googlePlayAPI, let o = v.notification["oneTimeProductNotification"],
            o["notificationType"]?.intValue == 1,
            let token = o["purchaseToken"]?.stringValue, let sku = o["sku"]?.stringValue,
            let package = v.notification["packageName"]?.stringValue
        else { return (nil, nil) }
        return await reading(v) { () async throws(GooglePlayAPI.APIError) in
            try await api.product(package: package, productId: sku, token: token)
        }
    }

    /// A read, or why it failed (logged and counted).
    private func reading<T>(
        _ v: GooglePlayVerifier.Verified, _ read: () async throws(GooglePlayAPI.APIError) -> T
    ) async -> (T?, String?) {
        do {
            return (try await read(), nil)
        } catch {
            // Cancelled: no failure of the API's (the request writes nothing; `googlePlay`).
            if Task.isCancelled { return (nil, nil) }
            metrics.notification("googleplay", outcome: "read-failed")
            logger.warning(
                "the Play Developer API read failed",
                metadata: ["messageId": "\(Echo.shown(v.messageId, limit: 80))", "error": "\(error)"])
            return (nil, error.description)
        }
    }

    /// The Play Developer API's read of the subscription a purchase, renewal, recovery, grace,
    /// price-change or deferral notification names (nil without an API configured). A failed read is logged and
    /// recorded on the notification, which then awaits its verification: never a 5xx, so Pub/Sub
    /// does not redeliver what is kept.
    private func googleRead(_ v: GooglePlayVerifier.Verified) async -> (GooglePlaySubscriptionRead?, String?) {
        guard let api = configuration.googlePlayAPI, let s = v.notification["subscriptionNotification"],
            let code = s["notificationType"]?.intValue, [1, 2, 4, 6, 8, 9, 19, 22].contains(code),
            let token = s["purchaseToken"]?.stringValue,
            let product = s["subscriptionId"]?.stringValue, let package = v.notification["packageName"]?.stringValue
        else { return (nil, nil) }
        return await reading(v) { () async throws(GooglePlayAPI.APIError) in
            try await api.subscription(
                package: package, subscriptionId: product, token: token, pricing: [1, 2, 4].contains(code))
        }
    }

    func weChatPay(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        guard let verifier = configuration.weChatPay else { throw notConfigured("wechatpay") }
        let body = try await collect(request)
        let h = request.headers
        let headers = WeChatPayVerifier.Headers(
            timestamp: h[.init("Wechatpay-Timestamp")!], nonce: h[.init("Wechatpay-Nonce")!],
            signature: h[.init("Wechatpay-Signature")!], serial: h[.init("Wechatpay-Serial")!])
        let verified = try await refusing("wechatpay") { try verifier.verify(headers: headers, body: body) }
        let order = try await weChatOrder(verified)
        return try await logging(context).store(
            NotificationTranslator.weChatPay(verified, raw: body, headers: headers, order: order), route: "wechatpay")
    }

    /// The order a WeChat payment's `out_trade_no` names, as its OrderCreated in the log says
    /// (read from the log, not the read models, which may lag); nil when the log has none.
    private func weChatOrder(_ v: WeChatPayVerifier.Verified) async throws -> NotificationTranslator.WeChatOrder? {
        guard v.envelope["event_type"]?.stringValue == "TRANSACTION.SUCCESS",
            let id = v.resource["out_trade_no"]?.stringValue,
            !id.isEmpty, id.utf8.count <= 200
        else { return nil }
        for event in try await stores.reader.readStream("order:\(id)", limit: 20)
        where event.type == FactTypes.orderCreated.name {
            if case .orderCreated(let o)? = try? FactCatalogue.decode(event), o.channel == .wechat {
                return .init(productId: o.productId, userId: o.userId)
            }
        }
        return nil
    }

    private func collect(_ request: Request) async throws -> [UInt8] {
        var request = request
        do {
            return Array(try await request.collectBody(upTo: limit).readableBytesView)
        } catch let e as HTTPError where e.status == .contentTooLarge {
            throw Problem.tooLarge(limit: limit)
        }
    }

    private func notConfigured(_ store: String) -> Problem {
        Problem(
            .notFound, "not-configured", "This store's notifications are not configured",
            detail:
                "the service has no \(store) verification configured, so it takes no \(store) notifications; nothing was written"
        )
    }

    /// Runs verification; a refusal becomes a problem naming why (never the payload's secrets).
    private func refusing<T>(_ store: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let r as NotificationRefusal {
            let status: HTTPResponse.Status
            switch r.kind {
            case .malformed: status = .badRequest
            case .badToken: status = .unauthorized
            case .wrongApp, .wrongEnvironment: status = .unprocessableContent
            case .replay: status = .conflict
            case .notConfigured: status = .notFound
            default: status = .forbidden
            }
            metrics.notification(store, outcome: r.kind.rawValue)
            throw Problem(
                status, r.kind.rawValue, "The notification was refused", detail: r.message + "; nothing was written")
        }
    }

    /// Keeps the raw payload, then appends the facts in one batch. A fact already stored with other
    /// content under its natural key (a payment verified earlier by another path, with its own
    /// evidence) is left out and named; the notification itself is always part of the batch.
    private func store(_ n: NotificationFacts, route: String) async throws -> Response {
        try await stores.writer.keep(
            RawPayload(
                channel: n.channel.rawValue, id: n.notificationId, digest: n.rawDigest, raw: n.raw,
                headersJSON: n.rawHeaders.compactText))
        let metadata = EventMetadata(
            correlationId: "\(n.channel.rawValue):notification:\(n.notificationId)", source: "ledger-serve:\(route)")
        var events = n.facts.enumerated().map { i, f in
            f.newEvent(
                occurredAt: n.occurredAt,
                eventId: EventsRoutes.eventId(
                    key: "\(n.channel.rawValue):\(n.notificationId)", caller: "notification", index: i),
                metadata: metadata)
        }
        var leftOut: [String] = []
        while true {
            do {
                let batch = events
                let appended = try await gate.run { try await stores.writer.append(batch) }
                let stored = appended.filter { !$0.alreadyStored }.count
                metrics.notification(route, outcome: stored == 0 ? "duplicate" : "appended")
                if stored > 0, let why = n.untranslated {
                    // Kept, and answered 200 so the store does not redeliver it; listed by the audit until completed.
                    metrics.notification(route, outcome: "untranslated")
                    logger.warning(
                        "notification kept untranslated",
                        metadata: [
                            "store": "\(route)", "notificationId": "\(Echo.shown(n.notificationId, limit: 80))",
                            "reason": "\(why)",
                        ])
                }
                metrics.appendedEvents.increment(by: stored)
                let body = JSONValue.makeObject([
                    ("notificationId", .string(n.notificationId)), ("rawDigest", .string(n.rawDigest)),
                    ("appended", .int(Int64(stored))), ("alreadyStored", .int(Int64(appended.count - stored))),
                    (
                        "events",
                        .array(
                            zip(events, appended).map { e, a in
                                .makeObject([
                                    ("type", .string(e.type)), ("stream", .string(a.stream)),
                                    ("position", .int(a.position)), ("alreadyStored", .bool(a.alreadyStored)),
                                ])
                            })
                    ),
                    ("leftOut", .array(leftOut.map(JSONValue.string))),
                    ("untranslated", n.untranslated.map(JSONValue.string) ?? .null),
                ])
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: body.compactText + "\n")))
            } catch LedgerError.idempotencyConflict(let key?, _, _, _)
                where events.count > 1 && key != events[0].idempotencyKey
            {
                leftOut.append(key)
                events.removeAll { $0.idempotencyKey == key }
            }
        }
    }
}
