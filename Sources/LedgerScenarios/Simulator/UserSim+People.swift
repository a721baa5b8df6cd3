import Foundation
import LedgerCore
import LedgerDomain

// Traffic about people rather than payments: a purchase restored on a second account, a family
// member's shared copy, and every store fact naming its app.
extension UserSim {
    /// The user signs in to a second account and restores a non-consumable: the app reports it from
    /// the new account, the restore moves the transaction there, and fulfilment takes the feature
    /// from the old account and grants it to the new one. No finding: the new account owns it.
    mutating func restoreOnNewAccount(_ start: Int64, _ d: ProductDefinition, tx: String, order: String) {
        let newUser = "\(uid)-b"
        var t = start + int(1...20) * Sim.day
        guard t < horizon else { return }
        callback(t, d.channel, tx: tx, product: d.storeProductId, state: .restored, user: newUser)
        t += int(5...60) * Sim.minute
        emit(
            t,
            .transactionTransferred(
                TransactionTransferred(
                    channel: d.channel, transactionId: tx, transferId: "mv\(nn)-\(next())", fromUserId: uid,
                    toUserId: newUser, orderId: order,
                    method: .restore, reason: "restored while signed in to a second account",
                    authorizedBy: "restore:automatic")))
        t += int(1...5) * Sim.sec
        revoke(t, d.channel, tx: tx, reason: .support)
        t += int(1...5) * Sim.sec
        grant(t, d, tx: tx, order: order, user: newUser)
    }

    /// Support moves a period to the user's new account with the days left of it: fulfilment takes
    /// those days back from the old grant and grants them to the new account. The days net to the
    /// period paid: no finding.
    mutating func moveRemainingDays(_ start: Int64, _ d: ProductDefinition, tx: String, order: String) {
        guard let days = d.entitlement.periodDays, days > 1, let name = d.entitlement.periodEntitlement else { return }
        let newUser = "\(uid)-m", used = int(1...(days - 1))
        var t = start + used * Sim.day + int(0...600) * Sim.minute
        guard t < horizon else { return }
        emit(
            t,
            .transactionTransferred(
                TransactionTransferred(
                    channel: d.channel, transactionId: tx, transferId: "mv\(nn)-\(next())", fromUserId: uid,
                    toUserId: newUser, orderId: order,
                    method: .supportCorrection, reason: "moved to the user's new account with the days left",
                    authorizedBy: "support:simulated")))
        t += int(1...5) * Sim.sec
        revoke(t, d.channel, tx: tx, reason: .support, units: days - used)
        t += int(1...5) * Sim.sec
        emit(
            t,
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(next())", userId: newUser, channel: d.channel, transactionId: tx,
                    orderId: order, entitlement: .period(entitlement: name, days: days - used))))
    }

    /// The user buys coins in the lite app too, whose App Store transaction carries the same id as
    /// their purchase in the main app (an id is unique per app only); sometimes it is refunded there
    /// and taken back, naming the app. No finding: each app's purchase is owed, granted and taken
    /// back on its own.
    mutating func sameIdInSecondApp(_ start: Int64, _ d: ProductDefinition, tx: String) {
        let app = Sim.liteApp, c = Channel.appstore
        var t = start + int(1...48) * Sim.hour
        guard t < horizon, let price = d.price else { return }
        let o = orderId(), token = uuid()
        emit(
            t,
            .orderCreated(
                OrderCreated(
                    orderId: o, userId: uid, channel: c, productId: d.storeProductId, price: price,
                    accountToken: token.lowercased, app: app)))
        t += int(1...4) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
        t += int(20...60) * Sim.sec
        emit(
            t,
            .paymentVerified(
                PaymentVerified(
                    channel: c, transactionId: tx, originalTransactionId: tx, productId: d.storeProductId,
                    purchaseDate: Timestamp(microsecondsSince1970: t - int(5...15) * Sim.sec), price: price,
                    appAccountToken: token, app: app)))
        t += int(1...3) * Sim.sec
        emit(
            t,
            .transactionBound(
                TransactionBound(
                    channel: c, transactionId: tx, orderId: o, userId: uid, method: .appAccountToken, app: app)))
        t += int(1...3) * Sim.sec
        emit(
            t,
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                    entitlement: d.entitlement, app: app)))
        guard chance(0.5) else { return }
        t += int(1...5) * Sim.day
        guard t < horizon else { return }
        emit(
            t,
            .refunded(
                Refunded(
                    channel: c, transactionId: tx, refundId: "rf\(nn)-\(next())", amount: price,
                    refundedAt: Timestamp(microsecondsSince1970: t),
                    reason: "customer", app: app)))
        t += int(5...240) * Sim.sec
        revoke(t, c, tx: tx, reason: .refund, app: app)
    }

    /// A family member's copy of a shared non-consumable: its own transaction, owed the feature,
    /// no revenue of its own. The member's app reports it; fulfilment creates the member's order.
    mutating func familySharedCopy(_ start: Int64, _ d: ProductDefinition) {
        let member = "\(uid)-family"
        var t = start + int(1...48) * Sim.hour
        guard t < horizon else { return }
        let tx = appleTx()
        callback(t, d.channel, tx: tx, product: d.storeProductId, state: .restored, user: member, report: true)
        t += int(1...5) * Sim.sec
        let v = verified(t, d, tx: tx, original: tx, purchased: t - int(1...30) * Sim.minute) {
            $0.ownership = .familyShared
        }
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.userId == member else {
            preconditionFailure("simulator: family copy \(tx) not bound to \(member)")
        }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: b.orderId, user: member)
    }

    /// Google: an upgrade to the plus plan buys a new purchase token that names the old one in
    /// `linkedPurchaseToken`; the old subscription ends at the change and its user carries over.
    /// Returns the new token, its first order id and its expiry.
    mutating func googleUpgrade(
        before expires: Int64, to d: ProductDefinition, from oldToken: String
    ) -> (String, String, Int64) {
        let c = Channel.googleplay
        var t = expires - int(1...(6 * 24 - 1)) * Sim.hour
        let newToken = purchaseToken(), tx = googleOrder()
        notify(t, c, googleMessageId(), "4", "SUBSCRIPTION_PURCHASED", original: newToken)
        t += int(1...3) * Sim.sec
        let purchase = t - int(5...20) * Sim.sec
        let rexp = purchase + (d.entitlement.periodDays ?? 7) * Sim.day
        _ = verified(t, d, tx: tx, original: newToken, purchased: purchase, expires: rexp) {
            $0.linkedPurchaseToken = oldToken
        }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: nil)
        _ = acknowledge(t, c, tx: tx, order: nil, purchased: purchase, fault: nil)
        return (newToken, tx, rexp)
    }
}

