import Foundation
import LedgerCore
import LedgerDomain
import LedgerNotifications

// The stores' signed word, as the stores send it: notifications built in the stores' own shapes and
// made into facts by the same translators as `ledger serve` (docs/domain.md, section 7).
extension UserSim {
    // MARK: notifications through the translators

    static func ms(_ t: Int64) -> JSONValue { .int(t / 1000) }

    /// An App Store notification signed at `t`: its facts appended as the service would.
    @discardableResult
    mutating func appleSigned(
        _ t: Int64, _ type: String, _ subtype: String? = nil, transaction: [(String, JSONValue)]? = nil,
        renewal: [(String, JSONValue)]? = nil
    ) -> [Fact] {
        let app = Sim.apps[.appstore]?.app ?? "com.sim.app"
        var payload: [(String, JSONValue)] = [("notificationType", .string(type))]
        if let subtype { payload.append(("subtype", .string(subtype))) }
        payload += [
            ("notificationUUID", .string(appleNotificationId())), ("version", .string("2.0")),
            ("signedDate", Self.ms(t)),
            (
                "data",
                .makeObject([("bundleId", .string(app)), ("environment", .string("Production")), ("status", .int(1))])
            ),
        ]
        let tx = transaction.map {
            JSONValue.makeObject([("bundleId", .string(app)), ("environment", .string("Production"))] + $0)
        }
        let verified = AppleVerifier.Verified(
            payload: .makeObject(payload), transaction: tx, renewal: renewal.map { .makeObject($0) },
            signedDate: Date(timeIntervalSince1970: Double(t / 1000) / 1000))
        return emitTranslated(
            t, NotificationTranslator.appStore(verified, raw: Array(JSONValue.makeObject(payload).compactText.utf8)))
    }

    /// A Google Play developer notification about a purchase token.
    @discardableResult
    mutating func googleSigned(_ t: Int64, subscription code: Int64, token: String) -> [Fact] {
        let n = JSONValue.makeObject([
            ("version", .string("1.0")), ("packageName", .string(Sim.apps[.googleplay]?.app ?? "com.sim.app")),
            ("eventTimeMillis", .string(String(t / 1000))),
            (
                "subscriptionNotification",
                .makeObject([
                    ("version", .string("1.0")), ("notificationType", .int(code)), ("purchaseToken", .string(token)),
                ])
            ),
        ])
        return googleSigned(t, n)
    }

    @discardableResult
    mutating func googleSigned(_ t: Int64, _ n: JSONValue) -> [Fact] {
        let v = GooglePlayVerifier.Verified(messageId: googleMessageId(), publishTime: nil, notification: n)
        return emitTranslated(t, NotificationTranslator.googlePlay(v, raw: Array(n.compactText.utf8)))
    }

    /// Appends what a translation gave, one microsecond apart, in its order.
    mutating func emitTranslated(_ t: Int64, _ n: NotificationFacts) -> [Fact] {
        for (i, f) in n.facts.enumerated() { emit(t + Int64(i), f) }
        return n.facts
    }

    /// Apple's signed transaction of `d` (price in milliunits, as Apple signs it).
    func appleTransaction(
        _ d: ProductDefinition, tx: String, original: String, purchased: Int64, expires: Int64? = nil,
        price: (milliunits: Int64, currency: String)? = nil, more: [(String, JSONValue)] = []
    ) -> [(String, JSONValue)] {
        let p = price ?? ((d.price?.milliunits ?? 0), d.price?.currency.code ?? "CNY")
        var out: [(String, JSONValue)] = [
            ("transactionId", .string(tx)), ("originalTransactionId", .string(original)),
            ("productId", .string(d.storeProductId)), ("purchaseDate", Self.ms(purchased)), ("quantity", .int(1)),
            ("inAppOwnershipType", .string("PURCHASED")), ("price", .int(p.milliunits)),
            ("currency", .string(p.currency)),
        ]
        if let expires { out.append(("expiresDate", Self.ms(expires))) }
        return out + more
    }

