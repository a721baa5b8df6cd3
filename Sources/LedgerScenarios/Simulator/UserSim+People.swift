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
        emit(t, .transactionTransferred(TransactionTransferred(
            channel: d.channel, transactionId: tx, transferId: "mv\(nn)-\(next())", fromUserId: uid, toUserId: newUser, orderId: order,
            method: .restore, reason: "restored while signed in to a second account", authorizedBy: "restore:automatic")))
        t += int(1...5) * Sim.sec
        revoke(t, d.channel, tx: tx, reason: .support)
        t += int(1...5) * Sim.sec
        grant(t, d, tx: tx, order: order, user: newUser)
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
        let v = verified(t, d, tx: tx, original: tx, purchased: t - int(1...30) * Sim.minute) { $0.ownership = .familyShared }
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.userId == member else { preconditionFailure("simulator: family copy \(tx) not bound to \(member)") }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: b.orderId, user: member)
    }

    /// Google: an upgrade to the plus plan buys a new purchase token that names the old one in
    /// `linkedPurchaseToken`; the old subscription ends at the change and its user carries over.
    /// Returns the new token, its first order id and its expiry.
    mutating func googleUpgrade(before expires: Int64, to d: ProductDefinition, from oldToken: String) -> (String, String, Int64) {
        let c = Channel.googleplay
        var t = expires - int(1...(6 * 24 - 1)) * Sim.hour
        let newToken = purchaseToken(), tx = googleOrder()
        notify(t, c, googleMessageId(), "4", "SUBSCRIPTION_PURCHASED", original: newToken)
        t += int(1...3) * Sim.sec
        let purchase = t - int(5...20) * Sim.sec
        let rexp = purchase + (d.entitlement.periodDays ?? 7) * Sim.day
        _ = verified(t, d, tx: tx, original: newToken, purchased: purchase, expires: rexp) { $0.linkedPurchaseToken = oldToken }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: nil)
        _ = acknowledge(t, c, tx: tx, order: nil, fault: nil)
        return (newToken, tx, rexp)
    }
}

extension Sim {
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
            if b.app == nil, let a = apps[c] { b.app = a.app; b.merchant = a.merchant }
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
        default: return fact
        }
    }
}