extension Sim {
    /// The second App Store app: its purchases are not on the main app's statements.
    static let liteApp = "com.sim.app.lite"

    /// The simulated apps, as the simulated statements name them too.
    static let apps: [Channel: (app: String, merchant: String?)] = [
        .appstore: (SimulatedStatements.bundleId, nil),
        .googleplay: (SimulatedStatements.packageName, nil),
        .wechat: (SimulatedStatements.wechatAppId, SimulatedStatements.wechatMerchant),
    ]

    /// The fact with its app (and WeChat merchant) named, as the stores' payloads name them.
    static func namingApp(_ fact: Fact) -> Fact {
        func named<B: StoreAppFact>(_ body: B, _ c: Channel, _ wrap: (B) -> Fact) -> Fact {
            var b = body
            if b.app == nil, let a = apps[c] {
                b.app = a.app
                b.merchant = a.merchant
            }
            return wrap(b)
        }
        switch fact {
        case .clientCallbackReceived(let f): return named(f, f.channel, Fact.clientCallbackReceived)
        case .storeNotificationReceived(let f): return named(f, f.channel, Fact.storeNotificationReceived)
        case .paymentVerified(let f): return named(f, f.channel, Fact.paymentVerified)
        case .verificationFailed(let f): return named(f, f.channel, Fact.verificationFailed)
        case .transactionBound(let f): return named(f, f.channel, Fact.transactionBound)
        case .transactionTransferred(let f): return named(f, f.channel, Fact.transactionTransferred)
        case .purchaseAcknowledged(let f): return named(f, f.channel, Fact.purchaseAcknowledged)
        case .subscriptionRenewed(let f): return named(f, f.channel, Fact.subscriptionRenewed)
        case .refundRequested(let f): return named(f, f.channel, Fact.refundRequested)
        case .refundDeclined(let f): return named(f, f.channel, Fact.refundDeclined)
        case .refundReversed(let f): return named(f, f.channel, Fact.refundReversed)
        case .refunded(let f): return named(f, f.channel, Fact.refunded)
        case .purchaseVoided(let f): return named(f, f.channel, Fact.purchaseVoided)
        // Fulfilment's facts name the transaction's app too, and our orders the app they are bought in.
        case .orderCreated(var f):
            if f.app == nil { f.app = apps[f.channel]?.app }
            return .orderCreated(f)
        case .entitlementGranted(var f):
            if f.app == nil, f.transactionId != nil, let c = f.channel { f.app = apps[c]?.app }
            return .entitlementGranted(f)
        case .entitlementRevoked(var f):
            if f.app == nil, f.transactionId != nil, let c = f.channel { f.app = apps[c]?.app }
            return .entitlementRevoked(f)
        default: return fact
        }
    }
}
