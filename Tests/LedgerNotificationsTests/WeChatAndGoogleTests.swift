import _CryptoExtras
import Foundation
import LedgerCore
import LedgerDomain
import LedgerNotificationTesting
@testable import LedgerNotifications
import Testing

@Suite("WeChat Pay notifications")
struct WeChatPayVerifierTests {
    func refusal(
        _ verifier: WeChatPayVerifier, _ n: (body: [UInt8], headers: WeChatPayVerifier.Headers), now: Date = Date()
    ) -> NotificationRefusal.Kind? {
        do {
            _ = try verifier.verify(headers: n.headers, body: n.body, now: now)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func aValidNotificationDecryptsAndTranslates() throws {
        let wx = try TestWeChat()
        let n = try wx.notification(id: "EV-2018022511223320873")
        let v = try WeChatPayVerifier(wx.configuration).verify(headers: n.headers, body: n.body)
        #expect(v.resource["trade_state"]?.stringValue == "SUCCESS")
        let facts = NotificationTranslator.weChatPay(v, raw: n.body, headers: n.headers)
        guard case .storeNotificationReceived(let f) = facts.facts[0] else {
            Issue.record("no notification fact")
            return
        }
        #expect(f.channel == .wechat && f.notificationId == "EV-2018022511223320873" && f.tradeState == "SUCCESS")
        #expect(f.outTradeNo == "order-0001" && f.merchant == TestWeChat.merchantId && f.app == TestWeChat.appId)
        #expect(facts.rawHeaders["Wechatpay-Serial"]?.stringValue == wx.serial)
        try FactCatalogue.validation().validate(facts.facts[0].newEvent(occurredAt: facts.occurredAt))
    }

    /// WeChat signs each delivery anew (a new timestamp and nonce): the facts must not change.
    @Test func aRedeliverySignedLaterIsTheSameFacts() throws {
        let wx = try TestWeChat()
        let verifier = WeChatPayVerifier(wx.configuration)
        let first = try wx.notification(id: "EV-7", timestamp: Date().addingTimeInterval(-100))
        let again = try wx.notification(id: "EV-7", timestamp: Date())
        let a = NotificationTranslator.weChatPay(
            try verifier.verify(headers: first.headers, body: first.body), raw: first.body, headers: first.headers)
        let b = NotificationTranslator.weChatPay(
            try verifier.verify(headers: again.headers, body: again.body), raw: again.body, headers: again.headers)
        #expect(a.facts == b.facts)
        #expect(a.occurredAt == b.occurredAt && a.occurredAt == Timestamp("2026-03-31T08:15:05Z"))
        #expect(a.rawHeaders != b.rawHeaders)
    }

    @Test func aForgedSignatureIsRefused() throws {
        let wx = try TestWeChat()
        #expect(
            refusal(
                WeChatPayVerifier(wx.configuration),
                try wx.notification(id: "EV-1", signer: try _RSA.Signing.PrivateKey(keySize: .bits2048)))
                == .forgedSignature)
    }

    /// The window is 300 s either side of the verifier's clock. The clock is fixed (and a whole
    /// second, as the header's timestamp is): with the real one, a test run on a loaded machine
    /// crossed the edge it meant to test.
    @Test func aStaleTimestampIsRefused() throws {
        let wx = try TestWeChat()
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        func refusal(signedAt offset: TimeInterval) throws -> NotificationRefusal.Kind? {
            self.refusal(
                WeChatPayVerifier(wx.configuration),
                try wx.notification(id: "EV-2", timestamp: now.addingTimeInterval(offset)), now: now)
        }
        #expect(try refusal(signedAt: -300) == .staleTimestamp)
        #expect(try refusal(signedAt: 300) == .staleTimestamp)
        #expect(try refusal(signedAt: -299) == nil)
        #expect(try refusal(signedAt: 299) == nil)
    }

    @Test func aReplayedRequestIsRefusedButANewDeliveryIsNot() throws {
        let wx = try TestWeChat()
        let verifier = WeChatPayVerifier(wx.configuration)
        let n = try wx.notification(id: "EV-3")
        #expect(refusal(verifier, n) == nil)
        #expect(refusal(verifier, n) == .replay)
        // WeChat's own re-delivery is signed again (a new nonce): verified, deduplicated later by id.
        #expect(refusal(verifier, try wx.notification(id: "EV-3")) == nil)
    }

    @Test func tamperedAssociatedDataIsRefused() throws {
        let wx = try TestWeChat()
        #expect(
            refusal(WeChatPayVerifier(wx.configuration), try wx.notification(id: "EV-4", tamperAssociatedData: true))
                == .undecryptable)
    }

