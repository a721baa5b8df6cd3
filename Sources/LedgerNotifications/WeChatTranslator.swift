import Foundation
import LedgerCore
import LedgerDomain

// WeChat Pay v3 notifications (payment and refund results), decrypted and verified, as facts.
extension NotificationTranslator {
    /// What the ledger knows of the order a WeChat payment names (its `out_trade_no`).
    public struct WeChatOrder: Sendable, Hashable {
        public var productId: String
        public var userId: String
        public init(productId: String, userId: String) {
            self.productId = productId
            self.userId = userId
        }
    }

    /// WeChat Pay v3: the notification (trade state, our order id, WeChat's transaction id); for a
    /// payment that succeeded, its verification with the product of the order `out_trade_no`
    /// names and the binding to that order (`order`: nil when the log has no such order: the
    /// notification then awaits a verification); for a refund, its status and money.
    public static func weChatPay(
        _ v: WeChatPayVerifier.Verified, raw: [UInt8], headers: WeChatPayVerifier.Headers,
        order: WeChatOrder? = nil
    ) -> NotificationFacts {
        let r = v.resource
        let digest = NotificationFacts.digest(raw)
        let id = v.envelope["id"]?.stringValue ?? digest
        let eventType = v.envelope["event_type"]?.stringValue ?? "UNKNOWN"
        // The notification's own time, inside the signed body: a re-delivery is signed again with a new
        // Wechatpay-Timestamp, and must still be the same fact.
        let signedAt =
            v.envelope["create_time"]?.stringValue.flatMap(Timestamp.init)
            ?? Timestamp(microsecondsSince1970: Int64(v.signedAt.timeIntervalSince1970) * 1_000_000)
        let appid = r["appid"]?.stringValue ?? r["sp_appid"]?.stringValue
        let mchid = r["mchid"]?.stringValue ?? r["sp_mchid"]?.stringValue
        let transactionId = r["transaction_id"]?.stringValue
        let outTradeNo = r["out_trade_no"]?.stringValue
        var out = Translation()
        let currency = r["amount"]?["currency"]?.stringValue.map { Currency($0) } ?? Currency("CNY")
        switch eventType {
        case "TRANSACTION.SUCCESS":
            guard r["trade_state"]?.stringValue == "SUCCESS" else {
                out.unknown("trade_state \(r["trade_state"]?.stringValue ?? "(none)")")
                break
            }
            guard let transactionId, let outTradeNo, let total = r["amount"]?["total"]?.intValue, total >= 0,
                let currency,
                let paidAt = r["success_time"]?.stringValue.flatMap(Timestamp.init)
            else {
                out.missing("transaction_id, out_trade_no, amount.total with a known currency, or success_time")
                break
            }
            guard let order else {
                out.await(
                    .verification,
                    "out_trade_no \(Echo.quoted(outTradeNo, limit: 64)) names no order in the log; its product is unknown"
                )
                break
            }
            out.add(
                .paymentVerified(
                    PaymentVerified(
                        channel: .wechat, transactionId: transactionId, productId: order.productId,
                        purchaseDate: paidAt,
                        price: Money(minorUnits: total, currency: currency), rawDigest: digest, app: appid,
                        merchant: mchid, outTradeNo: outTradeNo)))
            out.add(
                .transactionBound(
                    TransactionBound(
                        channel: .wechat, transactionId: transactionId, orderId: outTradeNo, userId: order.userId,
                        method: .outTradeNo, app: appid, merchant: mchid)))
        case "REFUND.SUCCESS", "REFUND.ABNORMAL", "REFUND.CLOSED":
            guard let transactionId, let refundId = r["refund_id"]?.stringValue,
                let amount = r["amount"]?["refund"]?.intValue, amount >= 0,
                let currency
            else {
                out.missing("transaction_id, refund_id or amount.refund with a known currency")
                break
            }
            let status = RefundStatus(
                raw: r["refund_status"]?.stringValue ?? String(eventType.dropFirst("REFUND.".count)))
            let at = r["success_time"]?.stringValue.flatMap(Timestamp.init) ?? signedAt
            out.add(
                .refunded(
                    Refunded(
                        channel: .wechat, transactionId: transactionId, refundId: refundId,
                        amount: Money(minorUnits: amount, currency: currency), refundedAt: at,
                        status: status, app: appid, merchant: mchid)))
        default:
            out.unknown("event_type \(eventType)")
        }
        let notification = StoreNotificationReceived(
            channel: .wechat, notificationId: id, type: NotificationType(raw: eventType), signedAt: signedAt,
            transactionId: transactionId,
            tradeState: r["trade_state"]?.stringValue ?? r["refund_status"]?.stringValue, outTradeNo: outTradeNo,
            rawDigest: digest, app: appid, merchant: mchid, untranslated: out.reason, awaiting: out.awaiting)
        let rawHeaders = JSONValue.makeObject([
            ("Wechatpay-Timestamp", .string(headers.timestamp ?? "")),
            ("Wechatpay-Nonce", .string(headers.nonce ?? "")),
            ("Wechatpay-Signature", .string(headers.signature ?? "")),
            ("Wechatpay-Serial", .string(headers.serial ?? "")),
        ])
        return NotificationFacts(
            channel: .wechat, notificationId: id, facts: [.storeNotificationReceived(notification)] + out.facts,
            occurredAt: signedAt, raw: raw, rawHeaders: rawHeaders, rawDigest: digest)
    }
}
