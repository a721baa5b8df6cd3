import Foundation
import LedgerCore
import LedgerDomain

extension UserSim {
    // MARK: subscriptions

    mutating func subscription(_ start: Int64, channel c: Channel, fault: FindingKind?) {
        subscribed = true
        let d = Simulator.def(c, c == .appstore ? "com.sim.vip.week" : "vip_weekly")
        var t = start
        let o = orderId()
        let token = uuid()
        createOrder(t, o, d, token: token.lowercased)
        t += int(1...5) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
        let paidAt = t + int(15...60) * Sim.sec
        let tx = c == .appstore ? appleTx() : googleOrder()
        let original = c == .appstore ? tx : purchaseToken()
        let periodDays = d.entitlement.periodDays ?? 7
        // Sometimes an intro offer paid up front: two periods for one price, as the store signs them.
        let intro = c == .appstore && fault == nil && chance(0.15)
        let firstDays = intro ? 2 * periodDays : periodDays
        let expires = paidAt + firstDays * Sim.day
        t = paidAt + int(1...5) * Sim.sec
        callback(t, c, tx: tx, product: d.storeProductId, report: c == .appstore)
        t += int(1...5) * Sim.sec
        if c == .appstore {
            notify(t, c, appleNotificationId(), "SUBSCRIBED", "INITIAL_BUY", tx: tx, original: original)
        } else {
            notify(t, c, googleMessageId(), "4", "SUBSCRIPTION_PURCHASED", tx: tx, original: original)
        }
        t += int(1...3) * Sim.sec
        let v = verified(t, d, tx: tx, original: original, purchased: paidAt, expires: expires, token: token) {
            if intro { $0.offer = "introductory:PAY_UP_FRONT" }
        }
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.orderId == o else {
            preconditionFailure("simulator: subscription \(tx) not bound to \(o)")
        }
        t += int(1...3) * Sim.sec
        if fault == .subscriptionDrift && chance(0.6) {
            // Access kept past the grace period's end (App Store) or through on hold (Google).
            accessKeptPastLapse(c, d, tx: tx, original: original, order: o, purchased: paidAt, expires: expires, at: t)
            if c == .googleplay { _ = acknowledge(t, c, tx: tx, order: o, purchased: paidAt, fault: nil) }
            return
        } else if fault == .subscriptionDrift {
            // Fulfilment granted the week with the quarter's length (a wrong catalogue lookup).
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                        entitlement: .period(entitlement: "vip", days: 90))))
            expect(.subscriptionDrift, c, tx: tx, order: o, user: uid)
        } else if intro {
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                        entitlement: .period(entitlement: "vip", days: firstDays))))
        } else {
            grant(t, d, tx: tx, order: o)
        }
        if c == .googleplay { t = acknowledge(t, c, tx: tx, order: o, purchased: paidAt, fault: nil) }
        renewals(
            c, d, original: original, firstTx: tx, purchased: paidAt, expires: expires,
            restoredElsewhere: fault == .receiptReused)
    }

    /// Signed in to a second account on the subscriber's phone, the app restores the running period
    /// (a renewal); the backend makes that account an order after payment and binds the renewal to
    /// it. Nobody moved the subscription: receipt-reused, naming the second account.
    mutating func restoredOnSecondAccount(_ c: Channel, _ d: ProductDefinition, tx: String, purchase: Int64) {
        let other = "\(uid)-kid", o = orderId()
        var t = purchase + int(2...100) * Sim.hour
        guard t < horizon else { return }
        callback(t, c, tx: tx, product: d.storeProductId, state: .restored, user: other, report: true)
        t += int(1...60) * Sim.sec
        createOrder(t, o, d, token: nil, user: other)
        emit(
            t + Sim.sec,
            .transactionBound(
                TransactionBound(channel: c, transactionId: tx, orderId: o, userId: other, method: .createdAfterPayment)
            ))
        // The first presentation to the other account is the restore's report, which names no order.
        expect(.receiptReused, c, tx: tx, order: nil, user: other)
    }

    mutating func renewals(
        _ c: Channel, _ initial: ProductDefinition, original first: String, firstTx: String, purchased: Int64,
        expires firstExpiry: Int64, restoredElsewhere: Bool = false
    ) {
        var d = initial
        var expires = firstExpiry
        var original = first, firstTx = firstTx
        var k = 0
        var upgraded = false
        let periodDays = d.entitlement.periodDays ?? 7
        // The period running now: its transaction and purchase time (an upgrade takes back its unused days).
        var current = (tx: firstTx, purchase: purchased)
        while expires <= horizon {
            k += 1
            var purchase = expires
            let roll = int(0...99)
            if roll < 6 {
                voluntaryExpiry(c, original: original, firstTx: firstTx, expires: expires, periodDays: periodDays)
                return
            } else if roll < 16 {
                guard let recovered = billingProblem(c, original: original, firstTx: firstTx, expires: expires) else {
                    return
                }
                purchase = recovered
                if purchase > horizon { return }
            } else if roll < 22 && c == .appstore && !upgraded {
                // Upgrade to the plus plan: immediate, a new transaction and a new period from now.
                upgraded = true
                d = Simulator.def(c, "com.sim.vip.week.plus")
                let runningDays = (expires - current.purchase + Sim.day / 2) / Sim.day
                expires = upgrade(
                    before: expires, c, to: d, original: original, firstTx: firstTx, running: current,
                    runningDays: runningDays)
                continue
            } else if roll < 22 && c == .googleplay && !upgraded {
                // Upgrade to the plus plan: a new purchase token linked to this one; renewals go on under it.
                upgraded = true
                d = Simulator.def(c, "vip_weekly_plus")
                (original, firstTx, expires) = googleUpgrade(before: expires, to: d, from: original)
                k = 0
                continue
            } else if roll >= 22 && roll < 25 && c == .googleplay {
                // Paused at the period's end, restarted days later: the paused days are not owed.
                purchase = googlePause(token: original, expires: expires)
                if purchase > horizon { return }
            } else if roll >= 22 && roll < 25 {
                // A price increase before the renewal: consented to, or the subscription expires for it.
                guard applePriceIncrease(d, original: original, firstTx: firstTx, expires: expires) else { return }
            }
            let rtx: String
            (expires, rtx) = renew(
                c, d, original: original, firstTx: firstTx, period: k, expires: expires, purchase: purchase,
                periodDays: periodDays)
            current = (rtx, purchase)
            if restoredElsewhere, k == 1 { restoredOnSecondAccount(c, d, tx: rtx, purchase: purchase) }
        }
    }

    /// Auto-renew turned off during the period; the subscription expires voluntarily.
    mutating func voluntaryExpiry(_ c: Channel, original: String, firstTx: String, expires: Int64, periodDays: Int64) {
        let off = expires - int(1...(periodDays * 24 - 1)) * Sim.hour
        if c == .appstore {
            let n = appleNotificationId()
            notify(off, c, n, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", tx: firstTx, original: original)
            emit(
                off + Sim.sec,
                .autoRenewChanged(
                    AutoRenewChanged(channel: c, originalTransactionId: original, notificationId: n, enabled: false)))
            let e = appleNotificationId()
            notify(expires + int(1...30) * Sim.sec, c, e, "EXPIRED", "VOLUNTARY", tx: firstTx, original: original)
            emit(
                expires + 31 * Sim.sec,
                .subscriptionExpired(
                    SubscriptionExpired(
                        channel: c, originalTransactionId: original, notificationId: e, reason: .voluntary)))
        } else {
            let n = googleMessageId()
            notify(off, c, n, "3", "SUBSCRIPTION_CANCELED", original: original)
            emit(
                off + Sim.sec,
                .autoRenewChanged(
                    AutoRenewChanged(channel: c, originalTransactionId: original, notificationId: n, enabled: false)))
            let e = googleMessageId()
            notify(expires + int(1...30) * Sim.sec, c, e, "13", "SUBSCRIPTION_EXPIRED", original: original)
            emit(
                expires + 31 * Sim.sec,
                .subscriptionExpired(
                    SubscriptionExpired(
                        channel: c, originalTransactionId: original, notificationId: e, reason: .voluntary)))
        }
    }

    /// A billing problem: billing retry (no access) or grace period (access kept). Returns when
    /// the store charged after all, or nil when the subscription expired.
    mutating func billingProblem(_ c: Channel, original: String, firstTx: String, expires: Int64) -> Int64? {
        let grace = chance(0.4)
        let n = c == .appstore ? appleNotificationId() : googleMessageId()
        let at = expires + int(1...60) * Sim.sec
        if c == .appstore {
            notify(at, c, n, "DID_FAIL_TO_RENEW", grace ? "GRACE_PERIOD" : nil, tx: firstTx, original: original)
        } else {
            notify(
                at, c, n, grace ? "6" : "5", grace ? "SUBSCRIPTION_IN_GRACE_PERIOD" : "SUBSCRIPTION_ON_HOLD",
                original: original)
        }
        emit(
            at + Sim.sec,
            .renewalFailed(
                RenewalFailed(
                    channel: c, originalTransactionId: original, notificationId: n,
                    gracePeriodExpiresAt: grace ? Timestamp(microsecondsSince1970: expires + 3 * Sim.day) : nil,
                    inBillingRetry: !grace || c == .appstore)))
        if chance(0.35) {
            let e = c == .appstore ? appleNotificationId() : googleMessageId()
            let end = expires + (grace ? 3 : int(4...10)) * Sim.day
            if c == .appstore {
                notify(
                    end, c, e, grace ? "GRACE_PERIOD_EXPIRED" : "EXPIRED", grace ? nil : "BILLING_RETRY", tx: firstTx,
                    original: original)
            } else {
                notify(end, c, e, "13", "SUBSCRIPTION_EXPIRED", original: original)
            }
            emit(
                end + Sim.sec,
                .subscriptionExpired(
                    SubscriptionExpired(
                        channel: c, originalTransactionId: original, notificationId: e, reason: .billingRetry)))
            return nil
        }
        return expires + int(2...(grace ? 60 : 72)) * Sim.hour
    }

    /// Period `k` renewed at `purchase` (the notification lost sometimes, found by the server's
    /// poll): the renewal, its notice and its grant. Returns the new expiry.
    mutating func renew(
        _ c: Channel, _ d: ProductDefinition, original: String, firstTx: String, period k: Int,
        expires: Int64, purchase: Int64, periodDays: Int64
    ) -> (Int64, String) {
        let rtx = c == .appstore ? appleTx() : "\(firstTx)..\(k - 1)"
        let rexp = purchase + periodDays * Sim.day
        let price = d.price
        let renewed = SubscriptionRenewed(
            channel: c, originalTransactionId: original, transactionId: rtx, productId: d.storeProductId,
            purchaseDate: Timestamp(microsecondsSince1970: purchase),
            expiresDate: Timestamp(microsecondsSince1970: rexp),
            price: price)
        let recovered = purchase != expires
        let grantDays = d.entitlement
        if chance(0.1) {
            // The renewal notification is lost; the server's poll finds it two hours later;
            // the store's retry of the notification lands a day later (nothing new to grant).
            var t = purchase + int(90...150) * Sim.minute
            _ = verified(t, d, tx: rtx, original: original, purchased: purchase, expires: rexp)
            t += int(1...3) * Sim.sec
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: rtx, entitlement: grantDays
                    )))
            t = purchase + int(20...30) * Sim.hour
            renewalNotice(t, c, rtx, original, recovered: recovered)
            emit(t + Sim.sec, .subscriptionRenewed(renewed))
        } else {
            var t = purchase + int(10...120) * Sim.sec
            renewalNotice(t, c, rtx, original, recovered: recovered)
            emit(t + Sim.sec, .subscriptionRenewed(renewed))
            t += int(2...10) * Sim.sec
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: rtx, entitlement: grantDays
                    )))
        }
        return (rexp, rtx)
    }

    mutating func renewalNotice(_ t: Int64, _ c: Channel, _ tx: String, _ original: String, recovered: Bool) {
        if c == .appstore {
            notify(
                t, c, appleNotificationId(), "DID_RENEW", recovered ? "BILLING_RECOVERY" : nil, tx: tx,
                original: original)
        } else {
            notify(
                t, c, googleMessageId(), recovered ? "1" : "2",
                recovered ? "SUBSCRIPTION_RECOVERED" : "SUBSCRIPTION_RENEWED", tx: tx, original: original)
        }
    }

    /// The user upgrades to the plus plan during a period: Apple charges the new plan at once (a new
    /// transaction of the same subscription, prorating the old one) and the old period is upgraded
    /// away. Returns the new period's expiry.
    /// An immediate upgrade: the running period ends at the change (Apple refunds its unused part),
    /// so fulfilment takes back its unused days; the new plan starts a period at once.
    mutating func upgrade(
        before expires: Int64, _ c: Channel, to d: ProductDefinition, original: String, firstTx: String,
        running: (tx: String, purchase: Int64), runningDays: Int64
    ) -> Int64 {
        let periodDays = d.entitlement.periodDays ?? 7
        // At least four hours into the running period: after its renewal was granted, even one found
        // by a poll two and a half hours late (an upgrade takes back days of a grant that exists).
        var t = expires - int(1...(periodDays * 24 - 4)) * Sim.hour
        let tx = appleTx()
        let n = appleNotificationId()
        callback(t, c, tx: tx, product: d.storeProductId, report: true)
        t += int(1...5) * Sim.sec
        notify(t, c, n, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", tx: tx, original: original)
        let changedAt = t + Sim.sec
        emit(
            changedAt,
            .planChanged(
                PlanChanged(
                    channel: c, originalTransactionId: original, notificationId: n, toProductId: d.storeProductId,
                    effective: .immediate)))
        let used = (changedAt - running.purchase + Sim.day / 2) / Sim.day
        if runningDays > used {
            emit(
                changedAt + 2 * Sim.sec,
                .entitlementRevoked(
                    EntitlementRevoked(
                        userId: uid, channel: c, transactionId: running.tx, reason: .upgrade, units: runningDays - used,
                        revocationId: "rv\(nn)-\(next())")))
        }
        t += int(2...5) * Sim.sec
        let purchase = t - int(5...20) * Sim.sec
        let rexp = purchase + periodDays * Sim.day
        _ = verified(t, d, tx: tx, original: original, purchased: purchase, expires: rexp)
        t += int(1...3) * Sim.sec
        emit(
            t,
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, entitlement: d.entitlement)
            ))
        return rexp
    }
}
