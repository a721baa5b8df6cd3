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
}

/// Pure translations from a verified notification to facts, one per store. They add nothing the
/// store did not sign; anything the notification does not say (which order, which user) is decided
/// elsewhere, by the services that own it.
public enum NotificationTranslator {
    /// Apple: the notification, a PaymentVerified for a purchase, renewal or offer, a Refunded for REFUND.
    public static func appStore(_ v: AppleVerifier.Verified, raw: [UInt8]) throws(NotificationRefusal) -> NotificationFacts {
        let p = v.payload
        guard let id = p["notificationUUID"]?.stringValue, let type = p["notificationType"]?.stringValue else {
            throw NotificationRefusal(.malformed, "signedPayload lacks notificationUUID or notificationType")
        }
        let digest = NotificationFacts.digest(raw)
        let signedAt = Timestamp(millisecondsSince1970: Int64(v.signedDate.timeIntervalSince1970 * 1000))
        let data = p["data"]
        let bundle = data?["bundleId"]?.stringValue
        let t = v.transaction
        let transactionId = t?["transactionId"]?.stringValue
        var facts: [Fact] = [.storeNotificationReceived(StoreNotificationReceived(
            channel: .appstore, notificationId: id, type: NotificationType(raw: type),
            subtype: p["subtype"]?.stringValue.map { NotificationType(raw: $0) }, signedAt: signedAt,
            transactionId: transactionId, originalTransactionId: t?["originalTransactionId"]?.stringValue,
            rawDigest: digest, app: bundle))]
        if let t, let transactionId, let productId = t["productId"]?.stringValue,
           let purchased = t["purchaseDate"]?.intValue, let price = applePrice(t) {
            if ["SUBSCRIBED", "DID_RENEW", "ONE_TIME_CHARGE", "OFFER_REDEEMED"].contains(type) {
                facts.append(.paymentVerified(PaymentVerified(
                    channel: .appstore, transactionId: transactionId, originalTransactionId: t["originalTransactionId"]?.stringValue,
                    productId: productId, quantity: t["quantity"]?.intValue ?? 1, purchaseDate: Timestamp(millisecondsSince1970: purchased),
                    expiresDate: t["expiresDate"]?.intValue.map(Timestamp.init(millisecondsSince1970:)),
                    environment: StoreEnvironment(raw: t["environment"]?.stringValue ?? "Production"),
                    ownership: Ownership(raw: t["inAppOwnershipType"]?.stringValue ?? "PURCHASED"), price: price,
                    appAccountToken: t["appAccountToken"]?.stringValue.flatMap(UUID.init(uuidString:)), rawDigest: digest, app: bundle,
                    offer: t["offerType"]?.intValue.map { "offerType-\($0)" })))
            } else if type == "REFUND", let revoked = t["revocationDate"]?.intValue {
                facts.append(.refunded(Refunded(
                    channel: .appstore, transactionId: transactionId, refundId: id, amount: price,
                    refundedAt: Timestamp(millisecondsSince1970: revoked), reason: t["revocationReason"]?.intValue.map { "revocationReason-\($0)" },
                    app: bundle)))
            }
        }
        return NotificationFacts(channel: .appstore, notificationId: id, facts: facts, occurredAt: signedAt, raw: raw,
                                 rawHeaders: .makeObject([]), rawDigest: digest)
    }

    /// Apple prices are milliunits: converted exactly, or not at all.
    static func applePrice(_ t: JSONValue) -> Money? {
        guard let milli = t["price"]?.intValue, let code = t["currency"]?.stringValue, let currency = Currency(code) else { return nil }
        return Money(milliunits: milli, currency: currency)
    }

    static let googleSubscriptionTypes: [Int64: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED", 9: "SUBSCRIPTION_DEFERRED",
        10: "SUBSCRIPTION_PAUSED", 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
    ]

