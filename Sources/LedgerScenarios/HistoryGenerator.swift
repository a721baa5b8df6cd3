import Foundation
import LedgerCore
import LedgerDomain

/// An endless, deterministic stream of clean purchase histories across App Store, Google Play and
/// WeChat Pay, for benchmarks: orders, launches, client callbacks (sometimes re-delivered),
/// verification, binding, grants, coin spends, subscription renewals, refunds with revocations.
/// Memory stays bounded whatever the length: each purchase's facts are emitted together. (The
/// ``Simulator`` builds its whole history in memory to inject faults and sort users' timelines; this
/// one streams, for logs of tens of millions of facts.)
public struct HistoryGenerator: Sequence, IteratorProtocol {
    public let users: Int
    public let ids: IdShape
    var rng: SplitMix64
    var pending: [(Fact, Timestamp)] = []
    var purchase = 0
    var clock: Int64
    public private(set) var emitted = 0

    static let cny = Currency("CNY")!
    /// The first moment of every generated history.
    public static let start = Timestamp("2026-01-01T00:00:00Z")!
    static let day: Int64 = 86_400_000_000

    /// The catalogue every generated history starts with.
    public static let catalogue: [ProductDefinition] = [
        ProductDefinition(
            channel: .appstore, storeProductId: "com.example.coins100", entitlement: .coins(100), version: 1,
            validFrom: start),
        ProductDefinition(
            channel: .appstore, storeProductId: "com.example.vip.month",
            entitlement: .subscription(entitlement: "vip", group: "vip", periodDays: 30, rank: 1), version: 1,
            validFrom: start),
        ProductDefinition(
            channel: .appstore, storeProductId: "com.example.vip.quarter",
            entitlement: .period(entitlement: "vip", days: 90), version: 1, validFrom: start),
        ProductDefinition(
            channel: .appstore, storeProductId: "com.example.noads", entitlement: .feature("no_ads"), version: 1,
            validFrom: start),
        ProductDefinition(
            channel: .googleplay, storeProductId: "coins_600", entitlement: .coins(600), version: 1, validFrom: start),
        ProductDefinition(
            channel: .wechat, storeProductId: "wx_coins_60", entitlement: .coins(60), version: 1, validFrom: start),
    ]

    public init(users: Int, seed: UInt64, ids: IdShape = .short) {
        self.users = Swift.max(1, users)
        self.ids = ids
        self.rng = SplitMix64(seed: seed)
        self.clock = Self.start.microseconds
        pending = Self.catalogue.reversed().map { (.productDefined($0), Self.start) }
    }

    public mutating func next() -> (Fact, Timestamp)? {
        if pending.isEmpty { generatePurchase() }
        emitted += 1
        return pending.removeLast()
    }

    mutating func tick(_ maxMicros: Int64 = 2_000_000) -> Timestamp {
        clock += 1 + Int64(rng.next() % UInt64(maxMicros))
        return Timestamp(microsecondsSince1970: clock)
    }

    mutating func generatePurchase() {
        purchase += 1
        let n = purchase
        let user = ids.user(Int(rng.next() % UInt64(users)))
        let pick = rng.next() % 100
        let product =
            pick < 45
            ? Self.catalogue[0]
            : pick < 60
                ? Self.catalogue[1]
                : pick < 65
                    ? Self.catalogue[2]
                    : pick < 70 ? Self.catalogue[3] : pick < 85 ? Self.catalogue[4] : Self.catalogue[5]
        let channel = product.channel
        let price = Money(
            minorUnits: [600, 1800, 4500, 1200, 3000, 600][Self.catalogue.firstIndex(of: product)!], currency: Self.cny)
        let orderId = ids.order(n)
        let txId = ids.transaction(channel, n)
        let token = UUID(high: 0, unique: UInt64(n))
        var out: [(Fact, Timestamp)] = []
        out.append(
            (
                .orderCreated(
                    OrderCreated(
                        orderId: orderId, userId: user, channel: channel, productId: product.storeProductId,
                        price: price, accountToken: channel == .wechat ? orderId : token.lowercased)), tick()
            ))
        out.append((.paymentLaunched(PaymentLaunched(orderId: orderId, channel: channel)), tick()))
        let callbacks = 1 + Int(rng.next() % 3 == 0 ? 1 : 0)
        for _ in 0..<callbacks {
            out.append(
                (
                    .clientCallbackReceived(
                        ClientCallbackReceived(
                            channel: channel, userId: user, orderId: orderId, transactionId: txId,
                            productId: product.storeProductId, state: .purchased)), tick()
                ))
        }
        let purchaseDate = tick()
        var expires: Timestamp?
        if case .subscription(_, _, let days, _) = product.entitlement {
            expires = Timestamp(microsecondsSince1970: purchaseDate.microseconds + days * Self.day)
        }
        out.append(
            (
                .paymentVerified(
                    PaymentVerified(
                        channel: channel, transactionId: txId, originalTransactionId: expires == nil ? nil : txId,
                        productId: product.storeProductId, purchaseDate: purchaseDate, expiresDate: expires,
                        price: price, appAccountToken: channel == .appstore ? token : nil)), tick()
            ))
        out.append(
            (
                .transactionBound(
                    TransactionBound(
                        channel: channel, transactionId: txId, orderId: orderId, userId: user, method: .appAccountToken)
                ), tick()
            ))
        let granted: Entitlement
        if case .subscription(let e, _, let d, _) = product.entitlement {
            granted = .period(entitlement: e, days: d)
        } else {
            granted = product.entitlement
        }
        out.append(
            (
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: ids.grant(n), userId: user, channel: channel, transactionId: txId, orderId: orderId,
                        entitlement: granted)), tick()
            ))
        if channel == .googleplay {
            let at = tick()
            out.append(
                (
                    .purchaseAcknowledged(
                        PurchaseAcknowledged(channel: channel, transactionId: txId, acknowledgedAt: at)), at
                ))
        }
        if case .coins(let c) = product.entitlement, rng.next() % 2 == 0 {
            out.append(
                (
                    .coinsSpent(
                        CoinsSpent(spendId: ids.spend(n), userId: user, amount: 1 + Int64(rng.next() % UInt64(c)))),
                    tick()
                ))
        }
        if let first = expires {
            var previous = first
            for r in 0..<Int(rng.next() % 3) {
                let next = Timestamp(microsecondsSince1970: previous.microseconds + 30 * Self.day)
                let renewal = ids.renewal(n, r, of: txId)
                out.append(
                    (
                        .subscriptionRenewed(
                            SubscriptionRenewed(
                                channel: channel, originalTransactionId: txId, transactionId: renewal,
                                productId: product.storeProductId, purchaseDate: previous, expiresDate: next)), tick()
                    ))
                out.append(
                    (
                        .entitlementGranted(
                            EntitlementGranted(
                                grantId: ids.grant(n, renewal: r), userId: user, channel: channel,
                                transactionId: renewal,
                                entitlement: granted)), tick()
                    ))
                previous = next
            }
        }
        if rng.next() % 100 == 0 {
            out.append(
                (
                    .refunded(
                        Refunded(
                            channel: channel, transactionId: txId, refundId: ids.refund(n), amount: price,
                            refundedAt: Timestamp(microsecondsSince1970: clock))), tick()
                ))
            out.append(
                (
                    .entitlementRevoked(
                        EntitlementRevoked(userId: user, channel: channel, transactionId: txId, reason: .refund)),
                    tick()
                ))
        }
        pending = out.reversed()
    }
}