    @Test func anUnknownSerialOrMissingHeadersAreRefused() throws {
        let wx = try TestWeChat()
        var n = try wx.notification(id: "EV-5")
        n.headers.serial = "0000"
        #expect(refusal(WeChatPayVerifier(wx.configuration), n) == .untrustedChain)
        n.headers.signature = nil
        #expect(refusal(WeChatPayVerifier(wx.configuration), n) == .malformed)
    }
}

@Suite("Google Play notifications")
struct GooglePlayVerifierTests {
    static func verifier(_ g: TestGoogleSigner) -> GooglePlayVerifier {
        GooglePlayVerifier(
            .init(
                keys: g.publicKeys, audience: TestGoogleSigner.audience,
                serviceAccount: TestGoogleSigner.serviceAccount,
                packageName: TestGoogleSigner.packageName))
    }

    func refusal(_ verifier: GooglePlayVerifier, token: String?, body: [UInt8]) -> NotificationRefusal.Kind? {
        do {
            _ = try verifier.verify(authorization: token.map { "Bearer " + $0 }, body: body)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func aValidPushVerifiesAndARevocationTranslates() throws {
        let g = try TestGoogleSigner()
        let body = TestGoogleSigner.pushBody(messageId: "136969346945", notification: TestGoogleSigner.subscription(12))
        let v = try Self.verifier(g).verify(authorization: "Bearer " + (try g.token()), body: body)
        let facts = NotificationTranslator.googlePlay(v, raw: body)
        guard case .storeNotificationReceived(let n) = facts.facts[0] else {
            Issue.record("no notification fact")
            return
        }
        #expect(n.channel == .googleplay && n.notificationId == "136969346945" && n.type.raw == "12")
        #expect(n.subtype?.raw == "SUBSCRIPTION_REVOKED" && n.originalTransactionId == "purchase-token-abc")
        try FactCatalogue.validation().validate(facts.facts[0].newEvent(occurredAt: facts.occurredAt))
    }

    @Test func aVoidedPurchaseBecomesPurchaseVoided() throws {
        let g = try TestGoogleSigner()
        let body = TestGoogleSigner.pushBody(
            messageId: "m-void", notification: TestGoogleSigner.voided(orderId: "GPA.1234-5678-9012-34567"))
        let facts = NotificationTranslator.googlePlay(
            try Self.verifier(g).verify(authorization: "Bearer " + (try g.token()), body: body), raw: body)
        #expect(facts.facts.map(\.typeName) == ["StoreNotificationReceived", "PurchaseVoided"])
        for f in facts.facts { try FactCatalogue.validation().validate(f.newEvent(occurredAt: facts.occurredAt)) }
    }

    @Test func badTokensAreRefused() throws {
        let g = try TestGoogleSigner()
        let v = Self.verifier(g)
        let body = TestGoogleSigner.pushBody(messageId: "m1", notification: TestGoogleSigner.subscription(2))
        #expect(refusal(v, token: nil, body: body) == .badToken)
        #expect(refusal(v, token: try g.token(audience: "https://elsewhere.example"), body: body) == .badToken)
        #expect(refusal(v, token: try g.token(expiresIn: -3600), body: body) == .badToken)
        #expect(refusal(v, token: try g.token(issuer: "https://evil.example"), body: body) == .badToken)
        #expect(refusal(v, token: try g.token(email: "someone@example.com"), body: body) == .badToken)
        #expect(
            refusal(v, token: try g.token(signer: try _RSA.Signing.PrivateKey(keySize: .bits2048)), body: body)
                == .badToken)
        #expect(refusal(v, token: try g.token(), body: body) == nil)
    }

    @Test func anotherPackageIsRefused() throws {
        let g = try TestGoogleSigner()
        let body = TestGoogleSigner.pushBody(
            messageId: "m2", notification: TestGoogleSigner.subscription(2, package: "com.example.other"))
        #expect(refusal(Self.verifier(g), token: try g.token(), body: body) == .wrongApp)
    }
}

@Suite("Base64")
struct Base64Tests {
    @Test func decodesBothAlphabetsWithAndWithoutPaddingAndRefusesTheOther() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.decode(standard, url: false) == bytes)
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64.decode(url, url: true) == bytes)
        }
        #expect(Base64.decode("a+b/", url: true) == nil)
        #expect(Base64.decode("a-b_", url: false) == nil)
        #expect(Base64.decode("ab$c", url: false) == nil)
        #expect(Base64.decode("abcde", url: false) == nil)
    }
}
