import Foundation
import LedgerCore
import LedgerDomain

/// Builds a scenario's log the way the services would write it: fixed ids and times, binding
/// decided by `Binding.decide` from the orders and client reports seen so far, grants taken from
/// the catalogue entry of the verified product.
struct Script {
    let number: Int
    var now: Timestamp
    var facts: [(fact: Fact, at: Timestamp)] = []
    var redeliveries: [Redelivery] = []
    var checkpoints: [Checkpoint] = []

    private var orderList: [OrderCreated] = []
    private var paidOrders: Set<String> = []
    private var closedOrders: Set<String> = []
    private var reports: [String: [ClientCallbackReceived]] = [:]
    private var verified: [String: PaymentVerified] = [:]
    private var bindings: [String: TransactionBound] = [:]
    private var subscriptionUser: [String: String] = [:]
    private var grantCount = 0

    init(_ number: Int, products: [String], channel: Channel = .appstore) {
        self.number = number
        self.now = Scenarios.day0
        for id in products {
            guard let d = Catalogue.definition(id, channel) else { preconditionFailure("no catalogue product \(id)") }
            facts.append((.productDefined(d), d.validFrom))
        }
    }

    // MARK: ids and time

    var nn: String { Script.pad(number, 2) }
    func user(_ name: String) -> String { "u\(nn)-\(name)" }
    func order(_ k: Int) -> String { "o\(nn)-\(k)" }
    /// An App Store transaction id (numeric, as Apple's are).
    func tx(_ k: Int) -> String { "2000\(nn)0000\(k)" }
    /// A WeChat Pay transaction_id.
    /// A Google Play order id.
    func gpa(_ k: Int) -> String { "GPA.33\(nn)-0000-0000-0000\(k)" }
    func wxTx(_ k: Int) -> String { "4200\(nn)2026030100\(k)" }
    func token(_ k: Int) -> UUID { UUID(uuidString: "a0000000-00\(nn)-4000-8000-\(Script.pad(k, 12))")! }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    mutating func wait(days: Int64 = 0, hours: Int64 = 0, minutes: Int64 = 0, seconds: Int64 = 0) {
        now = now.adding(days: days, hours: hours, minutes: minutes, seconds: seconds)
    }

    /// Moves the clock to `day` days after day 0 plus an offset (never backwards).
    mutating func at(day: Int64, hours: Int64 = 0, minutes: Int64 = 0, seconds: Int64 = 0) {
        let t = Scenarios.day0.adding(days: day, hours: hours, minutes: minutes, seconds: seconds)
        precondition(t >= now, "scenario \(number): time goes backwards to \(t)")
        now = t
    }

    // MARK: facts

    @discardableResult
    mutating func add(_ fact: Fact) -> Int {
        facts.append((fact, now))
        return facts.count - 1
    }

    /// The fact at `index` arrives again, now: the log stores it once.
    mutating func redeliver(_ index: Int, _ note: String) {
        redeliveries.append(Redelivery(index: index, afterFactCount: facts.count, at: now, note: note))
    }

    mutating func checkpoint(_ label: String, _ expected: Expectation) {
        checkpoints.append(Checkpoint(label: label, factCount: facts.count, expected: expected))
    }

    mutating func createOrder(
        _ id: String, user: String, product: String, channel: Channel = .appstore, token: String? = nil,
        app: String? = nil
    ) {
        let price = Catalogue.definition(product, channel)?.price ?? Money(minorUnits: 0, currency: Catalogue.cny)
        let f = OrderCreated(
            orderId: id, userId: user, channel: channel, productId: product, price: price, accountToken: token, app: app
        )
        orderList.append(f)
        add(.orderCreated(f))
    }

    mutating func launch(_ orderId: String, channel: Channel = .appstore, attempt: Int64 = 1, prepayId: String? = nil) {
        add(.paymentLaunched(PaymentLaunched(orderId: orderId, channel: channel, attempt: attempt, prepayId: prepayId)))
    }

    mutating func close(_ orderId: String, _ reason: CloseReason) {
        closedOrders.insert(orderId)
        add(.orderClosed(OrderClosed(orderId: orderId, reason: reason)))
    }

    @discardableResult
    mutating func callback(
        user: String, tx: String?, product: String, state: CallbackState = .purchased, channel: Channel = .appstore,
        order: String? = nil, username: String? = nil, device: String? = nil, report: String? = nil
    ) -> Int {
        let f = ClientCallbackReceived(
            channel: channel, userId: user, orderId: order, transactionId: tx, productId: product, state: state,
            applicationUsername: username, deviceId: device, reportId: report)
        if let tx { reports[tx, default: []].append(f) }
        return add(.clientCallbackReceived(f))
    }