    /// Google: the notification (its type the RTDN code as Google numbers it: the ledger's folds read
    /// `12` as a revocation), and a PurchaseVoided for a voided purchase.
    public static func googlePlay(_ v: GooglePlayVerifier.Verified, raw: [UInt8]) throws(NotificationRefusal) -> NotificationFacts {
        let n = v.notification
        let digest = NotificationFacts.digest(raw)
        let signedAt = n["eventTimeMillis"].flatMap { $0.intValue ?? $0.stringValue.flatMap { Int64($0) } }
            .map(Timestamp.init(millisecondsSince1970:)) ?? v.publishTime.flatMap(Timestamp.init) ?? Timestamp(millisecondsSince1970: 0)
        let package = n["packageName"]?.stringValue
        var type: String
        var subtype: String?
        var originalTransactionId: String?
        var transactionId: String?
        var extra: [Fact] = []
        if let s = n["subscriptionNotification"], let code = s["notificationType"]?.intValue {
            type = String(code)
            subtype = googleSubscriptionTypes[code]
            originalTransactionId = s["purchaseToken"]?.stringValue
        } else if let o = n["oneTimeProductNotification"], let code = o["notificationType"]?.intValue {
            type = "ONE_TIME_PRODUCT_" + String(code)
            subtype = code == 1 ? "ONE_TIME_PRODUCT_PURCHASED" : code == 2 ? "ONE_TIME_PRODUCT_CANCELED" : nil
            originalTransactionId = o["purchaseToken"]?.stringValue
        } else if let voided = n["voidedPurchaseNotification"] {
            type = "VOIDED_PURCHASE"
            guard let orderId = voided["orderId"]?.stringValue else {
                throw NotificationRefusal(.malformed, "voidedPurchaseNotification lacks orderId")
            }
            transactionId = orderId
            let refundType = voided["refundType"]?.intValue
            subtype = refundType == 2 ? "PARTIAL" : "FULL"
            extra.append(.purchaseVoided(PurchaseVoided(
                channel: .googleplay, transactionId: orderId, purchaseToken: voided["purchaseToken"]?.stringValue, voidedAt: signedAt,
                voidedSource: voided["voidedSource"]?.intValue.map(String.init), voidedReason: voided["voidedReason"]?.intValue.map(String.init),
                voidedQuantity: refundType == 2 ? voided["voidedQuantity"]?.intValue : nil, app: package)))
        } else if n["testNotification"] != nil {
            type = "TEST"
        } else {
            throw NotificationRefusal(.malformed, "the notification holds no subscription, one-time, voided or test notification")
        }
        let notification = StoreNotificationReceived(
            channel: .googleplay, notificationId: v.messageId, type: NotificationType(raw: type), subtype: subtype.map { NotificationType(raw: $0) },
            signedAt: signedAt, transactionId: transactionId, originalTransactionId: originalTransactionId, rawDigest: digest, app: package)
        return NotificationFacts(channel: .googleplay, notificationId: v.messageId, facts: [.storeNotificationReceived(notification)] + extra,
                                 occurredAt: signedAt, raw: raw, rawHeaders: .makeObject([]), rawDigest: digest)
    }

    /// WeChat: the notification (trade state, our order id, WeChat's transaction id), and a Refunded
    /// for a refund that succeeded. A payment's product is known to the order service, not to the
    /// notification: its PaymentVerified is appended there.
    public static func weChatPay(_ v: WeChatPayVerifier.Verified, raw: [UInt8], headers: WeChatPayVerifier.Headers) throws(NotificationRefusal) -> NotificationFacts {
        guard let id = v.envelope["id"]?.stringValue, let eventType = v.envelope["event_type"]?.stringValue else {
            throw NotificationRefusal(.malformed, "the notification lacks id or event_type")
        }
        let r = v.resource
        let digest = NotificationFacts.digest(raw)
        // The notification's own time, inside the signed body: a re-delivery is signed again with a new
        // Wechatpay-Timestamp, and must still be the same fact.
        let signedAt = v.envelope["create_time"]?.stringValue.flatMap(Timestamp.init)
            ?? Timestamp(microsecondsSince1970: Int64(v.signedAt.timeIntervalSince1970) * 1_000_000)
        let appid = r["appid"]?.stringValue ?? r["sp_appid"]?.stringValue
        let mchid = r["mchid"]?.stringValue ?? r["sp_mchid"]?.stringValue
        let transactionId = r["transaction_id"]?.stringValue
        var facts: [Fact] = [.storeNotificationReceived(StoreNotificationReceived(
            channel: .wechat, notificationId: id, type: NotificationType(raw: eventType), signedAt: signedAt, transactionId: transactionId,
            tradeState: r["trade_state"]?.stringValue ?? r["refund_status"]?.stringValue, outTradeNo: r["out_trade_no"]?.stringValue,
            rawDigest: digest, app: appid, merchant: mchid))]
        if r["refund_status"]?.stringValue == "SUCCESS", let transactionId, let refundId = r["refund_id"]?.stringValue,
           let amount = r["amount"]?["refund"]?.intValue, let successTime = r["success_time"]?.stringValue.flatMap(Timestamp.init) {
            let currency = Currency(r["amount"]?["currency"]?.stringValue ?? "CNY") ?? Currency("CNY")!
            facts.append(.refunded(Refunded(channel: .wechat, transactionId: transactionId, refundId: refundId,
                                            amount: Money(minorUnits: amount, currency: currency), refundedAt: successTime,
                                            status: .success, app: appid, merchant: mchid)))
        }
        let rawHeaders = JSONValue.makeObject([
            ("Wechatpay-Timestamp", .string(headers.timestamp ?? "")), ("Wechatpay-Nonce", .string(headers.nonce ?? "")),
            ("Wechatpay-Signature", .string(headers.signature ?? "")), ("Wechatpay-Serial", .string(headers.serial ?? "")),
        ])
        return NotificationFacts(channel: .wechat, notificationId: id, facts: facts, occurredAt: signedAt, raw: raw,
                                 rawHeaders: rawHeaders, rawDigest: digest)
    }
}
