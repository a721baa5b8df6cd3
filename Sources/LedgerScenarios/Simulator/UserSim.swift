import Foundation
import LedgerCore
import LedgerDomain

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
    mutating func int(_ r: ClosedRange<Int64>) -> Int64 {
        r.lowerBound + Int64(rng.next() % UInt64(r.upperBound - r.lowerBound + 1))
    }
    mutating func pick<T>(_ options: [(T, Int)]) -> T {
        let total = options.reduce(0) { $0 + $1.1 }
        var r = Int(rng.next() % UInt64(total))
        for (v, w) in options {
            if r < w { return v }
            r -= w
        }
        return options[options.count - 1].0
    }

    // MARK: ids

    mutating func next() -> Int {
        counter += 1
        return counter
    }
    var nn: String { Script.pad(index, 6) }
    mutating func orderId() -> String { "o\(nn)-\(Script.pad(next(), 3))" }
    mutating func appleTx() -> String { "2000\(Script.pad(index, 7))\(Script.pad(next(), 4))" }
    mutating func googleOrder() -> String {
        let k = next()
        return
            "GPA.33\(Script.pad(index % 100, 2))-\(Script.pad((index / 100) % 10000, 4))-\(Script.pad(index / 1_000_000, 4))-\(Script.pad(k, 5))"
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

    /// Appends a fact at `t`; a store fact names its app.
    mutating func emit(_ t: Int64, _ f: Fact) {
        items.append(SimItem(t: t, user: index, seq: seq, fact: Sim.namingApp(f)))
        seq += 1
    }

    mutating func expect(_ kind: FindingKind, _ channel: Channel?, tx: String?, order: String?, user: String?) {
        truth.append(ExpectedFinding(kind: kind, channel: channel, transactionId: tx, orderId: order, userId: user))
        injected[kind, default: 0] += 1
    }

    mutating func notify(
        _ t: Int64, _ c: Channel, _ id: String, _ type: String, _ subtype: String? = nil, tx: String? = nil,
        original: String? = nil, tradeState: String? = nil, outTradeNo: String? = nil
    ) {
        emit(
            t,
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: c, notificationId: id, type: NotificationType(raw: type),
                    subtype: subtype.map { NotificationType(raw: $0) },
                    signedAt: Timestamp(microsecondsSince1970: t - int(0...3) * Sim.sec), transactionId: tx,
                    originalTransactionId: original,
                    tradeState: tradeState, outTradeNo: outTradeNo,
                    rawDigest: Sim.digest("\(c.rawValue):notification:\(id)"))))
    }

    /// A verified notification of a type the ledger does not translate (EXTERNAL_PURCHASE_TOKEN, a
    /// Google member or WeChat event added later), recorded untranslated.
    mutating func untranslatedNotification(_ t: Int64) {
        let (c, id, type): (Channel, String, String) = pick([
            ((.appstore, appleNotificationId(), "EXTERNAL_PURCHASE_TOKEN"), 2),
            ((.googleplay, googleMessageId(), "UNKNOWN"), 1),
            ((.wechat, wechatNotificationId(), "MCHTRANSFER.BILL.FINISHED"), 1),
        ])
        emit(
            t,
            .storeNotificationReceived(
                StoreNotificationReceived(
                    channel: c, notificationId: id, type: NotificationType(raw: type),
                    signedAt: Timestamp(microsecondsSince1970: t - int(0...3) * Sim.sec),
                    rawDigest: Sim.digest("\(c.rawValue):notification:\(id)"),
                    untranslated: "not translated: type \(type)")))
        expect(.untranslatedNotification, c, tx: "notification:\(id)", order: nil, user: nil)
    }

    mutating func createOrder(_ t: Int64, _ id: String, _ d: ProductDefinition, token: String?, user: String? = nil) {
        let f = OrderCreated(
            orderId: id, userId: user ?? uid, channel: d.channel, productId: d.storeProductId,
            price: d.price ?? Money(minorUnits: 0, currency: Simulator.cny), accountToken: token)
        orderList.append(f)
        emit(t, .orderCreated(f))
    }

    mutating func close(_ t: Int64, _ id: String, _ reason: CloseReason) {
        settled.insert(id)
        emit(t, .orderClosed(OrderClosed(orderId: id, reason: reason)))
    }

    mutating func callback(
        _ t: Int64, _ c: Channel, tx: String?, product: String, state: CallbackState = .purchased, order: String? = nil,
        username: String? = nil, user: String? = nil, report: Bool = false, signedOut: Bool = false
    ) {
        let f = ClientCallbackReceived(
            channel: c, userId: signedOut ? nil : user ?? uid, orderId: order, transactionId: tx, productId: product,
            state: state,
            applicationUsername: username, deviceId: c == .appstore ? device : androidDevice,
            reportId: report ? "r\(nn)-\(next())" : nil)
        if let tx { reports[tx, default: []].append(f) }
        emit(t, .clientCallbackReceived(f))
    }

    mutating func verified(
        _ t: Int64, _ d: ProductDefinition, tx: String, original: String? = nil, purchased: Int64,
        expires: Int64? = nil, token: UUID? = nil, environment: StoreEnvironment = .production,
        with details: (inout PaymentVerified) -> Void = { _ in }
    ) -> PaymentVerified {
        var f = PaymentVerified(
            channel: d.channel, transactionId: tx, originalTransactionId: original, productId: d.storeProductId,
            purchaseDate: Timestamp(microsecondsSince1970: purchased),
            expiresDate: expires.map { Timestamp(microsecondsSince1970: $0) },
            price: d.price ?? Money(minorUnits: 0, currency: Simulator.cny), appAccountToken: token,
            rawDigest: Sim.digest("\(d.channel.rawValue):tx:\(tx)"))
        f.environment = environment
        details(&f)
        emit(t, .paymentVerified(f))
        return f
    }

    /// Fulfilment's binding: `Binding.decide` over this user's orders and the reports so far.
    @discardableResult
    mutating func bind(_ t: Int64, _ v: PaymentVerified, outTradeNo: String? = nil) -> TransactionBound? {
        let candidates = orderList.map {
            OrderCandidate(
                orderId: $0.orderId, userId: $0.userId, channel: $0.channel, productId: $0.productId,
                accountToken: $0.accountToken, app: $0.app, isOpen: !settled.contains($0.orderId))
        }
        let nn = self.nn
        switch Binding.decide(
            transaction: v, callbacks: reports[v.transactionId] ?? [], outTradeNo: outTradeNo, orders: candidates,
            newOrderId: { "o\(nn)-ap-\($0)" })
        {
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
        emit(
            t,
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(next())", userId: user ?? uid, channel: d.channel,
                    transactionId: tx, orderId: order, entitlement: d.entitlement)))
        if case .coins = d.entitlement, user == nil, chance(0.6) {
            for _ in 0..<Int(int(1...3)) {
                spendIntents.append((t + int(10...(3 * 24 * 60)) * Sim.minute, nextSeq(), 0.2 + 0.6 * unit()))
            }
        }
    }

    mutating func nextSeq() -> Int {
        seq += 1
        return seq - 1
    }

    mutating func revoke(
        _ t: Int64, _ c: Channel, tx: String, reason: RevocationReason, user: String? = nil, units: Int64? = nil,
        app: String? = nil
    ) {
        emit(
            t,
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: user ?? uid, channel: c, transactionId: tx, reason: reason, units: units,
                    revocationId: units.map { _ in "rv\(nn)-\(next())" }, app: app)))
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
            let start =
                Simulator.start.microseconds + Int64(d) * Sim.day + int(0...(15 * 60)) * Sim.minute + int(0...59)
                * Sim.sec
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
        case .orphanPayment?:
            settingsPage(
                t, Simulator.def(.appstore, chance(0.5) ? "com.sim.coins300" : "com.sim.coins60"), orphan: true)
        case .grantWithoutPayment?: fakeReceipt(t)
        case .receiptReused? where chance(0.3): subscription(t, channel: .appstore, fault: .receiptReused)
        case .subscriptionDrift?:
            subscription(t, channel: chance(0.7) ? .appstore : .googleplay, fault: .subscriptionDrift)
        case .productMismatch?: oneTime(t, Simulator.def(.appstore, "com.sim.coins60"), fault: .productMismatch)
        case .unacknowledgedPurchase?:
            oneTime(t, Simulator.def(.googleplay, "coins_120"), fault: .unacknowledgedPurchase)
        case .untranslatedNotification?:
            // A store sends a type the ledger does not know yet: kept, answered 200, listed for operators.
            untranslatedNotification(t)
            purchase(at: t, fault: nil)
        case let f?:
            var options = [
                (Simulator.def(.appstore, "com.sim.coins60"), 4), (Simulator.def(.appstore, "com.sim.coins300"), 2),
                (Simulator.def(.googleplay, "coins_120"), 2),
            ]
            if f != .receiptReused { options.append((Simulator.def(.wechat, "wx_coins_300"), 2)) }
            oneTime(t, pick(options), fault: f)
        case nil where chance(0.02):
            sandboxPurchase(t)
        case nil where chance(0.02):
            foreignPricePurchase(t)
        case nil where chance(0.01):
            goodwillGrant(t)
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
            if case .entitlementRevoked(let r) = it.fact, r.userId == uid, let tx = r.transactionId {
                revokeTimes.append((it.t, "\(r.app ?? "")|\(tx)"))
            }
        }
        var active: [String: Int64] = [:]
        var balance: Int64 = 0
        var out: [SimItem] = []
        var si = spends.sorted { ($0.t, $0.seq) < ($1.t, $1.seq) }[...]
        var spendNo = 0
        func reserved(at t: Int64, _ active: [String: Int64]) -> Int64 {
            revokeTimes.filter { $0.t > t }.reduce(0) { $0 + (active[$1.tx] ?? 0) }
        }
        func applySpend(
            _ s: (t: Int64, seq: Int, fraction: Double), into out: inout [SimItem], balance: inout Int64,
            _ active: [String: Int64], spendNo: inout Int
        ) {
            let available = balance - reserved(at: s.t, active)
            let amount = Int64(Double(available) * s.fraction)
            guard amount > 0 else { return }
            balance -= amount
            spendNo += 1
            out.append(
                SimItem(
                    t: s.t, user: index, seq: s.seq,
                    fact: .coinsSpent(
                        CoinsSpent(
                            spendId: "sp\(nn)-\(spendNo)", userId: uid, amount: amount,
                            item: ["sticker-pack", "gift", "boost", "skin"][spendNo % 4]))))
        }
        for it in all {
            while let s = si.first, (s.t, s.seq) < (it.t, it.seq) {
                applySpend(s, into: &out, balance: &balance, active, spendNo: &spendNo)
                si = si.dropFirst()
            }
            switch it.fact {
            case .entitlementGranted(let g) where g.userId == uid:
                // Keyed by app and transaction: two apps may issue the same transaction id.
                if case .coins(let n) = g.entitlement {
                    active[g.transactionId.map { "\(g.app ?? "")|\($0)" } ?? g.grantId, default: 0] += n * g.quantity
                    balance += n * g.quantity
                }
            case .entitlementRevoked(let r) where r.userId == uid:
                let key = r.transactionId.map { "\(r.app ?? "")|\($0)" } ?? r.grantId ?? ""
                let taken = min(r.units ?? .max, active[key] ?? 0)
                balance -= taken
                active[key] = (active[key] ?? 0) - taken
            default: break
            }
            out.append(it)
        }
        for s in si { applySpend(s, into: &out, balance: &balance, active, spendNo: &spendNo) }
        if overspend {
            // Two devices spent at once and both passed the balance check.
            let t = (out.map(\.t).max() ?? horizon) + int(5...60) * Sim.minute
            spendNo += 1
            out.append(
                SimItem(
                    t: t, user: index, seq: nextSeq(),
                    fact: .coinsSpent(
                        CoinsSpent(
                            spendId: "sp\(nn)-\(spendNo)-race", userId: uid, amount: max(0, balance) + int(1...200),
                            item: "gift"))))
            expect(.negativeBalance, nil, tx: nil, order: nil, user: uid)
        }
        return out
    }
}