    @discardableResult
    mutating func notify(
        _ id: String, _ type: String, _ subtype: String? = nil, channel: Channel = .appstore, tx: String? = nil,
        original: String? = nil, tradeState: String? = nil, outTradeNo: String? = nil
    ) -> Int {
        add(
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: channel, notificationId: id, type: NotificationType(raw: type),
                    subtype: subtype.map { NotificationType(raw: $0) },
                    signedAt: now, transactionId: tx, originalTransactionId: original, tradeState: tradeState,
                    outTradeNo: outTradeNo,
                    rawDigest: SHA256.digest(Array("\(channel.rawValue):\(id)".utf8)))))
    }

    @discardableResult
    mutating func verify(
        _ tx: String, product: String, channel: Channel = .appstore, original: String? = nil,
        purchased: Timestamp? = nil,
        expires: Timestamp? = nil, token: UUID? = nil, with details: (inout PaymentVerified) -> Void = { _ in }
    ) -> Int {
        let price = Catalogue.definition(product, channel)?.price ?? Money(minorUnits: 0, currency: Catalogue.cny)
        var f = PaymentVerified(
            channel: channel, transactionId: tx, originalTransactionId: original, productId: product,
            purchaseDate: purchased ?? now, expiresDate: expires, price: price, appAccountToken: token,
            rawDigest: SHA256.digest(Array("\(channel.rawValue):tx:\(tx)".utf8)))
        details(&f)
        verified[tx] = f
        if let original, original != tx, let u = subscriptionUser[original] { subscriptionUser[tx] = u }
        return add(.paymentVerified(f))
    }

    mutating func verificationFailed(
        _ tx: String, code: Int64, retryable: Bool, attempt: Int64, channel: Channel = .appstore
    ) {
        add(
            .verificationFailed(
                VerificationFailed(
                    channel: channel, transactionId: tx, code: code, retryable: retryable, attempt: attempt)))
    }

    /// What fulfilment does with a verified transaction: ask `Binding.decide`, append the decision
    /// (creating the order first when it decides so). Returns the decision.
    @discardableResult
    mutating func bind(_ tx: String, outTradeNo: String? = nil) -> BindingDecision {
        guard let t = verified[tx] else { preconditionFailure("scenario \(number): bind \(tx) before it is verified") }
        let candidates = orderList.map {
            OrderCandidate(
                orderId: $0.orderId, userId: $0.userId, channel: $0.channel, productId: $0.productId,
                accountToken: $0.accountToken, app: $0.app,
                isOpen: !paidOrders.contains($0.orderId) && !closedOrders.contains($0.orderId))
        }
        let decision = Binding.decide(
            transaction: t, callbacks: reports[tx] ?? [], outTradeNo: outTradeNo, orders: candidates,
            newOrderId: { _ in "o\(nn)-after-\(tx)" })
        switch decision {
        case .bound(let b):
            record(b)
        case .createOrderAfterPayment(let b):
            if let id = b.orderId { createOrder(id, user: b.userId, product: t.productId, channel: t.channel) }
            record(b)
        case .unbound:
            break
        }
        return decision
    }

    private mutating func record(_ b: TransactionBound) {
        bindings[b.transactionId] = b
        if let o = b.orderId { paidOrders.insert(o) }
        if let original = verified[b.transactionId]?.originalTransactionId { subscriptionUser[original] = b.userId }
        add(.transactionBound(b))
    }

    /// Fulfilment grants what the verified product gives, to the bound user (a renewal: to its
    /// subscription's user).
    /// (`entitlement`, `quantity`, `user`: what fulfilment gave instead, for a scenario of a mistake.)
    mutating func grant(_ tx: String, entitlement: Entitlement? = nil, quantity: Int64? = nil, to user: String? = nil) {
        guard let t = verified[tx], let def = Catalogue.definition(t.productId, t.channel) else {
            preconditionFailure("scenario \(number): grant \(tx) before it is verified")
        }
        let b = bindings[tx]
        guard let userId = user ?? b?.userId ?? subscriptionUser[tx] else {
            preconditionFailure("scenario \(number): grant \(tx) to nobody")
        }
        grantCount += 1
        add(
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(grantCount)", userId: userId, channel: t.channel, transactionId: tx,
                    orderId: b?.orderId, entitlement: entitlement ?? def.entitlement, quantity: quantity ?? t.quantity,
                    app: t.app)))
    }

    /// Fulfilment takes back the grants of `tx` (`units` of them: part), naming the transaction's app.
    mutating func revoke(
        _ tx: String, user: String, reason: RevocationReason, channel: Channel = .appstore, units: Int64? = nil,
        id: String? = nil
    ) {
        add(
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: user, channel: channel, transactionId: tx, reason: reason, units: units,
                    revocationId: id, app: verified[tx]?.app)))
    }

    mutating func spend(_ id: String, user: String, amount: Int64, item: String) {
        add(.coinsSpent(CoinsSpent(spendId: id, userId: user, amount: amount, item: item)))
    }

    mutating func refund(_ tx: String, id: String, reason: String, channel: Channel = .appstore) {
        guard let t = verified[tx] else { preconditionFailure("scenario \(number): refund of unverified \(tx)") }
        add(
            .refunded(
                Refunded(
                    channel: channel, transactionId: tx, refundId: id, amount: t.price, refundedAt: now, reason: reason)
            ))
    }

    mutating func renewed(_ tx: String, original: String, product: String, purchased: Timestamp, expires: Timestamp) {
        add(
            .subscriptionRenewed(
                SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: original, transactionId: tx, productId: product,
                    purchaseDate: purchased, expiresDate: expires,
                    price: Catalogue.definition(product)?.price)))
    }
}

