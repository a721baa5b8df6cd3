import Foundation
import LedgerCore
import LedgerDomain

// Google Play real-time developer notifications, with the Play Developer API's read, as facts.
extension NotificationTranslator {
    static let googleSubscriptionTypes: [Int64: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED",
        9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED", 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED",
        12: "SUBSCRIPTION_REVOKED",
        13: "SUBSCRIPTION_EXPIRED", 17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED",
        19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED", 20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
        22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]

    /// Google Play Real-time developer notifications. The type is the RTDN code as Google numbers it
    /// (the ledger's folds read `12` as a revocation), the subtype its name. An RTDN carries only a
    /// purchase token: price, order id and expiry come from the Play Developer API's read of the
    /// subscription (`subscription`). Without it (no API configured, or the read failed:
    /// `readFailure`), a purchase or renewal is recorded as awaiting its verification.
    public static func googlePlay(
        _ v: GooglePlayVerifier.Verified, raw: [UInt8], subscription read: GooglePlaySubscriptionRead? = nil,
        product productRead: GooglePlayProductRead? = nil, itemsProduct: String? = nil,
        readFailure: String? = nil
    ) -> NotificationFacts {
        let n = v.notification
        let digest = NotificationFacts.digest(raw)
        let signedAt =
            n["eventTimeMillis"].flatMap { $0.intValue ?? $0.stringValue.flatMap { Int64($0) } }
            .map(Timestamp.init(millisecondsSince1970:)) ?? v.publishTime.flatMap(Timestamp.init)
            ?? Timestamp(millisecondsSince1970: 0)
        let package = n["packageName"]?.stringValue
        let id = v.messageId
        var type = "UNKNOWN", subtype: String?, original: String?, transactionId: String?
        var out = Translation()
        if let s = n["subscriptionNotification"] {
            let code = s["notificationType"]?.intValue
            type = code.map(String.init) ?? "UNKNOWN"
            subtype = code.flatMap { googleSubscriptionTypes[$0] }
            original = s["purchaseToken"]?.stringValue
            func needToken(_ body: (String) -> Fact) { out.add("purchaseToken", original, body) }
            func state(_ change: LifecycleChange, consent: PriceConsent? = nil, newPrice: Money? = nil) {
                needToken {
                    .subscriptionStateChanged(
                        SubscriptionStateChanged(
                            channel: .googleplay, originalTransactionId: $0, notificationId: id,
                            change: change, effectiveAt: signedAt, priceConsent: consent, newPrice: newPrice,
                            app: package))
                }
            }
            let failed = readFailure.map { " (the Play Developer API read failed: \($0))" } ?? ""
            /// A price change's consent with the new price, which only the API's read gives.
            func consent(_ c: PriceConsent) {
                if read?.newPrice == nil {
                    out.missing("the new price, which the Play Developer API read gives" + failed)
                }
                state(.priceConsent, consent: c, newPrice: read?.newPrice)
            }
            let product = s["subscriptionId"]?.stringValue
            subscription: switch code {
            case 1, 2, 4:
                if code == 1 { state(.resumed) }
                guard let read, let original, let product else {
                    out.await(
                        .verification,
                        "an RTDN carries no price, order id or expiry: the purchase read from the Play Developer API completes it"
                            + failed)
                    break
                }
                // A renewal's period starts at the notification (the read gives the subscription's start only).
                let purchased = code == 4 ? read.startTime : signedAt
                guard read.expiryTime > purchased else {
                    out.missing("an expiryTimeMillis after the period's start")
                    break
                }
                transactionId = read.orderId
                // Recorded only once paid, at what was charged (a free trial: nothing).
                let price: Money
                switch read.charged() {
                case .paid(let charged): price = charged
                case .unknown(let why):
                    out.await(.verification, "what was paid is unknown: \(why)")
                    break subscription
                }
                out.add(
                    .paymentVerified(
                        PaymentVerified(
                            channel: .googleplay, transactionId: read.orderId, originalTransactionId: original,
                            productId: product, purchaseDate: purchased,
                            expiresDate: read.expiryTime, environment: read.isTest ? .sandbox : .production,
                            price: price, rawDigest: digest, app: package,
                            linkedPurchaseToken: read.linkedPurchaseToken, obfuscatedAccountId: read.obfuscatedAccountId
                        )))
                if code != 4 {
                    out.add(
                        .subscriptionRenewed(
                            SubscriptionRenewed(
                                channel: .googleplay, originalTransactionId: original, transactionId: read.orderId,
                                productId: product, purchaseDate: purchased, expiresDate: read.expiryTime,
                                price: price, app: package)))
                }
            case 3, 18:
                needToken {
                    .autoRenewChanged(
                        AutoRenewChanged(
                            channel: .googleplay, originalTransactionId: $0, notificationId: id, enabled: false,
                            app: package))
                }
            case 5: state(.onHold)
            case 6:
                // In grace, the read's expiry is the grace period's end; without the read the failure is
                // recorded without it, and the notification says what it lacks.
                if read == nil {
                    out.missing("the grace period's end, which the Play Developer API read gives" + failed)
                }
                needToken {
                    .renewalFailed(
                        RenewalFailed(
                            channel: .googleplay, originalTransactionId: $0, notificationId: id,
                            gracePeriodExpiresAt: read?.expiryTime, inBillingRetry: false, app: package))
                }
            case 7: state(.resumed)
            case 8: consent(.accepted)
            case 19, 22: consent(.pending)
            case 10: state(.paused)
            case 11: state(.pauseScheduled)
            case 9:
                guard let read, let original else {
                    out.unknown("a deferral's new expiry is not in the notification" + failed)
                    break
                }
                out.add(
                    .subscriptionStateChanged(
                        SubscriptionStateChanged(
                            channel: .googleplay, originalTransactionId: original, notificationId: id,
                            change: .extended, effectiveAt: signedAt, expiresAt: read.expiryTime,
                            transactionId: read.orderId, app: package)))
            case 17:
                // The items in force changed at the notification: the plan the v2 read names.
                guard let to = itemsProduct, let original else {
                    out.unknown("the new plan's product is not in the notification" + failed)
                    break
                }
                out.add(
                    .planChanged(
                        PlanChanged(
                            channel: .googleplay, originalTransactionId: original, notificationId: id, toProductId: to,
                            effective: .immediate, app: package)))
            case 12:
                needToken {
                    .storeRevoked(
                        StoreRevoked(
                            channel: .googleplay, originalTransactionId: $0, notificationId: id, revokedAt: signedAt,
                            revocationType: "SUBSCRIPTION_REVOKED", app: package))
                }
            case 13:
                needToken {
                    .subscriptionExpired(
                        SubscriptionExpired(
                            channel: .googleplay, originalTransactionId: $0, notificationId: id,
                            reason: .unspecified, app: package))
                }
            case 20: break
            default: out.unknown("subscription notificationType \(code.map(String.init) ?? "(none)")")
            }
        } else if let o = n["oneTimeProductNotification"] {
            let code = o["notificationType"]?.intValue
            type = "ONE_TIME_PRODUCT_" + (code.map(String.init) ?? "UNKNOWN")
            original = o["purchaseToken"]?.stringValue
            switch code {
            case 1:
                subtype = "ONE_TIME_PRODUCT_PURCHASED"
                guard let productRead, let sku = o["sku"]?.stringValue else {
                    out.await(
                        .verification,
                        "an RTDN carries no price or order id: the purchase read from the Play Developer API completes it"
                            + (readFailure.map { " (the Play Developer API read failed: \($0))" } ?? ""))
                    break
                }
                transactionId = productRead.orderId
                switch productRead.purchaseState {
                case 0: break
                case 1: break  // canceled before it was paid: the notification only
                case 2:
                    out.await(
                        .verification,
                        "the purchase is pending (purchaseState 2): its verification once it is paid completes it"
                    )
                default: out.unknown("purchaseState \(productRead.purchaseState)")
                }
                guard productRead.purchaseState == 0 else { break }
                // A one-time purchase names no subscription: no original transaction (its token is not
                // one, and is recorded as the purchase's token).
                out.add(
                    .paymentVerified(
                        PaymentVerified(
                            channel: .googleplay, transactionId: productRead.orderId, productId: sku,
                            quantity: productRead.quantity,
                            purchaseDate: productRead.purchaseTime,
                            environment: productRead.isTest ? .sandbox : .production, price: productRead.price,
                            rawDigest: digest, app: package, obfuscatedAccountId: productRead.obfuscatedAccountId,
                            purchaseToken: original)))
            case 2: subtype = "ONE_TIME_PRODUCT_CANCELED"
            default: out.unknown("one-time notificationType \(code.map(String.init) ?? "(none)")")
            }
        } else if let voided = n["voidedPurchaseNotification"] {
            type = "VOIDED_PURCHASE"
            transactionId = voided["orderId"]?.stringValue
            original = voided["purchaseToken"]?.stringValue
            let refundType = voided["refundType"]?.intValue
            subtype = refundType == 2 ? "PARTIAL" : "FULL"
            let quantity = voided["voidedQuantity"]?.intValue
            if let orderId = transactionId {
                if refundType == 2 && quantity == nil {
                    // Never a whole void: the quantity comes from the Voided Purchases API.
                    out.await(
                        .voidedQuantity, "a quantity-based partial void (refundType 2) without its voidedQuantity")
                } else {
                    out.add(
                        .purchaseVoided(
                            PurchaseVoided(
                                channel: .googleplay, transactionId: orderId, purchaseToken: original,
                                voidedAt: signedAt,
                                voidedSource: voided["voidedSource"]?.intValue.map(String.init),
                                voidedReason: voided["voidedReason"]?.intValue.map(String.init),
                                voidedQuantity: refundType == 2 ? quantity : nil, app: package)))
                }
            } else {
                out.missing("orderId")
            }
        } else if let review = n["pendingRefundReviewNotification"] {
            type = "PENDING_REFUND_REVIEW"
            transactionId = review["orderId"]?.stringValue
            original = review["purchaseToken"]?.stringValue
            if let orderId = transactionId {
                out.add(
                    .refundRequested(
                        RefundNotice(
                            channel: .googleplay, transactionId: orderId, notificationId: id, signedAt: signedAt,
                            app: package)))
            } else {
                out.missing("orderId")
            }
        } else if n["testNotification"] != nil {
            type = "TEST"
        } else {
            var keys: [String] = []
            if case .object(let members) = n {
                keys = members.map(\.key).filter { !["version", "packageName", "eventTimeMillis"].contains($0) }
            }
            out.unknown(
                "no notification the ledger knows (members: \(keys.isEmpty ? "none" : keys.joined(separator: ", ")))")
        }
        let notification = StoreNotificationReceived(
            channel: .googleplay, notificationId: id, type: NotificationType(raw: type),
            subtype: subtype.map { NotificationType(raw: $0) },
            signedAt: signedAt, transactionId: transactionId, originalTransactionId: original, rawDigest: digest,
            app: package,
            untranslated: out.reason, awaiting: out.awaiting)
        return NotificationFacts(
            channel: .googleplay, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
            occurredAt: signedAt, raw: raw, rawHeaders: .makeObject([]), rawDigest: digest)
    }
}
