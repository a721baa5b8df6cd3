import Foundation
import LedgerCore
import LedgerDomain

// MARK: - Fault specification

/// Which audit findings (domain.md section 6) to inject into a simulated history, and how often:
/// a rate is the probability that one purchase carries that fault. At most one fault per purchase.
///
/// Text form: `none`, `all=0.01`, `double-grant=0.02,missing-grant=0.01` (later entries override
/// earlier ones, so `all=0.01,stale-order=0` works). `chain-broken` is accepted and kept for the CLI,
/// which tampers with the stored log for it; the simulator itself never injects it.
public struct FaultSpec: Sendable, Hashable, CustomStringConvertible {
    public private(set) var rates: [FindingKind: Double]

    /// The kinds the simulator injects into the facts themselves.
    public static let injectable: [FindingKind] = FindingKind.allCases.filter { $0 != .chainBroken }
    public static let none = FaultSpec()

    public init() { rates = [:] }

    /// Rates by kind; each must be in 0...1 and the injectable ones must add up to at most 1.
    public init(rates: [FindingKind: Double]) throws {
        for (k, r) in rates where !(r.isFinite && r >= 0 && r <= 1) {
            throw FaultSpecError("bad rate \(r) for \(k.rawValue): must be a number between 0 and 1")
        }
        let total = FaultSpec.injectable.reduce(0.0) { $0 + (rates[$1] ?? 0) }
        if total > 1 + 1e-9 {
            throw FaultSpecError("fault rates add up to \(total) per purchase; at most 1 (one fault per purchase)")
        }
        self.rates = rates.filter { $0.value > 0 }
    }

    public func rate(_ kind: FindingKind) -> Double { rates[kind] ?? 0 }
    public var isNone: Bool { rates.isEmpty }

    public var description: String {
        let parts = FindingKind.allCases.compactMap { k in rates[k].map { "\(k.rawValue)=\($0)" } }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }

    /// Parses `none`, `all=RATE` or a comma-separated list of `kind=RATE`.
    public static func parse(_ text: String) throws -> FaultSpec {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed.lowercased() == "none" { return FaultSpec() }
        var rates: [FindingKind: Double] = [:]
        let known = (["all", "none"] + FindingKind.allCases.map(\.rawValue)).joined(separator: ", ")
        for raw in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { throw FaultSpecError("empty entry in fault spec \"\(text)\"") }
            let pieces = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            if name == "none" { throw FaultSpecError("\"none\" cannot be combined with other faults") }
            guard name == "all" || FindingKind(rawValue: name) != nil else {
                throw FaultSpecError("unknown fault kind \"\(name)\" (known: \(known))")
            }
            guard pieces.count == 2 else { throw FaultSpecError("fault kind \"\(name)\" has no rate: write \(name)=0.01") }
            let rateText = pieces[1].trimmingCharacters(in: .whitespaces)
            guard let rate = Double(rateText), rate.isFinite, rate >= 0, rate <= 1 else {
                throw FaultSpecError("bad rate \"\(rateText)\" for \(name): must be a number between 0 and 1")
            }
            if name == "all" {
                for k in FindingKind.allCases { rates[k] = rate }
            } else if let k = FindingKind(rawValue: name) {
                rates[k] = rate
            }
        }
        return try FaultSpec(rates: rates)
    }
}

public struct FaultSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A finding the simulator injected on purpose: the audit must report exactly these.
public struct ExpectedFinding: Hashable, Sendable, CustomStringConvertible {
    public var kind: FindingKind
    public var channel: Channel?
    public var transactionId: String?
    public var orderId: String?
    public var userId: String?

    public init(kind: FindingKind, channel: Channel?, transactionId: String?, orderId: String?, userId: String?) {
        self.kind = kind; self.channel = channel; self.transactionId = transactionId; self.orderId = orderId; self.userId = userId
    }

    /// Built exactly like `Finding.key`.
    public var key: String {
        "\(kind.rawValue)|\(channel?.rawValue ?? "")|\(transactionId ?? "")|\(orderId ?? "")|\(userId ?? "")"
    }

    public var description: String { key }
}

// MARK: - Simulator

/// A realistic, deterministic purchase history of `users` users over `days` days across the App
/// Store (StoreKit 1 with applicationUsername, StoreKit 2 with appAccountToken), Google Play and
/// WeChat Pay, written the way the services would write it: orders, launches, client callbacks
/// (lost, repeated, re-delivered at the next launch, with nil applicationUsername), interrupted
/// purchases, purchases from the phone's settings page, 21005 verification retries, duplicated
/// WeChat notifications and active queries, subscriptions with renewals, lost renewal
/// notifications found by polling, billing retry and grace, upgrades, cancellations, refund
/// requests, refunds and refund reversals, coins spent. Binding is decided by `Binding.decide`,
/// grants follow the catalogue.
///
/// With `FaultSpec.none` the audit must find nothing; each injected fault produces exactly one
/// finding, listed in `groundTruth`. The log ends two days after the last purchase activity, so
/// every window has passed (stale orders are injected on purpose only).
public struct Simulator: Sendable {
    public let users: Int
    public let days: Int
    public let seed: UInt64
    public let faults: FaultSpec
    /// The history in log order, each fact with its `occurredAt`. Idempotency keys are unique.
    public let facts: [(fact: Fact, at: Timestamp)]
    /// The findings injected, one per injected fault (a `Set` of their keys is what the audit must report).
    public let groundTruth: [ExpectedFinding]
    /// How many purchases were started (the denominator of the fault rates).
    public let purchases: Int
    /// How many faults of each kind were injected.
    public let injected: [FindingKind: Int]

    /// Day 0 of every simulated history.
    public static let start = Timestamp("2026-03-02T00:00:00Z")!
    static let catalogueFrom = Timestamp("2026-02-01T00:00:00Z")!
    static let cny = Currency("CNY")!

    static func product(_ c: Channel, _ id: String, _ e: Entitlement, _ fen: Int64) -> ProductDefinition {
        ProductDefinition(channel: c, storeProductId: id, entitlement: e, version: 1, validFrom: catalogueFrom,
                          price: Money(minorUnits: fen, currency: cny))
    }

    static func sub(_ days: Int64, rank: Int64) -> Entitlement { .subscription(entitlement: "vip", group: "vip", periodDays: days, rank: rank) }

