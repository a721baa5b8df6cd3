import Foundation
import LedgerCore
import LedgerDomain

extension UserSim {
    // MARK: one-time purchases

    enum AppleFlow { case storeKit2, username, usernameNil, interrupted, verifyRetry }

    mutating func oneTime(_ start: Int64, _ d: ProductDefinition, fault: FindingKind?) {
        var t = start
        if d.entitlement == .feature("no_ads") { ownsNoAds = true }
        // Sometimes a first attempt is abandoned: cancelled in the store sheet, closed by the user.
        if chance(0.08) { t = abandonedAttempt(t, d) }
        var flow: AppleFlow = pick([
            (.storeKit2, 45), (.username, 25), (.usernameNil, 12), (.interrupted, 8), (.verifyRetry, 10),
        ])
        if hasStaleOrder && (flow == .usernameNil || flow == .interrupted) { flow = .storeKit2 }
        if fault == .productMismatch { flow = .username }

        let o = orderId()
        let tx: String
        switch d.channel {
        case .appstore: (t, tx) = appleOneTime(t, d, order: o, flow: flow, fault: fault)
        case .googleplay: (t, tx) = googleOneTime(t, d, order: o, fault: fault)
        case .wechat: (t, tx) = wechatOneTime(t, d, order: o, fault: fault)
        }
        guard fault == nil else { return }
        if d.entitlement == .feature("no_ads") && chance(0.3) {
            chance(0.5) ? restoreOnNewAccount(t, d, tx: tx, order: o) : familySharedCopy(t, d)
        } else if case .period = d.entitlement, chance(0.2) {
            moveRemainingDays(t, d, tx: tx, order: o)
        } else if d.channel == .appstore, case .coins = d.entitlement, chance(0.05) {
            sameIdInSecondApp(t, d, tx: tx)
        } else {
            maybeRefund(t, d, tx: tx, order: o)
        }
    }

    /// An order created, launched, cancelled and closed. Returns the time after it.
    mutating func abandonedAttempt(_ start: Int64, _ d: ProductDefinition) -> Int64 {
        var t = start
        let c = d.channel
        let o = orderId()
        createOrder(
            t, o, d, token: c == .wechat ? o : (c == .appstore && chance(0.5) ? nil : uuid().uuidString.lowercased()))
        t += int(1...4) * Sim.sec
        emit(
            t,
            .paymentLaunched(PaymentLaunched(orderId: o, channel: c, prepayId: c == .wechat ? "wx\(nn)\(next())" : nil))
        )
        t += int(5...60) * Sim.sec
        if c != .wechat { callback(t, c, tx: nil, product: d.storeProductId, state: .cancelled, order: o) }
        t += int(10...60) * Sim.sec
        close(t, o, chance(0.5) ? .userCancel : .timeout)
        t += int(1...10) * Sim.minute
        return t
    }

