import Foundation
import LedgerCore
import LedgerDomain

/// What one verified notification becomes: the facts it implies (the notification itself first)
/// and the raw signed payload, kept so an auditor can verify it again.
public struct NotificationFacts: Sendable {
    public var channel: Channel
    public var notificationId: String
    public var facts: [Fact]
    /// The store's time for the notification (its signing time).
    public var occurredAt: Timestamp
    /// The exact bytes received, with the headers that sign them where the store signs in headers.
    public var raw: [UInt8]
    public var rawHeaders: JSONValue
    /// `sha256:<hex>` of `raw`, as the facts carry it.
    public var rawDigest: String

    public static func digest(_ raw: [UInt8]) -> String { LedgerCore.SHA256.digest(raw) }

    /// Why it was recorded untranslated (in whole or in part), when it was.
    public var untranslated: String? {
        guard case .storeNotificationReceived(let n)? = facts.first else { return nil }
        return n.untranslated
    }
}

/// Pure translations from a verified notification to facts, one per store (docs/domain.md, the
/// stores' signed word). They add nothing the store did not sign, and never refuse: what cannot be
/// translated is recorded on the notification fact with the reason, so a verified notification is
/// always kept and answered 2xx. Grants and revocations are fulfilment's decisions, never made here.
public enum NotificationTranslator {
    // MARK: Apple

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
        func ms(_ j: JSONValue?, _ key: String) -> Timestamp? { j?[key]?.intValue.map(Timestamp.init(millisecondsSince1970:)) }
        func needOriginal(_ body: (String) -> Fact) { out.add("originalTransactionId", original, body) }
        func price(_ j: JSONValue?, _ amountKey: String) -> Money? {
            guard let amount = j?[amountKey]?.intValue, let code = j?["currency"]?.stringValue, let c = Currency(code) else { return nil }
            return Money(storeAmount: amount, unit: .milliunits, currency: c)
        }

