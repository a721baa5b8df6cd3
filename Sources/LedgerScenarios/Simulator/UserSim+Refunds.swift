import Foundation
import LedgerCore
import LedgerDomain

// A one-time purchase's refunds, full and partial, as each store reports them (UserSim+OneTime.swift).
extension UserSim {
    /// The store's refund facts for a one-time transaction (no revocation). Google reports a refund
    /// as a voided purchase.
    mutating func refundFacts(_ t: Int64, _ d: ProductDefinition, tx: String) {
        let c = d.channel
        switch c {
        case .appstore: notify(t, c, appleNotificationId(), "REFUND", tx: tx, original: tx)
        case .googleplay:
            notify(t, c, googleMessageId(), "VOIDED_PURCHASE", "1", tx: tx)
            emit(
                t + Sim.sec,
                .purchaseVoided(
                    PurchaseVoided(
                        transactionId: tx, voidedAt: Timestamp(microsecondsSince1970: t - int(1...30) * Sim.minute),
                        voidedSource: pick([("0", 3), ("1", 1), ("2", 1)]), voidedReason: pick([("1", 3), ("7", 1)]))))
            return
        case .wechat: notify(t, c, wechatNotificationId(), "REFUND.SUCCESS", tx: tx, tradeState: "REFUND")
        }
        emit(
            t + Sim.sec,
            .refunded(
                Refunded(
                    channel: c, transactionId: tx, refundId: "rf-\(tx)",
                    amount: d.price ?? Money(minorUnits: 0, currency: Simulator.cny),
                    refundedAt: Timestamp(microsecondsSince1970: t - int(1...30) * Sim.minute),
                    reason: pick([("customer request", 3), ("accidental purchase", 2), ("other", 1)]))))
    }

    /// A clean purchase's refund story: sometimes a refund request (granted or declined), a refund
    /// revoked within minutes, sometimes reversed later and granted again.
    mutating func maybeRefund(_ start: Int64, _ d: ProductDefinition, tx: String, order: String) {
        guard chance(0.06) else { return }
        let c = d.channel
        var t = start + int(1...12) * Sim.day + int(0...600) * Sim.minute
        if c == .wechat && chance(0.4) { return wechatPartialRefund(t, d, tx: tx) }
        if c == .appstore && chance(0.4) {
            let n = appleNotificationId()
            notify(t, c, n, "CONSUMPTION_REQUEST", tx: tx, original: tx)
            emit(t + Sim.sec, .refundRequested(RefundNotice(channel: c, transactionId: tx, notificationId: n)))
            t += int(1...3) * Sim.day
            if chance(0.5) {
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

    /// WeChat Pay refunds a third of the price: PROCESSING first, SUCCESS minutes later; fulfilment
    /// takes back the proportional share of the coins (rounded down).
    mutating func wechatPartialRefund(_ start: Int64, _ d: ProductDefinition, tx: String) {
        guard let price = d.price, case .coins(let coins) = d.entitlement else { return }
        var t = start
        let part = Money(minorUnits: price.minorUnits / 3, currency: price.currency), id = "rf-\(tx)-part"
        emit(
            t,
            .refunded(
                Refunded(
                    channel: d.channel, transactionId: tx, refundId: id, amount: part,
                    refundedAt: Timestamp(microsecondsSince1970: t), status: .processing)))
        t += int(2...30) * Sim.minute
        notify(t, d.channel, wechatNotificationId(), "REFUND.SUCCESS", tx: tx, tradeState: "REFUND")
        emit(
            t + Sim.sec,
            .refunded(
                Refunded(
                    channel: d.channel, transactionId: tx, refundId: id, amount: part,
                    refundedAt: Timestamp(microsecondsSince1970: t), status: .success)))
        t += int(5...240) * Sim.sec
        emit(
            t,
            .entitlementRevoked(
                EntitlementRevoked(
                    userId: uid, channel: d.channel, transactionId: tx, reason: .refund,
                    units: Audit.share(coins, part.minorUnits, price.minorUnits), revocationId: "rv\(nn)-\(next())")))
    }
}