    /// The catalogue every simulated history starts with.
    public static let catalogue: [ProductDefinition] = [
        product(.appstore, "com.sim.coins60", .coins(60), 600),
        product(.appstore, "com.sim.coins300", .coins(300), 3000),
        product(.appstore, "com.sim.noads", .feature("no_ads"), 1800),
        product(.appstore, "com.sim.vip.week", sub(7, rank: 1), 1200),
        product(.appstore, "com.sim.vip.week.plus", sub(7, rank: 2), 1800),
        product(.appstore, "com.sim.vip.quarter", .period(entitlement: "vip", days: 90), 6800),
        product(.googleplay, "coins_120", .coins(120), 1200),
        product(.googleplay, "vip_weekly", sub(7, rank: 1), 1200),
        product(.wechat, "wx_coins_300", .coins(300), 3000),
        product(.wechat, "wx_vip_quarter", .period(entitlement: "vip", days: 90), 6800),
    ]

    static func def(_ c: Channel, _ id: String) -> ProductDefinition {
        guard let d = catalogue.first(where: { $0.channel == c && $0.storeProductId == id }) else { preconditionFailure("no product \(c) \(id)") }
        return d
    }

    public init(users: Int, days: Int, seed: UInt64, faults: FaultSpec) {
        self.users = max(1, users); self.days = max(1, days); self.seed = seed; self.faults = faults
        var items: [SimItem] = []
        var order = 0
        for d in Self.catalogue {
            items.append(SimItem(t: d.validFrom.microseconds, user: -1, seq: order, fact: .productDefined(d)))
            order += 1
        }
        var truth: [ExpectedFinding] = []
        var purchases = 0
        var injected: [FindingKind: Int] = [:]
        let horizon = Self.start.microseconds + Int64(self.days) * Sim.day
        for u in 0..<self.users {
            var sim = UserSim(index: u, seed: seed, horizon: horizon, faults: faults)
            sim.run(days: self.days)
            items.append(contentsOf: sim.resolvedItems())
            truth.append(contentsOf: sim.truth)
            purchases += sim.purchases
            for (k, n) in sim.injected { injected[k, default: 0] += n }
        }
        items.sort { ($0.t, $0.user, $0.seq) < ($1.t, $1.user, $1.seq) }
        // Trailing log time: two days after the last activity (every window has passed), marked by
        // an App Store TEST notification.
        let end = max(horizon, items.last?.t ?? horizon) + 2 * Sim.day
        let testId = "00000000-7e57-4000-8000-" + Script.pad(Int(seed % 1_000_000_000_000), 12)
        items.append(SimItem(t: end, user: Int.max, seq: 0, fact: .storeNotificationReceived(StoreNotificationReceived(
            channel: .appstore, notificationId: testId, type: NotificationType(raw: "TEST"),
            signedAt: Timestamp(microsecondsSince1970: end), rawDigest: Sim.digest("appstore:notification:\(testId)")))))
        self.facts = items.map { (fact: $0.fact, at: Timestamp(microsecondsSince1970: $0.t)) }
        self.groundTruth = truth
        self.purchases = purchases
        self.injected = injected
    }

    /// The history as events to append: deterministic event ids (from the seed and the index) and
    /// the writing service as metadata.
    public func events() -> [NewEvent] {
        facts.enumerated().map { i, f in
            var g = SplitMix64(seed: seed ^ (UInt64(i) &* 0x9E37_79B9_7F4A_7C15))
            let id = Sim.uuid(g.next(), UInt64(i))
            return f.fact.newEvent(occurredAt: f.at, eventId: id, metadata: EventMetadata(correlationId: "sim-\(seed)", source: Sim.source(f.fact)))
        }
    }
}

struct SimItem {
    var t: Int64
    var user: Int
    var seq: Int
    var fact: Fact
}

extension UUID {
    /// A version 4 UUID built from two numbers: `high` in the first 8 bytes, `unique` in the last 8
    /// (version and variant bits set), so it is deterministic, and unique whenever `unique` is.
    public init(high: UInt64, unique: UInt64) {
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { b[i] = UInt8(truncatingIfNeeded: high >> (8 * UInt64(i))) }
        for i in 0..<8 { b[15 - i] = UInt8(truncatingIfNeeded: unique >> (8 * UInt64(i))) }
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}

enum Sim {
    static let sec: Int64 = 1_000_000
    static let minute: Int64 = 60 * sec
    static let hour: Int64 = 60 * minute
    static let day: Int64 = 24 * hour

    static func digest(_ s: String) -> String { "sha256:" + SHA256.hash(Array(s.utf8)).hexString }

    /// A version 4 UUID whose last 8 bytes carry `unique` (so uniqueness never depends on chance).
    static func uuid(_ random: UInt64, _ unique: UInt64) -> UUID { UUID(high: random, unique: unique) }

    static func source(_ fact: Fact) -> String {
        switch fact {
        case .productDefined, .productChanged: return "catalogue"
        case .orderCreated, .paymentLaunched, .orderClosed: return "order-service"
        case .clientCallbackReceived: return "client"
        case .storeNotificationReceived(let f): return f.channel.rawValue
        case .paymentVerified, .verificationFailed: return "payment-callback-handler"
        case .transactionBound, .entitlementGranted, .entitlementRevoked: return "fulfilment"
        case .coinsSpent: return "wallet"
        default: return "store-notification-receiver"
        }
    }
}

// MARK: - One user's history

/// One user's purchases, generated in time order with its own random stream (users are independent,
/// so a history is the same whatever else is generated).
struct UserSim {
    let index: Int
    let uid: String
    let horizon: Int64
    let faults: FaultSpec
    var rng: SplitMix64

    var items: [SimItem] = []
    /// Spends decided at the end, when the balance is known at every moment.
    var spendIntents: [(t: Int64, seq: Int, fraction: Double)] = []
    var overspend = false
    var seq = 0
    var counter = 0
    var truth: [ExpectedFinding] = []
    var purchases = 0
    var injected: [FindingKind: Int] = [:]

    var orderList: [OrderCreated] = []
    var settled: Set<String> = []
    var reports: [String: [ClientCallbackReceived]] = [:]
    var hasStaleOrder = false
    var subscribed = false
    var ownsNoAds = false
    let device: String
    let androidDevice: String