    // MARK: clean lifecycles

    /// A one-time App Store purchase charged in another currency, or at a price that is not a whole
    /// number of minor units (USD 1995 milliunits), learnt from ONE_TIME_CHARGE: kept exactly.
    mutating func foreignPricePurchase(_ start: Int64) {
        let d = Simulator.def(.appstore, "com.sim.coins60")
        let price: (milliunits: Int64, currency: String) = pick([
            ((1995, "USD"), 3), ((1990, "USD"), 1), ((120_000, "JPY"), 2),
            ((1_500_000, "KRW"), 1), ((1990, "BHD"), 2), ((990, "KWD"), 1),
        ])
        var t = start
        let o = orderId(), token = uuid()
        createOrder(t, o, d, token: token.lowercased)
        t += int(1...5) * Sim.sec
        emit(t, .paymentLaunched(PaymentLaunched(orderId: o, channel: .appstore)))
        let paidAt = t + int(15...60) * Sim.sec
        let tx = appleTx()
        t = paidAt + int(2...30) * Sim.sec
        let facts = appleSigned(
            t, "ONE_TIME_CHARGE",
            transaction: appleTransaction(
                d, tx: tx, original: tx, purchased: paidAt, price: price,
                more: [("appAccountToken", .string(token.lowercased))]))
        guard case .paymentVerified(let v)? = facts.dropFirst().first else {
            preconditionFailure("simulator: ONE_TIME_CHARGE gave \(facts)")
        }
        t += int(1...3) * Sim.sec
        guard let b = bind(t, v), b.orderId == o else { preconditionFailure("simulator: \(tx) not bound to \(o)") }
        t += int(1...3) * Sim.sec
        grant(t, d, tx: tx, order: o)
    }

    /// Google: a pause scheduled before the period ends, paused at its end, restarted days later.
    /// Returns when it restarted (the next period's purchase).
    mutating func googlePause(token: String, expires: Int64) -> Int64 {
        googleSigned(expires - int(24...72) * Sim.hour, subscription: 11, token: token)
        googleSigned(expires + int(1...60) * Sim.sec, subscription: 10, token: token)
        let restart = expires + int(2...6) * Sim.day
        googleSigned(restart, subscription: 7, token: token)
        return restart + int(1...30) * Sim.sec
    }

    /// Apple asks for consent to a higher price before the renewal: accepted (the subscription
    /// renews), or never given (it expires for it). Returns false when it expired.
    mutating func applePriceIncrease(_ d: ProductDefinition, original: String, firstTx: String, expires: Int64) -> Bool
    {
        let renewal: [(String, JSONValue)] = [
            ("originalTransactionId", .string(original)), ("autoRenewProductId", .string(d.storeProductId)),
            ("renewalPrice", .int((d.price?.milliunits ?? 0) * 5 / 4)),
            ("currency", .string(d.price?.currency.code ?? "CNY")),
        ]
        let tx = appleTransaction(
            d, tx: firstTx, original: original, purchased: expires - (d.entitlement.periodDays ?? 7) * Sim.day,
            expires: expires)
        let asked = expires - int(48...120) * Sim.hour
        appleSigned(asked, "PRICE_INCREASE", "PENDING", transaction: tx, renewal: renewal)
        if chance(0.7) {
            appleSigned(asked + int(1...40) * Sim.hour, "PRICE_INCREASE", "ACCEPTED", transaction: tx, renewal: renewal)
            return true
        }
        appleSigned(expires + int(1...30) * Sim.sec, "EXPIRED", "PRICE_INCREASE", transaction: tx, renewal: renewal)
        return false
    }

    // MARK: lifecycle faults