extension Timestamp {
    func adding(days: Int64 = 0, hours: Int64 = 0, minutes: Int64 = 0, seconds: Int64 = 0) -> Timestamp {
        Timestamp(
            microsecondsSince1970: microseconds + (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1_000_000)
    }
}

/// The product catalogue the scenarios share (identical facts in every scenario, so several
/// scenarios appended to one log keep one definition per product).
public enum Catalogue {
    static let cny = Currency("CNY")!
    public static let validFrom = Timestamp("2026-01-01T00:00:00Z")!

    public static let definitions: [ProductDefinition] = [
        ProductDefinition(
            channel: .appstore, storeProductId: "coins_60", entitlement: .coins(60), version: 1, validFrom: validFrom,
            price: Money(minorUnits: 600, currency: cny)),
        ProductDefinition(
            channel: .appstore, storeProductId: "coins_300", entitlement: .coins(300), version: 1, validFrom: validFrom,
            price: Money(minorUnits: 3000, currency: cny)),
        ProductDefinition(
            channel: .appstore, storeProductId: "no_ads", entitlement: .feature("no_ads"), version: 1,
            validFrom: validFrom,
            price: Money(minorUnits: 1200, currency: cny)),
        ProductDefinition(
            channel: .appstore, storeProductId: "vip.month",
            entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 1), version: 1,
            validFrom: validFrom, price: Money(minorUnits: 2500, currency: cny)),
        ProductDefinition(
            channel: .appstore, storeProductId: "vip.month.premium",
            entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 2), version: 1,
            validFrom: validFrom, price: Money(minorUnits: 4000, currency: cny)),
        ProductDefinition(
            channel: .appstore, storeProductId: "vip.quarter", entitlement: .period(entitlement: "vip", days: 90),
            version: 1,
            validFrom: validFrom, price: Money(minorUnits: 6800, currency: cny)),
        ProductDefinition(
            channel: .wechat, storeProductId: "coins_300", entitlement: .coins(300), version: 1, validFrom: validFrom,
            price: Money(minorUnits: 3000, currency: cny)),
        ProductDefinition(
            channel: .googleplay, storeProductId: "coins_60", entitlement: .coins(60), version: 1, validFrom: validFrom,
            price: Money(minorUnits: 600, currency: cny)),
        ProductDefinition(
            channel: .googleplay, storeProductId: "vip_weekly",
            entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 7, rank: 1), version: 1,
            validFrom: validFrom, price: Money(minorUnits: 800, currency: cny)),
        ProductDefinition(
            channel: .googleplay, storeProductId: "vip_weekly_plus",
            entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 7, rank: 2), version: 1,
            validFrom: validFrom, price: Money(minorUnits: 1500, currency: cny)),
    ]

    public static func definition(_ id: String, _ channel: Channel = .appstore) -> ProductDefinition? {
        definitions.first { $0.storeProductId == id && $0.channel == channel }
    }
}