        switch type {
        case "SUBSCRIBED", "OFFER_REDEEMED", "ONE_TIME_CHARGE", "DID_RENEW":
            guard let t, let transactionId else { out.missing("signedTransactionInfo"); break }
            guard let productId = t["productId"]?.stringValue, let purchased = ms(t, "purchaseDate") else {
                out.missing("the transaction's productId or purchaseDate"); break
            }
            guard let amount = price(t, "price") else { out.missing("the transaction's price and currency (a known ISO 4217 code)"); break }
            out.add(.paymentVerified(PaymentVerified(
                channel: .appstore, transactionId: transactionId, originalTransactionId: original, productId: productId,
                quantity: max(1, t["quantity"]?.intValue ?? 1), purchaseDate: purchased, expiresDate: ms(t, "expiresDate"),
                environment: StoreEnvironment(raw: t["environment"]?.stringValue ?? "Production"),
                ownership: Ownership(raw: t["inAppOwnershipType"]?.stringValue ?? "PURCHASED"), price: amount,
                appAccountToken: t["appAccountToken"]?.stringValue.flatMap(UUID.init(uuidString:)), rawDigest: digest, app: bundle,
                offer: t["offerType"]?.intValue.map { "offerType-\($0)" + (t["offerIdentifier"]?.stringValue.map { ":" + $0 } ?? "") })))
            if type == "DID_RENEW", let original, let expires = ms(t, "expiresDate"), expires > purchased {
                out.add(.subscriptionRenewed(SubscriptionRenewed(
                    channel: .appstore, originalTransactionId: original, transactionId: transactionId, productId: productId,
                    purchaseDate: purchased, expiresDate: expires, price: amount, app: bundle)))
            }
        case "DID_FAIL_TO_RENEW":
            needOriginal { o in
                .renewalFailed(RenewalFailed(channel: .appstore, originalTransactionId: o, notificationId: id,
                                             gracePeriodExpiresAt: subtype == "GRACE_PERIOD" ? ms(r, "gracePeriodExpiresDate") : nil,
                                             inBillingRetry: true, app: bundle))
            }
        case "GRACE_PERIOD_EXPIRED":
            needOriginal { .subscriptionStateChanged(SubscriptionStateChanged(channel: .appstore, originalTransactionId: $0, notificationId: id,
                                                                              change: .graceEnded, effectiveAt: signedAt, app: bundle)) }
        case "EXPIRED":
            let reasons: [String: ExpirationReason] = ["VOLUNTARY": .voluntary, "BILLING_RETRY": .billingRetry,
                                                       "PRICE_INCREASE": .priceIncrease, "PRODUCT_NOT_FOR_SALE": .productNotForSale]
            let reason = subtype.map { reasons[$0] ?? ExpirationReason(raw: $0) } ?? .voluntary
            needOriginal { .subscriptionExpired(SubscriptionExpired(channel: .appstore, originalTransactionId: $0, notificationId: id, reason: reason, app: bundle)) }
        case "DID_CHANGE_RENEWAL_STATUS":
            guard subtype == "AUTO_RENEW_ENABLED" || subtype == "AUTO_RENEW_DISABLED" else { out.unknown("subtype \(subtype ?? "none")"); break }
            needOriginal { .autoRenewChanged(AutoRenewChanged(channel: .appstore, originalTransactionId: $0, notificationId: id,
                                                              enabled: subtype == "AUTO_RENEW_ENABLED", app: bundle)) }
        case "DID_CHANGE_RENEWAL_PREF":
            guard let to = r?["autoRenewProductId"]?.stringValue else { out.missing("signedRenewalInfo's autoRenewProductId"); break }
            needOriginal { .planChanged(PlanChanged(channel: .appstore, originalTransactionId: $0, notificationId: id, toProductId: to,
                                                    effective: subtype == "UPGRADE" ? .immediate : .nextRenewal, app: bundle)) }
        case "PRICE_INCREASE":
            guard subtype == "PENDING" || subtype == "ACCEPTED" else { out.unknown("subtype \(subtype ?? "none")"); break }
            needOriginal { .subscriptionStateChanged(SubscriptionStateChanged(
                channel: .appstore, originalTransactionId: $0, notificationId: id, change: .priceConsent, effectiveAt: signedAt,
                priceConsent: subtype == "ACCEPTED" ? .accepted : .pending, newPrice: price(r, "renewalPrice"), app: bundle)) }
        case "RENEWAL_EXTENDED":
            guard let expires = ms(t, "expiresDate") else { out.missing("the transaction's expiresDate"); break }
            needOriginal { .subscriptionStateChanged(SubscriptionStateChanged(
                channel: .appstore, originalTransactionId: $0, notificationId: id, change: .extended, effectiveAt: signedAt,
                expiresAt: expires, transactionId: transactionId, app: bundle)) }
        case "CONSUMPTION_REQUEST", "REFUND_DECLINED", "REFUND_REVERSED":
            guard let transactionId else { out.missing("signedTransactionInfo"); break }
            let notice = RefundNotice(channel: .appstore, transactionId: transactionId, notificationId: id, signedAt: signedAt, app: bundle)
            out.add(type == "CONSUMPTION_REQUEST" ? .refundRequested(notice) : type == "REFUND_DECLINED" ? .refundDeclined(notice) : .refundReversed(notice))
        case "REFUND":
            guard let t, let transactionId, let revoked = ms(t, "revocationDate") else { out.missing("the transaction's revocationDate"); break }
            let revocationType = t["revocationType"]?.stringValue
            if revocationType == "FAMILY_REVOKE" {
                // No money moved: the store took the shared copy back.
                needOriginal { .storeRevoked(StoreRevoked(channel: .appstore, originalTransactionId: $0, transactionId: transactionId, notificationId: id,
                                                          revokedAt: revoked, revocationType: revocationType,
                                                          reason: t["revocationReason"]?.intValue.map(String.init), app: bundle)) }
                break
            }
            guard let full = price(t, "price") else { out.missing("the transaction's price and currency"); break }
            var amount = full
            if revocationType == "REFUND_PRORATED" {
                guard let pct = t["revocationPercentage"]?.intValue, pct > 0, pct <= 100_000 else {
                    out.missing("revocationPercentage (1 to 100000) of a REFUND_PRORATED"); break
                }
                // revocationPercentage is in thousandths of a percent.
                amount = full.share(pct, 100_000)
            }
            out.add(.refunded(Refunded(channel: .appstore, transactionId: transactionId, refundId: id, amount: amount, refundedAt: revoked,
                                       reason: t["revocationReason"]?.intValue.map { "revocationReason-\($0)" }, app: bundle)))
        case "REVOKE":
            guard let t, let transactionId else { out.missing("signedTransactionInfo"); break }
            needOriginal { .storeRevoked(StoreRevoked(channel: .appstore, originalTransactionId: $0, transactionId: transactionId, notificationId: id,
                                                      revokedAt: ms(t, "revocationDate") ?? signedAt,
                                                      revocationType: t["revocationType"]?.stringValue ?? "FAMILY_REVOKE",
                                                      reason: t["revocationReason"]?.intValue.map(String.init), app: bundle)) }
        case "TEST", "RENEWAL_EXTENSION":
            // A test, or the summary of a mass extension (each subscription's RENEWAL_EXTENDED follows): nothing owed.
            break
        default:
            out.unknown("type \(type.isEmpty ? "(none)" : type)" + (subtype.map { "/\($0)" } ?? ""))
        }
        if p["notificationUUID"]?.stringValue == nil { out.missing("notificationUUID (the digest stands for it)") }
        let notification = StoreNotificationReceived(
            channel: .appstore, notificationId: id, type: NotificationType(raw: type.isEmpty ? "UNKNOWN" : type),
            subtype: subtype.map { NotificationType(raw: $0) }, signedAt: signedAt, transactionId: transactionId, originalTransactionId: original,
            rawDigest: digest, app: bundle, untranslated: out.reason, awaiting: out.awaiting)
        return NotificationFacts(channel: .appstore, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
                                 occurredAt: signedAt, raw: raw, rawHeaders: .makeObject([]), rawDigest: digest)
    }


    // MARK: Google

    static let googleSubscriptionTypes: [Int64: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED", 8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED",
        9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED", 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED",
        13: "SUBSCRIPTION_EXPIRED", 17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED",
        19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED", 20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]

    /// Google Play Real-time developer notifications. The type is the RTDN code as Google numbers it
    /// (the ledger's folds read `12` as a revocation), the subtype its name. An RTDN carries only a
    /// purchase token: price, order id and expiry come from the Play Developer API's read of the
    /// subscription (`subscription`). Without it (no API configured, or the read failed:
    /// `readFailure`), a purchase or renewal is recorded as awaiting its verification.
    public static func googlePlay(_ v: GooglePlayVerifier.Verified, raw: [UInt8], subscription read: GooglePlaySubscriptionRead? = nil,
                                  product productRead: GooglePlayProductRead? = nil, itemsProduct: String? = nil,
                                  readFailure: String? = nil) -> NotificationFacts {
        let n = v.notification
        let digest = NotificationFacts.digest(raw)
        let signedAt = n["eventTimeMillis"].flatMap { $0.intValue ?? $0.stringValue.flatMap { Int64($0) } }
            .map(Timestamp.init(millisecondsSince1970:)) ?? v.publishTime.flatMap(Timestamp.init) ?? Timestamp(millisecondsSince1970: 0)
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
            func state(_ change: LifecycleChange, consent: PriceConsent? = nil) {
                needToken { .subscriptionStateChanged(SubscriptionStateChanged(channel: .googleplay, originalTransactionId: $0, notificationId: id,
                                                                               change: change, effectiveAt: signedAt, priceConsent: consent, app: package)) }
            }
            let failed = readFailure.map { " (the Play Developer API read failed: \($0))" } ?? ""
            let product = s["subscriptionId"]?.stringValue
            switch code {
            case 1, 2, 4:
                if code == 1 { state(.resumed) }
                guard let read, let original, let product else {
                    out.await(.verification, "an RTDN carries no price, order id or expiry: the purchase read from the Play Developer API completes it" + failed)
                    break
                }
                // A renewal's period starts at the notification (the read gives the subscription's start only).
                let purchased = code == 4 ? read.startTime : signedAt
                guard read.expiryTime > purchased else { out.missing("an expiryTimeMillis after the period's start"); break }
                transactionId = read.orderId
                out.add(.paymentVerified(PaymentVerified(
                    channel: .googleplay, transactionId: read.orderId, originalTransactionId: original, productId: product, purchaseDate: purchased,
                    expiresDate: read.expiryTime, environment: read.isTest ? .sandbox : .production, price: read.price, rawDigest: digest, app: package,
                    linkedPurchaseToken: read.linkedPurchaseToken, obfuscatedAccountId: read.obfuscatedAccountId)))
                if code != 4 {
                    out.add(.subscriptionRenewed(SubscriptionRenewed(channel: .googleplay, originalTransactionId: original, transactionId: read.orderId,
                                                                     productId: product, purchaseDate: purchased, expiresDate: read.expiryTime,
                                                                     price: read.price, app: package)))
                }
            case 3, 18:
                needToken { .autoRenewChanged(AutoRenewChanged(channel: .googleplay, originalTransactionId: $0, notificationId: id, enabled: false, app: package)) }
            case 5: state(.onHold)
            case 6:
                // In grace, the read's expiry is the grace period's end.
                needToken { .renewalFailed(RenewalFailed(channel: .googleplay, originalTransactionId: $0, notificationId: id,
                                                         gracePeriodExpiresAt: read?.expiryTime, inBillingRetry: false, app: package)) }
            case 7: state(.resumed)
            case 8: state(.priceConsent, consent: .accepted)
            case 19, 22: state(.priceConsent, consent: .pending)
            case 10: state(.paused)
            case 11: state(.pauseScheduled)
            case 9:
                guard let read, let original else {
                    out.unknown("a deferral's new expiry is not in the notification" + failed)
                    break
                }
                out.add(.subscriptionStateChanged(SubscriptionStateChanged(channel: .googleplay, originalTransactionId: original, notificationId: id,
                                                                           change: .extended, effectiveAt: signedAt, expiresAt: read.expiryTime,
                                                                           transactionId: read.orderId, app: package)))
            case 17:
                // The items in force changed at the notification: the plan the v2 read names.
                guard let to = itemsProduct, let original else {
                    out.unknown("the new plan's product is not in the notification" + failed)
                    break
                }
                out.add(.planChanged(PlanChanged(channel: .googleplay, originalTransactionId: original, notificationId: id, toProductId: to,
                                                 effective: .immediate, app: package)))
            case 12:
                needToken { .storeRevoked(StoreRevoked(channel: .googleplay, originalTransactionId: $0, notificationId: id, revokedAt: signedAt,
                                                       revocationType: "SUBSCRIPTION_REVOKED", app: package)) }
            case 13:
                needToken { .subscriptionExpired(SubscriptionExpired(channel: .googleplay, originalTransactionId: $0, notificationId: id,
                                                                     reason: ExpirationReason(raw: "unspecified"), app: package)) }
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
                    out.await(.verification, "an RTDN carries no price or order id: the purchase read from the Play Developer API completes it"
                        + (readFailure.map { " (the Play Developer API read failed: \($0))" } ?? ""))
                    break
                }
                transactionId = productRead.orderId
                // A one-time purchase names no subscription: no original transaction (its token is not one).
                out.add(.paymentVerified(PaymentVerified(
                    channel: .googleplay, transactionId: productRead.orderId, productId: sku, quantity: productRead.quantity,
                    purchaseDate: productRead.purchaseTime, environment: productRead.isTest ? .sandbox : .production, price: productRead.price,
                    rawDigest: digest, app: package, obfuscatedAccountId: productRead.obfuscatedAccountId)))
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
                    out.await(.voidedQuantity, "a quantity-based partial void (refundType 2) without its voidedQuantity")
                } else {
                    out.add(.purchaseVoided(PurchaseVoided(
                        channel: .googleplay, transactionId: orderId, purchaseToken: original, voidedAt: signedAt,
                        voidedSource: voided["voidedSource"]?.intValue.map(String.init), voidedReason: voided["voidedReason"]?.intValue.map(String.init),
                        voidedQuantity: refundType == 2 ? quantity : nil, app: package)))
                }
            } else { out.missing("orderId") }
        } else if let review = n["pendingRefundReviewNotification"] {
            type = "PENDING_REFUND_REVIEW"
            transactionId = review["orderId"]?.stringValue
            original = review["purchaseToken"]?.stringValue
            if let orderId = transactionId {
                out.add(.refundRequested(RefundNotice(channel: .googleplay, transactionId: orderId, notificationId: id, signedAt: signedAt, app: package)))
            } else { out.missing("orderId") }
        } else if n["testNotification"] != nil {
            type = "TEST"
        } else {
            var keys: [String] = []
            if case .object(let members) = n { keys = members.map(\.key).filter { !["version", "packageName", "eventTimeMillis"].contains($0) } }
            out.unknown("no notification the ledger knows (members: \(keys.isEmpty ? "none" : keys.joined(separator: ", ")))")
        }
        let notification = StoreNotificationReceived(
            channel: .googleplay, notificationId: id, type: NotificationType(raw: type), subtype: subtype.map { NotificationType(raw: $0) },
            signedAt: signedAt, transactionId: transactionId, originalTransactionId: original, rawDigest: digest, app: package,
            untranslated: out.reason, awaiting: out.awaiting)
        return NotificationFacts(channel: .googleplay, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
                                 occurredAt: signedAt, raw: raw, rawHeaders: .makeObject([]), rawDigest: digest)
    }

    // MARK: WeChat

    /// What the ledger knows of the order a WeChat payment names (its `out_trade_no`).
    public struct WeChatOrder: Sendable, Hashable {
        public var productId: String
        public var userId: String
        public init(productId: String, userId: String) { self.productId = productId; self.userId = userId }
    }

    /// WeChat Pay v3: the notification (trade state, our order id, WeChat's transaction id); for a
    /// payment that succeeded, its verification with the product of the order `out_trade_no`
    /// names and the binding to that order (`order`: nil when the log has no such order: the
    /// notification then awaits a verification); for a refund, its status and money.
    public static func weChatPay(_ v: WeChatPayVerifier.Verified, raw: [UInt8], headers: WeChatPayVerifier.Headers,
                                 order: WeChatOrder? = nil) -> NotificationFacts {
        let r = v.resource
        let digest = NotificationFacts.digest(raw)
        let id = v.envelope["id"]?.stringValue ?? digest
        let eventType = v.envelope["event_type"]?.stringValue ?? "UNKNOWN"
        // The notification's own time, inside the signed body: a re-delivery is signed again with a new
        // Wechatpay-Timestamp, and must still be the same fact.
        let signedAt = v.envelope["create_time"]?.stringValue.flatMap(Timestamp.init)
            ?? Timestamp(microsecondsSince1970: Int64(v.signedAt.timeIntervalSince1970) * 1_000_000)
        let appid = r["appid"]?.stringValue ?? r["sp_appid"]?.stringValue
        let mchid = r["mchid"]?.stringValue ?? r["sp_mchid"]?.stringValue
        let transactionId = r["transaction_id"]?.stringValue
        let outTradeNo = r["out_trade_no"]?.stringValue
        var out = Translation()
        let currency = r["amount"]?["currency"]?.stringValue.map { Currency($0) } ?? Currency("CNY")
        switch eventType {
        case "TRANSACTION.SUCCESS":
            guard r["trade_state"]?.stringValue == "SUCCESS" else { out.unknown("trade_state \(r["trade_state"]?.stringValue ?? "(none)")"); break }
            guard let transactionId, let outTradeNo, let total = r["amount"]?["total"]?.intValue, total >= 0, let currency,
                  let paidAt = r["success_time"]?.stringValue.flatMap(Timestamp.init) else {
                out.missing("transaction_id, out_trade_no, amount.total with a known currency, or success_time"); break
            }
            guard let order else {
                out.await(.verification, "out_trade_no \(Echo.quoted(outTradeNo, limit: 64)) names no order in the log; its product is unknown")
                break
            }
            out.add(.paymentVerified(PaymentVerified(
                channel: .wechat, transactionId: transactionId, productId: order.productId, purchaseDate: paidAt,
                price: Money(minorUnits: total, currency: currency), rawDigest: digest, app: appid, merchant: mchid, outTradeNo: outTradeNo)))
            out.add(.transactionBound(TransactionBound(channel: .wechat, transactionId: transactionId, orderId: outTradeNo, userId: order.userId,
                                                       method: .outTradeNo, app: appid, merchant: mchid)))
        case "REFUND.SUCCESS", "REFUND.ABNORMAL", "REFUND.CLOSED":
            guard let transactionId, let refundId = r["refund_id"]?.stringValue, let amount = r["amount"]?["refund"]?.intValue, amount >= 0,
                  let currency else {
                out.missing("transaction_id, refund_id or amount.refund with a known currency"); break
            }
            let status = RefundStatus(raw: r["refund_status"]?.stringValue ?? String(eventType.dropFirst("REFUND.".count)))
            let at = r["success_time"]?.stringValue.flatMap(Timestamp.init) ?? signedAt
            out.add(.refunded(Refunded(channel: .wechat, transactionId: transactionId, refundId: refundId,
                                       amount: Money(minorUnits: amount, currency: currency), refundedAt: at,
                                       status: status, app: appid, merchant: mchid)))
        default:
            out.unknown("event_type \(eventType)")
        }
        let notification = StoreNotificationReceived(
            channel: .wechat, notificationId: id, type: NotificationType(raw: eventType), signedAt: signedAt, transactionId: transactionId,
            tradeState: r["trade_state"]?.stringValue ?? r["refund_status"]?.stringValue, outTradeNo: outTradeNo,
            rawDigest: digest, app: appid, merchant: mchid, untranslated: out.reason, awaiting: out.awaiting)
        let rawHeaders = JSONValue.makeObject([
            ("Wechatpay-Timestamp", .string(headers.timestamp ?? "")), ("Wechatpay-Nonce", .string(headers.nonce ?? "")),
            ("Wechatpay-Signature", .string(headers.signature ?? "")), ("Wechatpay-Serial", .string(headers.serial ?? "")),
        ])
        return NotificationFacts(channel: .wechat, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
                                 occurredAt: signedAt, raw: raw, rawHeaders: rawHeaders, rawDigest: digest)
    }
}

/// The facts a translation derives, and why it fell short where it did.
struct Translation {
    var facts: [Fact] = []
    var reasons: [String] = []
    var awaiting: StoreNotificationReceived.Awaiting?

    mutating func add(_ f: Fact) { facts.append(f) }
    /// The fact `body` makes of `value`, or, without it, that the notification lacks `what`.
    mutating func add(_ what: String, _ value: String?, _ body: (String) -> Fact) {
        guard let value else { return missing(what) }
        add(body(value))
    }
    mutating func missing(_ what: String) { reasons.append("lacks \(what)") }
    mutating func unknown(_ what: String) { reasons.append("not translated: \(what)") }
    mutating func await(_ a: StoreNotificationReceived.Awaiting, _ why: String) {
        awaiting = a
        reasons.append(why)
    }

    var reason: String? { reasons.isEmpty ? nil : reasons.joined(separator: "; ") }
}