    /// subscription-drift through a lifecycle: fulfilment keeps access past the grace period's end
    /// (App Store) or through on hold (Google) by granting the first period days the store never
    /// gave; the subscription then fails to renew and expires in billing retry.
    mutating func accessKeptPastLapse(
        _ c: Channel, _ d: ProductDefinition, tx: String, original: String, order o: String,
        purchased: Int64, expires: Int64, at t: Int64
    ) {
        let periodDays = d.entitlement.periodDays ?? 7
        let txJSON = appleTransaction(d, tx: tx, original: original, purchased: purchased, expires: expires)
        let kept: Int64
        if c == .appstore {
            let graceEnd = expires + 3 * Sim.day
            kept = periodDays + 3 + int(1...4)
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                        entitlement: .period(entitlement: "vip", days: kept))))
            appleSigned(
                expires + int(1...60) * Sim.sec, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", transaction: txJSON,
                renewal: [
                    ("originalTransactionId", .string(original)), ("gracePeriodExpiresDate", Self.ms(graceEnd)),
                    ("isInBillingRetryPeriod", .bool(true)),
                ])
            appleSigned(graceEnd + int(1...60) * Sim.sec, "GRACE_PERIOD_EXPIRED", transaction: txJSON)
            appleSigned(graceEnd + int(4...20) * Sim.day, "EXPIRED", "BILLING_RETRY", transaction: txJSON)
        } else {
            kept = periodDays + int(2...5)
            emit(
                t,
                .entitlementGranted(
                    EntitlementGranted(
                        grantId: "g\(nn)-\(next())", userId: uid, channel: c, transactionId: tx, orderId: o,
                        entitlement: .period(entitlement: "vip", days: kept))))
            googleSigned(expires + int(1...60) * Sim.sec, subscription: 5, token: original)
            googleSigned(expires + int(10...30) * Sim.day, subscription: 13, token: original)
        }
        expect(.subscriptionDrift, c, tx: tx, order: o, user: uid)
    }

    /// refund-not-revoked by the store's own revocation: Apple REVOKE (family sharing withdrawn)
    /// and fulfilment kept the purchase.
    mutating func storeRevokeKept(_ t: Int64, _ v: PaymentVerified, order: String?) {
        guard let d = Simulator.catalogue.first(where: { $0.channel == v.channel && $0.storeProductId == v.productId })
        else { return }
        appleSigned(
            t, "REVOKE",
            transaction: appleTransaction(
                d, tx: v.transactionId, original: v.originalTransactionId ?? v.transactionId,
                purchased: v.purchaseDate.microseconds,
                more: [
                    ("revocationDate", Self.ms(t - int(1...30) * Sim.minute)),
                    ("revocationReason", .int(0)), ("revocationType", .string("FAMILY_REVOKE")),
                ]))
        expect(.refundNotRevoked, v.channel, tx: v.transactionId, order: order, user: uid)
    }

    /// missing-grant after a reversal: Apple refunded, fulfilment took it back, Apple reversed the
    /// refund and fulfilment never granted it again.
    mutating func reversalNotRegranted(_ start: Int64, _ v: PaymentVerified, order: String?) {
        guard let d = Simulator.catalogue.first(where: { $0.channel == v.channel && $0.storeProductId == v.productId })
        else { return }
        var t = start
        let tx = appleTransaction(
            d, tx: v.transactionId, original: v.originalTransactionId ?? v.transactionId,
            purchased: v.purchaseDate.microseconds,
            more: [
                ("revocationDate", Self.ms(t - int(1...30) * Sim.minute)), ("revocationReason", .int(0)),
                ("revocationType", .string("REFUND_FULL")),
            ])
        appleSigned(t, "REFUND", transaction: tx)
        t += int(1...5) * Sim.minute
        revoke(t, v.channel, tx: v.transactionId, reason: .refund)
        t += int(1...5) * Sim.day
        appleSigned(
            t, "REFUND_REVERSED",
            transaction: appleTransaction(
                d, tx: v.transactionId, original: v.originalTransactionId ?? v.transactionId,
                purchased: v.purchaseDate.microseconds))
        expect(.missingGrant, v.channel, tx: v.transactionId, order: order, user: uid)
    }
}
