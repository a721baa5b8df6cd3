import Foundation
import LedgerCore
import LedgerDomain

// App Store Server Notifications V2, every type and subtype, as facts.
extension NotificationTranslator {
    /// Apple App Store Server Notifications V2, every type and subtype (docs/domain.md).
    public static func appStore(_ v: AppleVerifier.Verified, raw: [UInt8]) -> NotificationFacts {
        let p = v.payload
        let digest = NotificationFacts.digest(raw)
        let signedAt = Timestamp(millisecondsSince1970: Int64((v.signedDate.timeIntervalSince1970 * 1000).rounded()))
        let type = p["notificationType"]?.stringValue ?? ""
        let subtype = p["subtype"]?.stringValue
        let id = p["notificationUUID"]?.stringValue ?? digest
        let bundle = p["data"]?["bundleId"]?.stringValue
        let t = v.transaction, r = v.renewal
        let transactionId = t?["transactionId"]?.stringValue
        let original = t?["originalTransactionId"]?.stringValue ?? r?["originalTransactionId"]?.stringValue
        var out = Translation()
        func ms(_ j: JSONValue?, _ key: String) -> Timestamp? {
            j?[key]?.intValue.map(Timestamp.init(millisecondsSince1970:))
        }
        func needOriginal(_ body: (String) -> Fact) { out.add("originalTransactionId", original, body) }
        func price(_ j: JSONValue?, _ amountKey: String) -> Money? {
            guard let amount = j?[amountKey]?.intValue, let code = j?["currency"]?.stringValue, let c = Currency(code)
            else { return nil }
            return Money(storeAmount: amount, unit: .milliunits, currency: c)
        }

        /// The signed transaction as a verified payment: its product, purchase date and price, or nil
        /// (with what it lacks) when it cannot be one.
        func verify() -> (productId: String, purchased: Timestamp, amount: Money)? {
            guard let t, let transactionId else {
                out.missing("signedTransactionInfo")
                return nil
            }
            guard let productId = t["productId"]?.stringValue, let purchased = ms(t, "purchaseDate") else {
                out.missing("the transaction's productId or purchaseDate")
                return nil
            }
            guard let amount = price(t, "price") else {
                out.missing("the transaction's price and currency (a known ISO 4217 code)")
                return nil
            }
            out.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: .appstore, transactionId: transactionId, originalTransactionId: original,
                        productId: productId,
                        quantity: max(1, t["quantity"]?.intValue ?? 1), purchaseDate: purchased,
                        expiresDate: ms(t, "expiresDate"),
                        environment: StoreEnvironment(raw: t["environment"]?.stringValue ?? "Production"),
                        ownership: Ownership(raw: t["inAppOwnershipType"]?.stringValue ?? "PURCHASED"), price: amount,
                        appAccountToken: t["appAccountToken"]?.stringValue.flatMap(UUID.init(uuidString:)),
                        rawDigest: digest, app: bundle,
                        offer: t["offerType"]?.intValue.map {
                            "offerType-\($0)" + (t["offerIdentifier"]?.stringValue.map { ":" + $0 } ?? "")
                        })))
            return (productId, purchased, amount)
        }
        func changePlan(to product: String?, _ effective: PlanChangeEffect) {
            guard let product else { return out.missing("signedRenewalInfo's autoRenewProductId") }
            needOriginal {
                .planChanged(
                    PlanChanged(
                        channel: .appstore, originalTransactionId: $0, notificationId: id, toProductId: product,
                        effective: effective, app: bundle))
            }
        }

        switch type {
        case "SUBSCRIBED", "OFFER_REDEEMED", "ONE_TIME_CHARGE", "DID_RENEW":
            guard let (productId, purchased, amount) = verify() else { break }
            // An offer redeemed to upgrade takes effect at once; to downgrade, at the next renewal.
            if type == "OFFER_REDEEMED" && subtype == "UPGRADE" { changePlan(to: productId, .immediate) }
            if type == "OFFER_REDEEMED" && subtype == "DOWNGRADE" {
                changePlan(to: r?["autoRenewProductId"]?.stringValue, .nextRenewal)
            }
            if type == "DID_RENEW", let original, let transactionId, let expires = ms(t, "expiresDate"),
                expires > purchased
            {
                out.add(
                    .subscriptionRenewed(
                        SubscriptionRenewed(
                            channel: .appstore, originalTransactionId: original, transactionId: transactionId,
                            productId: productId,
                            purchaseDate: purchased, expiresDate: expires, price: amount, app: bundle)))
            }
        case "DID_FAIL_TO_RENEW":
            // No subtype: billing retry without grace; a subtype Apple adds later is not guessed at.
            guard subtype == nil || subtype == "GRACE_PERIOD" else {
                out.unknown("subtype \(subtype ?? "none")")
                break
            }
            // In grace without its end, the failure is recorded as grace with no end (as Google's is),
            // and the notification says what it lacks.
            let endless = subtype == "GRACE_PERIOD" && ms(r, "gracePeriodExpiresDate") == nil
            if endless { out.missing("gracePeriodExpiresDate") }
            needOriginal { o in
                .renewalFailed(
                    RenewalFailed(
                        channel: .appstore, originalTransactionId: o, notificationId: id,
                        gracePeriodExpiresAt: subtype == "GRACE_PERIOD" ? ms(r, "gracePeriodExpiresDate") : nil,
                        inBillingRetry: !endless, app: bundle))
            }
        case "GRACE_PERIOD_EXPIRED":
            needOriginal {
                .subscriptionStateChanged(
                    SubscriptionStateChanged(
                        channel: .appstore, originalTransactionId: $0, notificationId: id,
                        change: .graceEnded, effectiveAt: signedAt, app: bundle))
            }
        case "EXPIRED":
            let reasons: [String: ExpirationReason] = [
                "VOLUNTARY": .voluntary, "BILLING_RETRY": .billingRetry,
                "PRICE_INCREASE": .priceIncrease, "PRODUCT_NOT_FOR_SALE": .productNotForSale,
            ]
            // Without a subtype Apple says it expired "for some other reason": not the user's choice.
            let reason = subtype.map { reasons[$0] ?? ExpirationReason(raw: $0) } ?? .unspecified
            needOriginal {
                .subscriptionExpired(
                    SubscriptionExpired(
                        channel: .appstore, originalTransactionId: $0, notificationId: id, reason: reason, app: bundle))
            }
        case "DID_CHANGE_RENEWAL_STATUS":
            guard subtype == "AUTO_RENEW_ENABLED" || subtype == "AUTO_RENEW_DISABLED" else {
                out.unknown("subtype \(subtype ?? "none")")
                break
            }
            needOriginal {
                .autoRenewChanged(
                    AutoRenewChanged(
                        channel: .appstore, originalTransactionId: $0, notificationId: id,
                        enabled: subtype == "AUTO_RENEW_ENABLED", app: bundle))
            }
        case "DID_CHANGE_RENEWAL_PREF":
            // No subtype: the renewal goes back to the product in force (a downgrade canceled).
            guard subtype == nil || subtype == "UPGRADE" || subtype == "DOWNGRADE" else {
                out.unknown("subtype \(subtype ?? "none")")
                break
            }
            // An upgrade is charged at once: the signed transaction is the new period's payment.
            if subtype == "UPGRADE" { _ = verify() }
            changePlan(to: r?["autoRenewProductId"]?.stringValue, subtype == "UPGRADE" ? .immediate : .nextRenewal)
        case "PRICE_INCREASE":
            guard subtype == "PENDING" || subtype == "ACCEPTED" else {
                out.unknown("subtype \(subtype ?? "none")")
                break
            }
            needOriginal {
                .subscriptionStateChanged(
                    SubscriptionStateChanged(
                        channel: .appstore, originalTransactionId: $0, notificationId: id, change: .priceConsent,
                        effectiveAt: signedAt,
                        priceConsent: subtype == "ACCEPTED" ? .accepted : .pending, newPrice: price(r, "renewalPrice"),
                        app: bundle))
            }
        case "RENEWAL_EXTENDED":
            guard let expires = ms(t, "expiresDate") else {
                out.missing("the transaction's expiresDate")
                break
            }
            needOriginal {
                .subscriptionStateChanged(
                    SubscriptionStateChanged(
                        channel: .appstore, originalTransactionId: $0, notificationId: id, change: .extended,
                        effectiveAt: signedAt,
                        expiresAt: expires, transactionId: transactionId, app: bundle))
            }
        case "CONSUMPTION_REQUEST", "REFUND_DECLINED", "REFUND_REVERSED":
            guard let transactionId else {
                out.missing("signedTransactionInfo")
                break
            }
            let notice = RefundNotice(
                channel: .appstore, transactionId: transactionId, notificationId: id, signedAt: signedAt, app: bundle)
            out.add(
                type == "CONSUMPTION_REQUEST"
                    ? .refundRequested(notice)
                    : type == "REFUND_DECLINED" ? .refundDeclined(notice) : .refundReversed(notice))
        case "REFUND":
            guard let t, let transactionId, let revoked = ms(t, "revocationDate") else {
                out.missing("the transaction's revocationDate")
                break
            }
            let revocationType = t["revocationType"]?.stringValue
            // Absent (before Apple named it): a full refund. A type Apple adds later is not taken
            // for one: it could return less money, or none.
            if let revocationType, !["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"].contains(revocationType) {
                out.unknown("revocationType \(revocationType)")
                break
            }
            if revocationType == "FAMILY_REVOKE" {
                // No money moved: the store took the shared copy back.
                needOriginal {
                    .storeRevoked(
                        StoreRevoked(
                            channel: .appstore, originalTransactionId: $0, transactionId: transactionId,
                            notificationId: id,
                            revokedAt: revoked, revocationType: revocationType,
                            reason: t["revocationReason"]?.intValue.map(String.init), app: bundle))
                }
                break
            }
            guard let full = price(t, "price") else {
                out.missing("the transaction's price and currency")
                break
            }
            var amount = full
            if revocationType == "REFUND_PRORATED" {
                guard let pct = t["revocationPercentage"]?.intValue, pct > 0, pct <= 100_000 else {
                    out.missing("revocationPercentage (1 to 100000) of a REFUND_PRORATED")
                    break
                }
                // revocationPercentage is in thousandths of a percent.
                amount = full.share(pct, 100_000)
            }
            out.add(
                .refunded(
                    Refunded(
                        channel: .appstore, transactionId: transactionId, refundId: id, amount: amount,
                        refundedAt: revoked,
                        reason: t["revocationReason"]?.intValue.map { "revocationReason-\($0)" }, app: bundle)))
        case "REVOKE":
            guard let t, let transactionId else {
                out.missing("signedTransactionInfo")
                break
            }
            needOriginal {
                .storeRevoked(
                    StoreRevoked(
                        channel: .appstore, originalTransactionId: $0, transactionId: transactionId, notificationId: id,
                        revokedAt: ms(t, "revocationDate") ?? signedAt,
                        revocationType: t["revocationType"]?.stringValue ?? "FAMILY_REVOKE",
                        reason: t["revocationReason"]?.intValue.map(String.init), app: bundle))
            }
        case "TEST", "RENEWAL_EXTENSION":
            // A test, or the summary of a mass extension (each subscription's RENEWAL_EXTENDED follows): nothing owed.
            break
        default:
            out.unknown("type \(type.isEmpty ? "(none)" : type)" + (subtype.map { "/\($0)" } ?? ""))
        }
        if p["notificationUUID"]?.stringValue == nil { out.missing("notificationUUID (the digest stands for it)") }
        let notification = StoreNotificationReceived(
            channel: .appstore, notificationId: id, type: NotificationType(raw: type.isEmpty ? "UNKNOWN" : type),
            subtype: subtype.map { NotificationType(raw: $0) }, signedAt: signedAt, transactionId: transactionId,
            originalTransactionId: original,
            rawDigest: digest, app: bundle, untranslated: out.reason, awaiting: out.awaiting)
        return NotificationFacts(
            channel: .appstore, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
            occurredAt: signedAt, raw: raw, rawHeaders: .makeObject([]), rawDigest: digest)
    }
}