    /// One App Store purchase in the given StoreKit flow. Returns the time after it and the
    /// transaction that was paid.
    mutating func appleOneTime(
        _ start: Int64, _ d: ProductDefinition, order o: String, flow: AppleFlow,
        fault: FindingKind?
    ) -> (Int64, String) {
        var t = start
        let c = d.channel
        var tx: String
        let bound: TransactionBound?
        let paidAt: Int64
        let token = flow == .storeKit2 ? uuid() : nil
        createOrder(t, o, d, token: token?.lowercased)
        t += int(1...5) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
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
                (t, bound) = verifyBindGrant(t, charged, tx: tx, purchased: paidAt, token: token, fault: fault)
                t += int(1...20) * Sim.hour
                // Re-delivered at the next launch, sometimes before anyone signed in again.
                callback(t, c, tx: tx, product: charged.storeProductId, report: true, signedOut: chance(0.25))
            } else {
                t = paidAt + int(1...5) * Sim.sec
                callback(t, c, tx: tx, product: charged.storeProductId, report: true)
                if chance(0.15) {
                    t += int(2...8) * Sim.sec
                    callback(t, c, tx: tx, product: charged.storeProductId, report: true)
                }
                t += int(1...3) * Sim.sec
                (t, bound) = verifyBindGrant(t, charged, tx: tx, purchased: paidAt, token: token, fault: fault)
            }
        case .username, .verifyRetry:
            t = paidAt + int(1...5) * Sim.sec
            callback(t, c, tx: tx, product: charged.storeProductId, order: o, username: o)
            if flow == .verifyRetry {
                t += int(1...3) * Sim.sec
                emit(
                    t,
                    .verificationFailed(
                        VerificationFailed(channel: c, transactionId: tx, code: 21005, retryable: true, attempt: 1)))
                if chance(0.5) {
                    t += int(30...90) * Sim.sec
                    emit(
                        t,
                        .verificationFailed(
                            VerificationFailed(channel: c, transactionId: tx, code: 21005, retryable: true, attempt: 2))
                    )
                }
                t += int(2...6) * Sim.minute
            } else {
                t += int(1...3) * Sim.sec
            }
            (t, bound) = verifyBindGrant(t, charged, tx: tx, purchased: paidAt, fault: fault)
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
            (t, bound) = verifyBindGrant(t, d, tx: tx, purchased: paidAt, fault: fault)
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
            (t, bound) = verifyBindGrant(t, d, tx: tx, purchased: paid2, fault: fault)
        }
        if bound?.orderId != o {
            preconditionFailure("simulator: \(tx) bound to \(String(describing: bound)), expected \(o) (\(flow))")
        }
        return (t, tx)
    }

    /// Verifies a paid one-time transaction at `start`, binds it and grants it (see ``finish``).
    /// Returns the time after it and the binding.
    mutating func verifyBindGrant(
        _ start: Int64, _ d: ProductDefinition, tx: String, purchased: Int64, token: UUID? = nil,
        fault: FindingKind?
    ) -> (Int64, TransactionBound?) {
        var t = start
        let v = verified(t, d, tx: tx, purchased: purchased, token: token)
        t += int(1...3) * Sim.sec
        let bound = bind(t, v)
        t += int(1...3) * Sim.sec
        return (finish(t, d, v, bound, fault: fault), bound)
    }

    /// The backend acknowledges a Google purchase a few seconds after granting it; as a fault, it
    /// never does (Google refunds it after three days). Returns the time after it.
    /// Fulfilment acknowledges the purchase bought at `purchased`. When the server learns of it too
    /// late for the 3-day deadline (its notification lost, found days later), the app had already
    /// acknowledged it on the device at purchase: the fact, recorded now, carries that time, and
    /// the deadline was met.
    mutating func acknowledge(
        _ start: Int64, _ c: Channel, tx: String, order: String?, purchased: Int64, fault: FindingKind?,
        kind: AcknowledgementKind = .acknowledge
    ) -> Int64 {
        guard fault != .unacknowledgedPurchase else {
            expect(.unacknowledgedPurchase, c, tx: tx, order: order, user: uid)
            return start
        }
        let t = start + int(1...3) * Sim.sec
        let done = t - purchased < 2 * Sim.day ? t : purchased + int(1...20) * Sim.minute
        emit(
            t,
            .purchaseAcknowledged(
                PurchaseAcknowledged(
                    channel: c, transactionId: tx, acknowledgedAt: Timestamp(microsecondsSince1970: done),
                    kind: kind)))
        return t
    }

    /// One Google Play one-time purchase. Returns the time after it and its order id.
    mutating func googleOneTime(
        _ start: Int64, _ d: ProductDefinition, order o: String, fault: FindingKind?
    ) -> (Int64, String) {
        var t = start
        let c = d.channel
        let tx: String
        let bound: TransactionBound?
        let paidAt: Int64
        let token = uuid()
        createOrder(t, o, d, token: token.lowercased)
        t += int(1...5) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: c)))
        paidAt = t + int(15...90) * Sim.sec
        tx = googleOrder()
        t = paidAt + int(1...5) * Sim.sec
        let lost = chance(0.15)
        if !lost { callback(t, c, tx: tx, product: d.storeProductId, order: o, report: true) }
        t += int(1...10) * Sim.sec
        notify(t, c, googleMessageId(), "1", "ONE_TIME_PRODUCT_PURCHASED", tx: tx)
        t += int(1...3) * Sim.sec
        (t, bound) = verifyBindGrant(t, d, tx: tx, purchased: paidAt, token: token, fault: fault)
        t = acknowledge(
            t, c, tx: tx, order: o, purchased: paidAt, fault: fault,
            kind: { if case .coins = d.entitlement { return .consume } else { return .acknowledge } }())
        if lost {
            t += int(1...20) * Sim.hour
            callback(t, c, tx: tx, product: d.storeProductId, order: o, report: true)
        }
        if bound?.orderId != o { preconditionFailure("simulator: google \(tx) not bound to \(o)") }
        return (t, tx)
    }

    /// One WeChat Pay purchase. Returns the time after it and its transaction id.
    mutating func wechatOneTime(
        _ start: Int64, _ d: ProductDefinition, order o: String, fault: FindingKind?
    ) -> (Int64, String) {
        var t = start
        let c = d.channel
        let tx: String
        let v: PaymentVerified
        let bound: TransactionBound?
        let paidAt: Int64
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
        v = verified(t, d, tx: tx, purchased: paidAt) { $0.outTradeNo = o }
        t += Sim.sec
        bound = bind(t, v)
        t += Sim.sec
        t = finish(t, d, v, bound, fault: fault)
        if notificationLost || chance(0.3) {
            // The notification (again, under a new id) arrives late: nothing new to do.
            t += int(10...300) * Sim.sec
            notify(t, c, wechatNotificationId(), "TRANSACTION.SUCCESS", tx: tx, tradeState: "SUCCESS", outTradeNo: o)
        }
        if bound?.orderId != o { preconditionFailure("simulator: wechat \(tx) not bound to \(o)") }
        return (t, tx)
    }

    /// Grants (or, under a fault, mis-grants) a bound one-time transaction and plays the fault's
    /// follow-up. Returns the time after it.
    mutating func finish(
        _ start: Int64, _ d: ProductDefinition, _ v: PaymentVerified, _ b: TransactionBound?, fault: FindingKind?
    ) -> Int64 {
        var t = start
        let c = d.channel, tx = v.transactionId
        let order = b?.orderId
        if fault == .doubleGrant, case .coins = d.entitlement, chance(0.4) {
            // One grant of twice what was paid (a quantity read from the wrong field): an over-grant.
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx,
                        orderId: order, entitlement: d.entitlement, quantity: v.quantity * 2)))
            expect(.doubleGrant, c, tx: tx, order: order, user: uid)
            return t
        }
        switch fault {
        case .missingGrant? where c == .appstore && chance(0.35):
            // Granted, refunded and taken back; Apple reversed the refund and fulfilment never granted it again.
            grant(t, d, tx: tx, order: order)
            reversalNotRegranted(t + int(1...10) * Sim.day, v, order: order)
            return t
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
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())-retry", userId: uid, channel: c, transactionId: tx,
                        orderId: order, entitlement: d.entitlement)))
            expect(.doubleGrant, c, tx: tx, order: order, user: uid)
        case .refundNotRevoked? where c == .appstore && chance(0.35):
            // The store took it back (family sharing withdrawn); fulfilment kept it.
            t += int(1...10) * Sim.day
            storeRevokeKept(t, v, order: order)
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
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())-support", userId: uid, channel: c, transactionId: tx,
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

    /// A tester's purchase in the App Store sandbox: recorded, sometimes granted, never revenue nor a finding.
    mutating func sandboxPurchase(_ start: Int64) {
        let d = Simulator.def(.appstore, "com.sim.coins60")
        var t = start
        let o = orderId(), token = uuid()
        createOrder(t, o, d, token: token.lowercased)
        t += int(20...90) * Sim.sec
        let tx = appleTx()
        let v = verified(t, d, tx: tx, purchased: t - 10 * Sim.sec, token: token, environment: .sandbox)
        t += int(1...3) * Sim.sec
        bind(t, v)
        if chance(0.5) { grant(t + Sim.sec, d, tx: tx, order: o) }
    }

    /// Support gives coins to make up for an outage: a grant by policy, with its authorizer.
    mutating func goodwillGrant(_ t: Int64) {
        emit(
            t,
            .entitlementGranted(
                EntitlementGranted(
                    grantId: "g\(nn)-\(next())-goodwill", userId: uid, transactionId: nil,
                    entitlement: .coins(pick([(30, 2), (60, 1)])), reason: .goodwill,
                    authorizedBy: pick([("support:alice", 1), ("support:bob", 1)]))))
    }
}