    init(index: Int, seed: UInt64, horizon: Int64, faults: FaultSpec) {
        self.index = index
        self.uid = "u" + Script.pad(index, 6)
        self.horizon = horizon
        self.faults = faults
        var mix = SplitMix64(seed: seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        _ = mix.next()
        self.rng = SplitMix64(seed: mix.next())
        device = "iphone-\(Script.pad(index, 6))"
        androidDevice = "android-\(Script.pad(index, 6))"
    }

    // MARK: randomness

    mutating func unit() -> Double { Double(rng.next() >> 11) * (1.0 / 9_007_199_254_740_992.0) }
    mutating func chance(_ p: Double) -> Bool { unit() < p }
    mutating func int(_ r: ClosedRange<Int64>) -> Int64 { r.lowerBound + Int64(rng.next() % UInt64(r.upperBound - r.lowerBound + 1)) }
    mutating func pick<T>(_ options: [(T, Int)]) -> T {
        let total = options.reduce(0) { $0 + $1.1 }
        var r = Int(rng.next() % UInt64(total))
        for (v, w) in options { if r < w { return v }; r -= w }
        return options[options.count - 1].0
    }

    // MARK: ids

    mutating func next() -> Int { counter += 1; return counter }
    var nn: String { Script.pad(index, 6) }
    mutating func orderId() -> String { "o\(nn)-\(Script.pad(next(), 3))" }
    mutating func appleTx() -> String { "2000\(Script.pad(index, 7))\(Script.pad(next(), 4))" }
    mutating func googleOrder() -> String {
        let k = next()
        return "GPA.33\(Script.pad(index % 100, 2))-\(Script.pad((index / 100) % 10000, 4))-\(Script.pad(index / 1_000_000, 4))-\(Script.pad(k, 5))"
    }
    mutating func wechatTx() -> String { "42000019\(Script.pad(index, 8))2026\(Script.pad(next(), 8))" }
    mutating func uuid() -> UUID { Sim.uuid(rng.next(), (UInt64(index) << 24) | UInt64(next())) }
    mutating func purchaseToken() -> String {
        let a = String(rng.next(), radix: 36), b = String(rng.next(), radix: 36)
        return "\(a)\(b).AO-J1O\(nn)x\(next())"
    }
    mutating func appleNotificationId() -> String { uuid().uuidString.lowercased() }
    mutating func googleMessageId() -> String { "1\(Script.pad(index, 8))\(Script.pad(next(), 6))" }
    mutating func wechatNotificationId() -> String { "EV-2026\(nn)\(Script.pad(next(), 8))" }

    // MARK: emitting

    mutating func emit(_ t: Int64, _ f: Fact) {
        items.append(SimItem(t: t, user: index, seq: seq, fact: f))
        seq += 1
    }

    mutating func expect(_ kind: FindingKind, _ channel: Channel?, tx: String?, order: String?, user: String?) {
        truth.append(ExpectedFinding(kind: kind, channel: channel, transactionId: tx, orderId: order, userId: user))
        injected[kind, default: 0] += 1
    }

    mutating func notify(_ t: Int64, _ c: Channel, _ id: String, _ type: String, _ subtype: String? = nil, tx: String? = nil,
                         original: String? = nil, tradeState: String? = nil, outTradeNo: String? = nil) {
        emit(t, .storeNotificationReceived(StoreNotificationReceived(
            channel: c, notificationId: id, type: NotificationType(raw: type), subtype: subtype.map { NotificationType(raw: $0) },
            signedAt: Timestamp(microsecondsSince1970: t - int(0...3) * Sim.sec), transactionId: tx, originalTransactionId: original,
            tradeState: tradeState, outTradeNo: outTradeNo, rawDigest: Sim.digest("\(c.rawValue):notification:\(id)"))))
    }

    mutating func createOrder(_ t: Int64, _ id: String, _ d: ProductDefinition, token: String?, user: String? = nil) {
        let f = OrderCreated(orderId: id, userId: user ?? uid, channel: d.channel, productId: d.storeProductId,
                             price: d.price ?? Money(minorUnits: 0, currency: Simulator.cny), accountToken: token)
        orderList.append(f)
        emit(t, .orderCreated(f))
    }

    mutating func close(_ t: Int64, _ id: String, _ reason: CloseReason) {
        settled.insert(id)
        emit(t, .orderClosed(OrderClosed(orderId: id, reason: reason)))
    }

    mutating func callback(_ t: Int64, _ c: Channel, tx: String?, product: String, state: CallbackState = .purchased, order: String? = nil,
                           username: String? = nil, user: String? = nil, report: Bool = false) {
        let f = ClientCallbackReceived(channel: c, userId: user ?? uid, orderId: order, transactionId: tx, productId: product, state: state,
                                       applicationUsername: username, deviceId: c == .appstore ? device : androidDevice,
                                       reportId: report ? "r\(nn)-\(next())" : nil)
        if let tx { reports[tx, default: []].append(f) }
        emit(t, .clientCallbackReceived(f))
    }

    mutating func verified(_ t: Int64, _ d: ProductDefinition, tx: String, original: String? = nil, purchased: Int64,
                           expires: Int64? = nil, token: UUID? = nil) -> PaymentVerified {
        let f = PaymentVerified(channel: d.channel, transactionId: tx, originalTransactionId: original, productId: d.storeProductId,
                                purchaseDate: Timestamp(microsecondsSince1970: purchased),
                                expiresDate: expires.map { Timestamp(microsecondsSince1970: $0) },
                                price: d.price ?? Money(minorUnits: 0, currency: Simulator.cny), appAccountToken: token,
                                rawDigest: Sim.digest("\(d.channel.rawValue):tx:\(tx)"))
        emit(t, .paymentVerified(f))
        return f
    }

    /// Fulfilment's binding: `Binding.decide` over this user's orders and the reports so far.
    @discardableResult
    mutating func bind(_ t: Int64, _ v: PaymentVerified, outTradeNo: String? = nil) -> TransactionBound? {
        let candidates = orderList.map {
            OrderCandidate(orderId: $0.orderId, userId: $0.userId, channel: $0.channel, productId: $0.productId,
                           accountToken: $0.accountToken, isOpen: !settled.contains($0.orderId))
        }
        let nn = self.nn
        switch Binding.decide(transaction: v, callbacks: reports[v.transactionId] ?? [], outTradeNo: outTradeNo, orders: candidates,
                              newOrderId: { "o\(nn)-ap-\($0)" }) {
        case .bound(let b):
            if let o = b.orderId { settled.insert(o) }
            emit(t, .transactionBound(b))
            return b
        case .createOrderAfterPayment(let b):
            if let o = b.orderId {
                createOrder(t, o, Simulator.def(v.channel, v.productId), token: nil, user: b.userId)
                settled.insert(o)
            }
            emit(t + 1000, .transactionBound(b))
            return b
        case .unbound:
            return nil
        }
    }

    mutating func grant(_ t: Int64, _ d: ProductDefinition, tx: String, order: String?, user: String? = nil) {
        emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())", userId: user ?? uid, channel: d.channel,
                                                       transactionId: tx, orderId: order, entitlement: d.entitlement)))
        if case .coins = d.entitlement, user == nil, chance(0.6) {
            for _ in 0..<Int(int(1...3)) {
                spendIntents.append((t + int(10...(3 * 24 * 60)) * Sim.minute, nextSeq(), 0.2 + 0.6 * unit()))
            }
        }
    }

    mutating func nextSeq() -> Int { seq += 1; return seq - 1 }

    mutating func revoke(_ t: Int64, _ c: Channel, tx: String, reason: RevocationReason, user: String? = nil) {
        emit(t, .entitlementRevoked(EntitlementRevoked(userId: user ?? uid, channel: c, transactionId: tx, reason: reason)))
    }

    // MARK: the user's life

    mutating func run(days: Int) {
        let n = min(days, Int(pick([(1, 30), (2, 30), (3, 20), (4, 12), (6, 8)])))
        var slots = Array(0..<days)
        for i in slots.indices.reversed() where i > 0 {
            let j = Int(rng.next() % UInt64(i + 1))
            slots.swapAt(i, j)
        }
        let chosen = slots.prefix(n).sorted()
        for d in chosen {
            // Mostly in the Beijing day and evening (UTC+8): 00:00-15:00 UTC.
            let start = Simulator.start.microseconds + Int64(d) * Sim.day + int(0...(15 * 60)) * Sim.minute + int(0...59) * Sim.sec
            purchases += 1
            purchase(at: start, fault: drawFault())
        }
    }

    mutating func drawFault() -> FindingKind? {
        guard !faults.isNone else { return nil }
        var u = unit()
        for k in FaultSpec.injectable {
            let r = faults.rate(k)
            if u < r { return k }
            u -= r
        }
        return nil
    }

    mutating func purchase(at t: Int64, fault: FindingKind?) {
        switch fault {
        case .staleOrder?: staleOrder(t)
        case .orphanPayment?: settingsPage(t, Simulator.def(.appstore, chance(0.5) ? "com.sim.coins300" : "com.sim.coins60"), orphan: true)
        case .grantWithoutPayment?: fakeReceipt(t)
        case .subscriptionDrift?: subscription(t, channel: chance(0.7) ? .appstore : .googleplay, fault: .subscriptionDrift)
        case .productMismatch?: oneTime(t, Simulator.def(.appstore, "com.sim.coins60"), fault: .productMismatch)
        case let f?:
            var options = [(Simulator.def(.appstore, "com.sim.coins60"), 4), (Simulator.def(.appstore, "com.sim.coins300"), 2),
                           (Simulator.def(.googleplay, "coins_120"), 2)]
            if f != .receiptReused { options.append((Simulator.def(.wechat, "wx_coins_300"), 2)) }
            oneTime(t, pick(options), fault: f)
        case nil:
            var options: [(ProductDefinition, Int)] = [
                (Simulator.def(.appstore, "com.sim.coins60"), 20), (Simulator.def(.appstore, "com.sim.coins300"), 10),
                (Simulator.def(.appstore, "com.sim.vip.quarter"), 4), (Simulator.def(.googleplay, "coins_120"), 12),
                (Simulator.def(.wechat, "wx_coins_300"), 12), (Simulator.def(.wechat, "wx_vip_quarter"), 3),
            ]
            if !ownsNoAds { options.append((Simulator.def(.appstore, "com.sim.noads"), 4)) }
            if !subscribed {
                options.append((Simulator.def(.appstore, "com.sim.vip.week"), 9))
                options.append((Simulator.def(.googleplay, "vip_weekly"), 5))
            }
            let d = pick(options)
            if case .subscription = d.entitlement {
                subscription(t, channel: d.channel, fault: nil)
            } else if d.channel == .appstore && !hasStaleOrder && chance(0.05) {
                settingsPage(t, d, orphan: false)
            } else {
                oneTime(t, d, fault: nil)
            }
        }
    }

    // MARK: one-time purchases

    enum AppleFlow { case storeKit2, username, usernameNil, interrupted, verifyRetry }

    mutating func oneTime(_ start: Int64, _ d: ProductDefinition, fault: FindingKind?) {
        var t = start
        let c = d.channel
        if d.entitlement == .feature("no_ads") { ownsNoAds = true }
        // Sometimes a first attempt is abandoned: cancelled in the store sheet, closed by the user.
        if chance(0.08) {
            let o = orderId()
            createOrder(t, o, d, token: c == .wechat ? o : (c == .appstore && chance(0.5) ? nil : uuid().uuidString.lowercased()))
            t += int(1...4) * Sim.sec
            emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c, prepayId: c == .wechat ? "wx\(nn)\(next())" : nil)))
            t += int(5...60) * Sim.sec
            if c != .wechat { callback(t, c, tx: nil, product: d.storeProductId, state: .cancelled, order: o) }
            t += int(10...60) * Sim.sec
            close(t, o, chance(0.5) ? .userCancel : .timeout)
            t += int(1...10) * Sim.minute
        }
        var flow: AppleFlow = pick([(.storeKit2, 45), (.username, 25), (.usernameNil, 12), (.interrupted, 8), (.verifyRetry, 10)])
        if hasStaleOrder && (flow == .usernameNil || flow == .interrupted) { flow = .storeKit2 }
        if fault == .productMismatch { flow = .username }

        let o = orderId()
        var tx: String
        let v: PaymentVerified
        let bound: TransactionBound?
        let paidAt: Int64
        switch c {
        case .appstore:
            let token = flow == .storeKit2 ? uuid() : nil
            createOrder(t, o, d, token: token?.lowercased)
            t += int(1...5) * Sim.sec; emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
            paidAt = t + int(15...90) * Sim.sec
            tx = appleTx()
            // product-mismatch: the store charged another product than the order's (the app passed a stale order id).
            let charged = fault == .productMismatch ? Simulator.def(.appstore, "com.sim.coins300") : d
            switch flow {
            case .storeKit2:
                if chance(0.2) {
                    // Callback lost (app killed): the server learns from ONE_TIME_CHARGE; the next launch re-delivers.
                    t = paidAt + int(5...60) * Sim.sec
                    notify(t, c, appleNotificationId(), "ONE_TIME_CHARGE", tx: tx, original: tx)
                    t += int(1...3) * Sim.sec
                    v = verified(t, charged, tx: tx, purchased: paidAt, token: token)
                    t += int(1...3) * Sim.sec; bound = bind(t, v)
                    t += int(1...3) * Sim.sec
                    t = finish(t, charged, v, bound, fault: fault)
                    t += int(1...20) * Sim.hour
                    callback(t, c, tx: tx, product: charged.storeProductId, report: true)
                } else {
                    t = paidAt + int(1...5) * Sim.sec
                    callback(t, c, tx: tx, product: charged.storeProductId, report: true)
                    if chance(0.15) { t += int(2...8) * Sim.sec; callback(t, c, tx: tx, product: charged.storeProductId, report: true) }
                    t += int(1...3) * Sim.sec
                    v = verified(t, charged, tx: tx, purchased: paidAt, token: token)
                    t += int(1...3) * Sim.sec; bound = bind(t, v)
                    t += int(1...3) * Sim.sec
                    t = finish(t, charged, v, bound, fault: fault)
                }
            case .username, .verifyRetry:
                t = paidAt + int(1...5) * Sim.sec
                callback(t, c, tx: tx, product: charged.storeProductId, order: o, username: o)
                if flow == .verifyRetry {
                    t += int(1...3) * Sim.sec
                    emit(t, .verificationFailed(VerificationFailed(channel: c, transactionId: tx, code: 21005, retryable: true, attempt: 1)))
                    if chance(0.5) {
                        t += int(30...90) * Sim.sec
                        emit(t, .verificationFailed(VerificationFailed(channel: c, transactionId: tx, code: 21005, retryable: true, attempt: 2)))
                    }
                    t += int(2...6) * Sim.minute
                } else {
                    t += int(1...3) * Sim.sec
                }
                v = verified(t, charged, tx: tx, purchased: paidAt)
                t += int(1...3) * Sim.sec; bound = bind(t, v)
                t += int(1...3) * Sim.sec
                t = finish(t, charged, v, bound, fault: fault)
                if chance(0.3) {
                    // finishTransaction did not get through: re-delivered at the next launch, username nil.
                    t += int(1...30) * Sim.hour
                    callback(t, c, tx: tx, product: charged.storeProductId)
                }
            case .usernameNil:
                // Killed before reporting; the next launch re-delivers with applicationUsername nil.
                t = paidAt + int(20...180) * Sim.minute
                callback(t, c, tx: tx, product: d.storeProductId)
                t += int(1...3) * Sim.sec
                v = verified(t, d, tx: tx, purchased: paidAt)
                t += int(1...3) * Sim.sec; bound = bind(t, v)
                t += int(1...3) * Sim.sec
                t = finish(t, d, v, bound, fault: fault)
            case .interrupted:
                // Terms not accepted: a failed transaction, then a new one without applicationUsername.
                let failed = tx
                t = paidAt
                callback(t, c, tx: failed, product: d.storeProductId, state: .failed, order: o, username: o)
                t += int(1...6) * Sim.minute
                tx = appleTx()
                let paid2 = t - int(5...30) * Sim.sec
                callback(t, c, tx: tx, product: d.storeProductId)
                t += int(1...3) * Sim.sec
                v = verified(t, d, tx: tx, purchased: paid2)
                t += int(1...3) * Sim.sec; bound = bind(t, v)
                t += int(1...3) * Sim.sec
                t = finish(t, d, v, bound, fault: fault)
            }
            if bound?.orderId != o { preconditionFailure("simulator: \(tx) bound to \(String(describing: bound)), expected \(o) (\(flow))") }
        case .googleplay:
            let token = uuid()
            createOrder(t, o, d, token: token.lowercased)
            t += int(1...5) * Sim.sec; emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
            paidAt = t + int(15...90) * Sim.sec
            tx = googleOrder()
            t = paidAt + int(1...5) * Sim.sec
            let lost = chance(0.15)
            if !lost { callback(t, c, tx: tx, product: d.storeProductId, order: o, report: true) }
            t += int(1...10) * Sim.sec
            notify(t, c, googleMessageId(), "1", "ONE_TIME_PRODUCT_PURCHASED", tx: tx)
            t += int(1...3) * Sim.sec
            v = verified(t, d, tx: tx, purchased: paidAt, token: token)
            t += int(1...3) * Sim.sec; bound = bind(t, v)
            t += int(1...3) * Sim.sec
            t = finish(t, d, v, bound, fault: fault)
            if lost { t += int(1...20) * Sim.hour; callback(t, c, tx: tx, product: d.storeProductId, order: o, report: true) }
            if bound?.orderId != o { preconditionFailure("simulator: google \(tx) not bound to \(o)") }
        case .wechat:
            createOrder(t, o, d, token: o)
            t += int(1...3) * Sim.sec
            emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c, prepayId: "wx\(nn)\(next())")))
            paidAt = t + int(10...60) * Sim.sec
            tx = wechatTx()
            t = paidAt + int(1...4) * Sim.sec
            callback(t, c, tx: nil, product: d.storeProductId, order: o)
            let notificationLost = chance(0.2)
            if !notificationLost {
                t += int(1...5) * Sim.sec
                notify(t, c, wechatNotificationId(), "TRANSACTION.SUCCESS", tx: tx, tradeState: "SUCCESS", outTradeNo: o)
            } else {
                // No notification yet: the active query (re-checked after 5 s) finds it paid.
                t += 5 * Sim.sec
            }
            t += int(1...2) * Sim.sec
            v = verified(t, d, tx: tx, purchased: paidAt)
            t += Sim.sec; bound = bind(t, v, outTradeNo: o)
            t += Sim.sec
            t = finish(t, d, v, bound, fault: fault)
            if notificationLost || chance(0.3) {
                // The notification (again, under a new id) arrives late: nothing new to do.
                t += int(10...300) * Sim.sec
                notify(t, c, wechatNotificationId(), "TRANSACTION.SUCCESS", tx: tx, tradeState: "SUCCESS", outTradeNo: o)
            }
            if bound?.orderId != o { preconditionFailure("simulator: wechat \(tx) not bound to \(o)") }
        }
        if fault == nil { maybeRefund(t, d, tx: tx, order: o) }
    }

    /// Grants (or, under a fault, mis-grants) a bound one-time transaction and plays the fault's
    /// follow-up. Returns the time after it.
    mutating func finish(_ start: Int64, _ d: ProductDefinition, _ v: PaymentVerified, _ b: TransactionBound?, fault: FindingKind?) -> Int64 {
        var t = start
        let c = d.channel, tx = v.transactionId
        let order = b?.orderId
        switch fault {
        case .missingGrant?:
            // Fulfilment crashed after binding; nothing ever retried it.
            expect(.missingGrant, c, tx: tx, order: order, user: uid)
            return t
        case .wrongUser?:
            // The app had switched to the user's second account when fulfilment ran.
            let other = "\(uid)-alt"
            grant(t, d, tx: tx, order: order, user: other)
            expect(.wrongUser, c, tx: tx, order: order, user: other)
            return t
        default:
            grant(t, d, tx: tx, order: order)
        }
        switch fault {
        case .doubleGrant?:
            // Fulfilment timed out, was retried, and both attempts went through.
            t += int(5...300) * Sim.sec
            emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())-retry", userId: uid, channel: c, transactionId: tx,
                                                           orderId: order, entitlement: d.entitlement)))
            expect(.doubleGrant, c, tx: tx, order: order, user: uid)
        case .refundNotRevoked?:
            t += int(1...10) * Sim.day
            refundFacts(t, d, tx: tx)
            expect(.refundNotRevoked, c, tx: tx, order: order, user: uid)
        case .revokedWithoutRefund?:
            // A support script revoked it "for a refund" that never happened; the user complained and
            // support granted it again (so nothing is missing, but the revocation stays unexplained).
            t += int(1...10) * Sim.day
            revoke(t, c, tx: tx, reason: chance(0.7) ? .refund : .revoke)
            t += int(2...48) * Sim.hour
            emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())-support", userId: uid, channel: c, transactionId: tx,
                                                           orderId: order, entitlement: d.entitlement)))
            expect(.revokedWithoutRefund, c, tx: tx, order: order, user: uid)
        case .receiptReused?:
            // Another account signed in on the same device posts the same receipt.
            let other = "\(uid)-family"
            t += int(1...48) * Sim.hour
            callback(t, c, tx: tx, product: d.storeProductId, state: .restored, user: other, report: true)
            // The audit names the first presentation that conflicts: the second account, no order.
            expect(.receiptReused, c, tx: tx, order: nil, user: other)
        case .productMismatch?:
            expect(.productMismatch, c, tx: tx, order: order, user: uid)
        case .negativeBalance?:
            overspend = true
        default:
            break
        }
        return t
    }

    /// The store's refund facts for a one-time transaction (no revocation).
    mutating func refundFacts(_ t: Int64, _ d: ProductDefinition, tx: String) {
        let c = d.channel
        switch c {
        case .appstore: notify(t, c, appleNotificationId(), "REFUND", tx: tx, original: tx)
        case .googleplay: notify(t, c, googleMessageId(), "VOIDED_PURCHASE", "1", tx: tx)
        case .wechat: notify(t, c, wechatNotificationId(), "REFUND.SUCCESS", tx: tx, tradeState: "REFUND")
        }
        emit(t + Sim.sec, .refunded(Refunded(channel: c, transactionId: tx, refundId: "rf-\(tx)", amount: d.price ?? Money(minorUnits: 0, currency: Simulator.cny),
                                             refundedAt: Timestamp(microsecondsSince1970: t - int(1...30) * Sim.minute),
                                             reason: pick([("customer request", 3), ("accidental purchase", 2), ("other", 1)]))))
    }

    /// A clean purchase's refund story: sometimes a refund request (granted or declined), a refund
    /// revoked within minutes, sometimes reversed later and granted again.
    mutating func maybeRefund(_ start: Int64, _ d: ProductDefinition, tx: String, order: String) {
        guard chance(0.06) else { return }
        let c = d.channel
        var t = start + int(1...12) * Sim.day + int(0...600) * Sim.minute
        if c == .appstore && chance(0.4) {
            let n = appleNotificationId()
            notify(t, c, n, "CONSUMPTION_REQUEST", tx: tx, original: tx)
            emit(t + Sim.sec, .refundRequested(RefundNotice(channel: c, transactionId: tx, notificationId: n)))
            t += int(1...3) * Sim.day
            if chance(0.4) {
                let n2 = appleNotificationId()
                notify(t, c, n2, "REFUND_DECLINED", tx: tx, original: tx)
                emit(t + Sim.sec, .refundDeclined(RefundNotice(channel: c, transactionId: tx, notificationId: n2)))
                return
            }
        }
        refundFacts(t, d, tx: tx)
        t += int(5...240) * Sim.sec
        revoke(t, c, tx: tx, reason: .refund)
        if c == .appstore && chance(0.3) {
            t += int(1...6) * Sim.day
            let n = appleNotificationId()
            notify(t, c, n, "REFUND_REVERSED", tx: tx, original: tx)
            emit(t + Sim.sec, .refundReversed(RefundNotice(channel: c, transactionId: tx, notificationId: n)))
            t += int(5...240) * Sim.sec
            grant(t, d, tx: tx, order: order)
        }
    }

    // MARK: settings page, fake receipts, stale orders

    /// Bought from the phone's settings page (a promoted in-app purchase): the server hears first,
    /// nothing ties it to a user until the app opens and reports it; then an order is created after
    /// payment. As a fault, the app never reports it: an orphan payment.
    mutating func settingsPage(_ start: Int64, _ d: ProductDefinition, orphan: Bool) {
        var t = start
        let c = d.channel
        let tx = appleTx()
        notify(t, c, appleNotificationId(), "ONE_TIME_CHARGE", tx: tx, original: tx)
        t += int(1...3) * Sim.sec
        let v = verified(t, d, tx: tx, purchased: start - int(5...30) * Sim.sec)
        t += Sim.sec
        if bind(t, v) != nil { preconditionFailure("simulator: settings-page purchase \(tx) bound before any report") }
        if orphan {
            expect(.orphanPayment, c, tx: tx, order: nil, user: nil)
            return
        }
        t += int(2...360) * Sim.minute
        callback(t, c, tx: tx, product: d.storeProductId)
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.method == .createdAfterPayment else { preconditionFailure("simulator: \(tx) expected created-after-payment") }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: b.orderId)
    }

    /// A forged receipt (jailbroken device): the store rejects it (21003) but fulfilment trusted the
    /// client's report and granted; the order-service's timeout closes the order later.
    mutating func fakeReceipt(_ start: Int64) {
        var t = start
        let d = Simulator.def(.appstore, chance(0.5) ? "com.sim.coins300" : "com.sim.coins60")
        let o = orderId()
        createOrder(t, o, d, token: nil)
        t += int(1...5) * Sim.sec; emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: d.channel)))
        t += int(5...20) * Sim.sec
        let tx = appleTx()
        callback(t, d.channel, tx: tx, product: d.storeProductId, order: o, username: o)
        t += int(1...3) * Sim.sec
        emit(t, .verificationFailed(VerificationFailed(channel: d.channel, transactionId: tx, code: 21003, retryable: false, attempt: 1)))
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: o)
        expect(.grantWithoutPayment, d.channel, tx: tx, order: o, user: uid)
        t += 30 * Sim.minute
        close(t, o, .timeout)
    }

    /// Launched, never paid, and the order-service's timeout job never closed it.
    mutating func staleOrder(_ start: Int64) {
        let d = pick([(Simulator.def(.appstore, "com.sim.coins60"), 2), (Simulator.def(.googleplay, "coins_120"), 1), (Simulator.def(.wechat, "wx_coins_300"), 1)])
        let o = orderId()
        createOrder(start, o, d, token: d.channel == .wechat ? o : uuid().uuidString.lowercased())
        emit(start + int(1...5) * Sim.sec, .paymentLaunched(PaymentLaunched(orderId: o, channel: d.channel, prepayId: d.channel == .wechat ? "wx\(nn)\(next())" : nil)))
        hasStaleOrder = true
        expect(.staleOrder, d.channel, tx: nil, order: o, user: uid)
    }

    // MARK: subscriptions

    mutating func subscription(_ start: Int64, channel c: Channel, fault: FindingKind?) {
        subscribed = true
        let d = Simulator.def(c, c == .appstore ? "com.sim.vip.week" : "vip_weekly")
        var t = start
        let o = orderId()
        let token = uuid()
        createOrder(t, o, d, token: token.lowercased)
        t += int(1...5) * Sim.sec; emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
        let paidAt = t + int(15...60) * Sim.sec
        let tx = c == .appstore ? appleTx() : googleOrder()
        let original = c == .appstore ? tx : purchaseToken()
        let periodDays = d.entitlement.periodDays ?? 7
        let expires = paidAt + periodDays * Sim.day
        t = paidAt + int(1...5) * Sim.sec
        callback(t, c, tx: tx, product: d.storeProductId, report: c == .appstore)
        t += int(1...5) * Sim.sec
        if c == .appstore {
            notify(t, c, appleNotificationId(), "SUBSCRIBED", "INITIAL_BUY", tx: tx, original: original)
        } else {
            notify(t, c, googleMessageId(), "4", "SUBSCRIPTION_PURCHASED", tx: tx, original: original)
        }
        t += int(1...3) * Sim.sec
        let v = verified(t, d, tx: tx, original: original, purchased: paidAt, expires: expires, token: token)
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.orderId == o else { preconditionFailure("simulator: subscription \(tx) not bound to \(o)") }
        t += int(1...3) * Sim.sec
        if fault == .subscriptionDrift {
            // Fulfilment granted the week with the quarter's length (a wrong catalogue lookup).
            emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                                                           entitlement: .period(entitlement: "vip", days: 90))))
            expect(.subscriptionDrift, c, tx: tx, order: o, user: uid)
        } else {
            grant(t, d, tx: tx, order: o)
        }
        renewals(c, d, original: original, firstTx: tx, expires: expires)
    }

    mutating func renewals(_ c: Channel, _ initial: ProductDefinition, original: String, firstTx: String, expires first: Int64) {
        var d = initial
        var expires = first
        var k = 0
        var upgraded = false
        let periodDays = d.entitlement.periodDays ?? 7
        while expires <= horizon {
            k += 1
            var purchase = expires
            let roll = int(0...99)
            if roll < 6 {
                // Auto-renew turned off during the period; expires voluntarily.
                let off = expires - int(1...(periodDays * 24 - 1)) * Sim.hour
                if c == .appstore {
                    let n = appleNotificationId()
                    notify(off, c, n, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", tx: firstTx, original: original)
                    emit(off + Sim.sec, .autoRenewChanged(AutoRenewChanged(channel: c, originalTransactionId: original, notificationId: n, enabled: false)))
                    let e = appleNotificationId()
                    notify(expires + int(1...30) * Sim.sec, c, e, "EXPIRED", "VOLUNTARY", tx: firstTx, original: original)
                    emit(expires + 31 * Sim.sec, .subscriptionExpired(SubscriptionExpired(channel: c, originalTransactionId: original, notificationId: e, reason: .voluntary)))
                } else {
                    let n = googleMessageId()
                    notify(off, c, n, "3", "SUBSCRIPTION_CANCELED", original: original)
                    emit(off + Sim.sec, .autoRenewChanged(AutoRenewChanged(channel: c, originalTransactionId: original, notificationId: n, enabled: false)))
                    let e = googleMessageId()
                    notify(expires + int(1...30) * Sim.sec, c, e, "13", "SUBSCRIPTION_EXPIRED", original: original)
                    emit(expires + 31 * Sim.sec, .subscriptionExpired(SubscriptionExpired(channel: c, originalTransactionId: original, notificationId: e, reason: .voluntary)))
                }
                return
            } else if roll < 16 {
                // Billing problem: billing retry (no access) or grace period (access kept).
                let grace = chance(0.4)
                let n = c == .appstore ? appleNotificationId() : googleMessageId()
                let at = expires + int(1...60) * Sim.sec
                if c == .appstore {
                    notify(at, c, n, "DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, tx: firstTx, original: original)
                } else {
                    notify(at, c, n, grace ? "6" : "5", grace ? "SUBSCRIPTION_IN_GRACE_PERIOD" : "SUBSCRIPTION_ON_HOLD", original: original)
                }
                emit(at + Sim.sec, .renewalFailed(RenewalFailed(channel: c, originalTransactionId: original, notificationId: n,
                                                                gracePeriodExpiresAt: grace ? Timestamp(microsecondsSince1970: expires + 3 * Sim.day) : nil,
                                                                inBillingRetry: !grace || c == .appstore)))
                if chance(0.35) {
                    let e = c == .appstore ? appleNotificationId() : googleMessageId()
                    let end = expires + (grace ? 3 : int(4...10)) * Sim.day
                    if c == .appstore {
                        notify(end, c, e, grace ? "GRACE_PERIOD_EXPIRED" : "EXPIRED", grace ? nil : "BILLING_RETRY", tx: firstTx, original: original)
                    } else {
                        notify(end, c, e, "13", "SUBSCRIPTION_EXPIRED", original: original)
                    }
                    emit(end + Sim.sec, .subscriptionExpired(SubscriptionExpired(channel: c, originalTransactionId: original, notificationId: e, reason: .billingRetry)))
                    return
                }
                purchase = expires + int(2...(grace ? 60 : 72)) * Sim.hour
                if purchase > horizon { return }
            } else if roll < 22 && c == .appstore && !upgraded {
                // Upgrade to the plus plan: immediate, a new transaction and a new period from now.
                upgraded = true
                d = Simulator.def(c, "com.sim.vip.week.plus")
                expires = upgrade(before: expires, c, to: d, original: original, firstTx: firstTx)
                continue
            }
            let rtx = c == .appstore ? appleTx() : "\(firstTx)..\(k - 1)"
            let rexp = purchase + periodDays * Sim.day
            let price = d.price
            let renewed = SubscriptionRenewed(channel: c, originalTransactionId: original, transactionId: rtx, productId: d.storeProductId,
                                              purchaseDate: Timestamp(microsecondsSince1970: purchase), expiresDate: Timestamp(microsecondsSince1970: rexp),
                                              price: price)
            let recovered = purchase != expires
            let grantDays = d.entitlement
            if chance(0.1) {
                // The renewal notification is lost; the server's poll finds it two hours later;
                // the store's retry of the notification lands a day later (nothing new to grant).
                var t = purchase + int(90...150) * Sim.minute
                _ = verified(t, d, tx: rtx, original: original, purchased: purchase, expires: rexp)
                t += int(1...3) * Sim.sec
                emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: rtx, entitlement: grantDays)))
                t = purchase + int(20...30) * Sim.hour
                renewalNotice(t, c, rtx, original, recovered: recovered)
                emit(t + Sim.sec, .subscriptionRenewed(renewed))
            } else {
                var t = purchase + int(10...120) * Sim.sec
                renewalNotice(t, c, rtx, original, recovered: recovered)
                emit(t + Sim.sec, .subscriptionRenewed(renewed))
                t += int(2...10) * Sim.sec
                emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: rtx, entitlement: grantDays)))
            }
            expires = rexp
        }
    }

    mutating func renewalNotice(_ t: Int64, _ c: Channel, _ tx: String, _ original: String, recovered: Bool) {
        if c == .appstore {
            notify(t, c, appleNotificationId(), "DID_RENEW", recovered ? "BILLING_RECOVERY" : nil, tx: tx, original: original)
        } else {
            notify(t, c, googleMessageId(), recovered ? "1" : "2", recovered ? "SUBSCRIPTION_RECOVERED" : "SUBSCRIPTION_RENEWED", tx: tx, original: original)
        }
    }

    /// The user upgrades to the plus plan during a period: Apple charges the new plan at once (a new
    /// transaction of the same subscription, prorating the old one) and the old period is upgraded
    /// away. Returns the new period's expiry.
    mutating func upgrade(before expires: Int64, _ c: Channel, to d: ProductDefinition, original: String, firstTx: String) -> Int64 {
        let periodDays = d.entitlement.periodDays ?? 7
        var t = expires - int(1...(periodDays * 24 - 1)) * Sim.hour
        let tx = appleTx()
        let n = appleNotificationId()
        callback(t, c, tx: tx, product: d.storeProductId, report: true)
        t += int(1...5) * Sim.sec
        notify(t, c, n, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", tx: tx, original: original)
        emit(t + Sim.sec, .planChanged(PlanChanged(channel: c, originalTransactionId: original, notificationId: n, toProductId: d.storeProductId,
                                                   effective: .immediate)))
        t += int(2...5) * Sim.sec
        let purchase = t - int(5...20) * Sim.sec
        let rexp = purchase + periodDays * Sim.day
        _ = verified(t, d, tx: tx, original: original, purchased: purchase, expires: rexp)
        t += int(1...3) * Sim.sec
        emit(t, .entitlementGranted(EntitlementGranted(grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, entitlement: d.entitlement)))
        return rexp
    }

    // MARK: coins

    /// The items with every spend sized against the balance at its moment: never more than what is
    /// not already promised to a later clawback. A negative-balance fault is one wallet race at the
    /// very end that spends more than the user has (and nothing after it).
    mutating func resolvedItems() -> [SimItem] {
        // Spends in the post-horizon tail are dropped: the history's activity ends with the purchases.
        var all = items
        let spends = spendIntents.filter { $0.t <= horizon + Sim.day }
        all.sort { ($0.t, $0.seq) < ($1.t, $1.seq) }
        // Coins granted per transaction to this user, and when each transaction's coins are clawed back.
        var revokeTimes: [(t: Int64, tx: String)] = []
        for it in all {
            if case .entitlementRevoked(let r) = it.fact, r.userId == uid { revokeTimes.append((it.t, r.transactionId)) }
        }
        var active: [String: Int64] = [:]
        var balance: Int64 = 0
        var out: [SimItem] = []
        var si = spends.sorted { ($0.t, $0.seq) < ($1.t, $1.seq) }[...]
        var spendNo = 0
        func reserved(at t: Int64, _ active: [String: Int64]) -> Int64 {
            revokeTimes.filter { $0.t > t }.reduce(0) { $0 + (active[$1.tx] ?? 0) }
        }
        func applySpend(_ s: (t: Int64, seq: Int, fraction: Double), into out: inout [SimItem], balance: inout Int64, _ active: [String: Int64], spendNo: inout Int) {
            let available = balance - reserved(at: s.t, active)
            let amount = Int64(Double(available) * s.fraction)
            guard amount > 0 else { return }
            balance -= amount
            spendNo += 1
            out.append(SimItem(t: s.t, user: index, seq: s.seq, fact: .coinsSpent(CoinsSpent(
                spendId: "sp\(nn)-\(spendNo)", userId: uid, amount: amount, item: ["sticker-pack", "gift", "boost", "skin"][spendNo % 4]))))
        }
        for it in all {
            while let s = si.first, (s.t, s.seq) < (it.t, it.seq) {
                applySpend(s, into: &out, balance: &balance, active, spendNo: &spendNo)
                si = si.dropFirst()
            }
            switch it.fact {
            case .entitlementGranted(let g) where g.userId == uid:
                if case .coins(let n) = g.entitlement { active[g.transactionId, default: 0] += n * g.quantity; balance += n * g.quantity }
            case .entitlementRevoked(let r) where r.userId == uid:
                balance -= active[r.transactionId] ?? 0
                active[r.transactionId] = 0
            default: break
            }
            out.append(it)
        }
        for s in si { applySpend(s, into: &out, balance: &balance, active, spendNo: &spendNo) }
        if overspend {
            // Two devices spent at once and both passed the balance check.
            let t = (out.map(\.t).max() ?? horizon) + int(5...60) * Sim.minute
            spendNo += 1
            out.append(SimItem(t: t, user: index, seq: nextSeq(), fact: .coinsSpent(CoinsSpent(
                spendId: "sp\(nn)-\(spendNo)-race", userId: uid, amount: max(0, balance) + int(1...200), item: "gift"))))
            expect(.negativeBalance, nil, tx: nil, order: nil, user: uid)
        }
        return out
    }
}
