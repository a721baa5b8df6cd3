import _CryptoExtras
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerCore
import LedgerNotificationTesting
import LedgerNotifications
import LedgerService
import LedgerTesting
import NIOCore
import Testing

/// Never lose, never loop: a verified notification of any type, known or not, translated or not,
/// is kept and answered 200 (a 4xx or 5xx makes the store redeliver it for days); what was not
/// translated is listed by the audit as untranslated-notification.
@Suite("Verified notifications are never refused", .timeLimit(.minutes(2)))
struct NeverLoopTests {
    static func weChatHeaders(_ n: (body: [UInt8], headers: WeChatPayVerifier.Headers)) -> HTTPFields {
        var h = HTTPFields()
        h[HTTPField.Name("Wechatpay-Timestamp")!] = n.headers.timestamp
        h[HTTPField.Name("Wechatpay-Nonce")!] = n.headers.nonce
        h[HTTPField.Name("Wechatpay-Signature")!] = n.headers.signature
        h[HTTPField.Name("Wechatpay-Serial")!] = n.headers.serial
        return h
    }

    @Test func everyTypeOfEveryStoreIsKeptAndAnswered200() async throws {
        let chain = try TestAppleChain()
        let google = try TestGoogleSigner()
        let wx = try TestWeChat()
        let publicKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await ServiceFixture.with(
            "neverloop",
            configure: {
                $0.notifications.appStore = AppleVerifier(.init(roots: [chain.root], bundleId: TestAppleChain.bundleId))
                $0.notifications.googlePlay = GooglePlayVerifier(
                    .init(
                        keys: google.publicKeys, audience: TestGoogleSigner.audience,
                        serviceAccount: TestGoogleSigner.serviceAccount, packageName: TestGoogleSigner.packageName))
                $0.notifications.weChatPay = WeChatPayVerifier(wx.configuration(publicKey: publicKey))
            }
        ) { f in
            let untranslated = try await f.test { client -> Int in
                var untranslated = 0
                func expectKept(_ r: TestResponse, _ what: String) {
                    #expect(r.status == .ok, "\(what): \(r.status) \(r.text)")
                    if r.json?["untranslated"]?.stringValue != nil { untranslated += 1 }
                }
                // Apple: every type the table names, one it does not know, and parts missing.
                let appleTypes: [(String, String?)] = [
                    ("SUBSCRIBED", "INITIAL_BUY"), ("DID_RENEW", nil), ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"),
                    ("GRACE_PERIOD_EXPIRED", nil),
                    ("EXPIRED", "VOLUNTARY"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
                    ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"),
                    ("PRICE_INCREASE", "PENDING"), ("RENEWAL_EXTENDED", nil), ("CONSUMPTION_REQUEST", nil),
                    ("REFUND_DECLINED", nil),
                    ("REFUND", nil), ("REFUND_REVERSED", nil), ("REVOKE", nil), ("TEST", nil),
                    ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"),
                    ("A_TYPE_FROM_NEXT_YEAR", "WITH_A_SUBTYPE"), ("ONE_TIME_CHARGE", nil),
                ]
                for (i, (type, subtype)) in appleTypes.enumerated() {
                    let body = try chain.notificationBody(
                        type: type, subtype: subtype,
                        uuid: "5d1c0a52-8c5e-4d0b-9a11-0000000001\(String(format: "%02d", i))",
                        transactionId: "20000001234567\(String(format: "%02d", i))",
                        transaction: type == "ONE_TIME_CHARGE" ? [("price", .int(1995))] : [])
                    expectKept(
                        try await client.execute(
                            uri: "/v1/notifications/appstore", method: .post, body: ByteBuffer(bytes: body)), type)
                }
                // Google: every subscription code, one-time, voids (whole, partial without quantity), tests and the unknown.
                let token = ServiceFixture.bearer(try google.token())
                var google: [JSONValue] = (1...22).map { TestGoogleSigner.subscription(Int64($0), token: "tok-\($0)") }
                google += [
                    TestGoogleSigner.voided(orderId: "GPA.1"), TestGoogleSigner.voided(orderId: "GPA.2", refundType: 2),
                    .makeObject([
                        ("version", .string("1.0")), ("packageName", .string(TestGoogleSigner.packageName)),
                        ("eventTimeMillis", .string("1774944900000")), ("somethingNew", .makeObject([("x", .int(1))])),
                    ]),
                ]
                for (i, n) in google.enumerated() {
                    let body = ByteBuffer(bytes: TestGoogleSigner.pushBody(messageId: "m-\(i)", notification: n))
                    expectKept(
                        try await client.execute(
                            uri: "/v1/notifications/googleplay", method: .post, headers: token, body: body),
                        "google \(i)")
                }
                // WeChat: a payment whose order is in the log, one whose order is not, refunds, an unknown event; both key modes.
                let order =
                    #"{"stream":"order:order-0001","type":"OrderCreated","payload":{"orderId":"order-0001","userId":"u_wx","channel":"wechat","productId":"wx_coins_60","amount":600,"currency":"CNY"},"occurredAt":"2026-03-31T08:10:00Z"}"#
                let appended = try await client.execute(
                    uri: "/v1/events", method: .post, headers: ServiceFixture.bearer(f.allToken),
                    body: ByteBuffer(string: order + "\n"))
                #expect(appended.status == .created, "\(appended.text)")
                let weChat: [(body: [UInt8], headers: WeChatPayVerifier.Headers)] = [
                    try wx.notification(id: "EV-1"),
                    try wx.notification(
                        id: "EV-2", outTradeNo: "order-unknown", transactionId: "4200000000202603310000000002"),
                    try wx.signed(
                        id: "EV-3", eventType: "REFUND.SUCCESS", resource: TestWeChat.refund(status: "SUCCESS"),
                        associatedData: "refund"),
                    try wx.signed(
                        id: "EV-4", eventType: "REFUND.ABNORMAL",
                        resource: TestWeChat.refund(status: "ABNORMAL", refundId: "5000-2"), associatedData: "refund"),
                    try wx.signed(
                        id: "EV-5", eventType: "MCHTRANSFER.BILL.FINISHED", resource: TestWeChat.transaction()),
                    try wx.signed(
                        id: "EV-6", eventType: "TRANSACTION.SUCCESS",
                        resource: TestWeChat.transaction(
                            outTradeNo: "order-0001", transactionId: "42000000002026033100000000093"),
                        signer: publicKey, serial: TestWeChat.publicKeyId),
                ]
                for (i, n) in weChat.enumerated() {
                    if i == 5 {
                        let r = try await client.execute(
                            uri: "/v1/notifications/wechatpay", method: .post, headers: Self.weChatHeaders(n),
                            body: ByteBuffer(bytes: n.body))
                        #expect(r.json?["appended"]?.intValue == 3, "\(r.text)")
                        continue
                    }
                    expectKept(
                        try await client.execute(
                            uri: "/v1/notifications/wechatpay", method: .post, headers: Self.weChatHeaders(n),
                            body: ByteBuffer(bytes: n.body)), "wechat \(i)")
                }
                // A redelivery is answered 200 and appends nothing.
                let again = try await client.execute(
                    uri: "/v1/notifications/googleplay", method: .post, headers: token,
                    body: ByteBuffer(bytes: TestGoogleSigner.pushBody(messageId: "m-0", notification: google[0])))
                #expect(again.status == .ok && again.json?["appended"]?.intValue == 0)
                // The audit lists what was kept untranslated.
                let audit = try await client.execute(
                    uri: "/v1/audit?format=json", method: .get, headers: ServiceFixture.bearer(f.auditToken))
                guard case .array(let findings)? = audit.json?["findings"] else {
                    Issue.record("no findings: \(audit.text)")
                    return untranslated
                }
                let notices = findings.filter { $0["kind"]?.stringValue == "untranslated-notification" }
                #expect(notices.count == untranslated, "\(notices.count) notices for \(untranslated) untranslated")
                #expect(
                    notices.allSatisfy { $0["severity"]?.stringValue == "info" && $0["amountAtRisk"]?.isNull == true })
                // The WeChat payment became a verified, bound payment of the order's product.
                let tx = try await client.execute(
                    uri: "/v1/events?from=1&limit=1000", method: .get, headers: ServiceFixture.bearer(f.readToken))
                #expect(
                    tx.text.contains("\"method\": \"out-trade-no\"")
                        && tx.text.contains("\"productId\": \"wx_coins_60\""))
                // Apple's 1.995 USD kept exactly.
                #expect(tx.text.contains("\"exact\": \"1.995\""))
                return untranslated
            }
            // Apple: EXTERNAL_PURCHASE_TOKEN and the unknown type; Google: 4 purchases/renewals awaiting their read (1, 2, 4),
            // the deferral, items changed, codes it does not know, the partial void, the new member; WeChat: the unknown order and event.
            #expect(untranslated >= 12)
        }
    }
}
