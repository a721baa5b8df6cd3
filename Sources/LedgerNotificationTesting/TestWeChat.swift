import _CryptoExtras
import Crypto
import Foundation
import LedgerCore
import LedgerNotifications
import SwiftASN1
import X509

/// A WeChat Pay platform key, an APIv3 key, and signed, encrypted notifications.
public struct TestWeChat: Sendable {
    public let platformKey: _RSA.Signing.PrivateKey
    public let serial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1"
    public let apiV3Key: [UInt8]
    public static let appId = "wxd678efh567hg6787"
    public static let merchantId = "1230000109"

    public init() throws {
        platformKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        apiV3Key = Array("0123456789abcdef0123456789ABCDEF".utf8)
    }

    /// A self-signed platform certificate of the key, with `serial` as its serial number, as PEM.
    public func platformCertificatePEM() throws -> String {
        let name = try DistinguishedName { CommonName("Tenpay.com Root CA (test)") }
        var serialBytes: [UInt8] = []
        var i = serial.startIndex
        while i < serial.endIndex {
            let j = serial.index(i, offsetBy: 2)
            serialBytes.append(UInt8(serial[i..<j], radix: 16)!)
            i = j
        }
        let cert = try Certificate(
            version: .v3, serialNumber: .init(bytes: serialBytes), publicKey: .init(platformKey.publicKey),
            notValidBefore: Date().addingTimeInterval(-86_400), notValidAfter: Date().addingTimeInterval(86_400 * 365),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: Certificate.Extensions(), issuerPrivateKey: .init(platformKey))
        return try cert.serializeAsPEM().pemString
    }

    public var configuration: WeChatPayVerifier.Configuration {
        .init(
            platformKeys: [WeChatPayVerifier.serial(serial): platformKey.publicKey], apiV3Key: apiV3Key,
            appId: Self.appId, merchantId: Self.merchantId)
    }

    /// The WeChat Pay public key's id, for a merchant signed in public-key mode (its key: ``publicKey``).
    public static let publicKeyId = "PUB_KEY_ID_0112345678902026033100112233000001"

    /// The configuration with the WeChat Pay public key `publicKey` beside (or, `certificates` false,
    /// instead of) the platform certificate.
    public func configuration(
        publicKey: _RSA.Signing.PrivateKey, certificates: Bool = true
    ) -> WeChatPayVerifier.Configuration {
        var c = configuration
        if !certificates { c.platformKeys = [:] }
        c.publicKeys = [Self.publicKeyId: publicKey.publicKey]
        return c
    }

    /// A TRANSACTION.SUCCESS body (its resource encrypted) and the headers that sign it.
    public func notification(
        id: String, outTradeNo: String = "order-0001", transactionId: String = "4200000000202603310000000001",
        associatedData: String = "transaction", tamperAssociatedData: Bool = false, timestamp: Date = Date(),
        nonce: String = UUID().uuidString, signer: _RSA.Signing.PrivateKey? = nil
    ) throws -> (body: [UInt8], headers: WeChatPayVerifier.Headers) {
        try signed(
            id: id, eventType: "TRANSACTION.SUCCESS",
            resource: Self.transaction(outTradeNo: outTradeNo, transactionId: transactionId),
            associatedData: associatedData, tamperAssociatedData: tamperAssociatedData, timestamp: timestamp,
            nonce: nonce, signer: signer)
    }

    /// A paid transaction's resource, as WeChat Pay sends it.
    public static func transaction(
        outTradeNo: String = "order-0001", transactionId: String = "4200000000202603310000000001", total: Int64 = 600
    ) -> JSONValue {
        .makeObject([
            ("appid", .string(Self.appId)), ("mchid", .string(Self.merchantId)), ("out_trade_no", .string(outTradeNo)),
            ("transaction_id", .string(transactionId)), ("trade_type", .string("APP")),
            ("trade_state", .string("SUCCESS")),
            ("trade_state_desc", .string("支付成功")), ("bank_type", .string("CMC")), ("attach", .string("")),
            ("success_time", .string("2026-03-31T16:15:00+08:00")),
            ("payer", .makeObject([("openid", .string("oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"))])),
            (
                "amount",
                .makeObject([
                    ("total", .int(total)), ("payer_total", .int(total)), ("currency", .string("CNY")),
                    ("payer_currency", .string("CNY")),
                ])
            ),
        ])
    }

    /// A refund's resource, as WeChat Pay sends it (REFUND.SUCCESS, .ABNORMAL, .CLOSED).
    public static func refund(
        status: String, refundId: String = "50000000382019052709732678859",
        transactionId: String = "4200000000202603310000000001",
        refund: Int64 = 600
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("mchid", .string(merchantId)), ("out_trade_no", .string("order-0001")),
            ("transaction_id", .string(transactionId)),
            ("out_refund_no", .string("refund-0001")), ("refund_id", .string(refundId)),
            ("refund_status", .string(status)),
            ("user_received_account", .string("招商银行信用卡0403")),
            (
                "amount",
                .makeObject([
                    ("total", .int(600)), ("refund", .int(refund)), ("payer_total", .int(600)),
                    ("payer_refund", .int(refund)),
                ])
            ),
        ]
        if status == "SUCCESS" { members.append(("success_time", .string("2026-04-01T10:00:00+08:00"))) }
        return .makeObject(members)
    }

    /// Any event with `resource` encrypted, signed by the platform key (or `signer`, with `serial`).
    public func signed(
        id: String, eventType: String, resource: JSONValue, associatedData: String = "transaction",
        tamperAssociatedData: Bool = false,
        timestamp: Date = Date(), nonce: String = UUID().uuidString, signer: _RSA.Signing.PrivateKey? = nil,
        serial: String? = nil
    ) throws -> (body: [UInt8], headers: WeChatPayVerifier.Headers) {
        let resourceNonce = "fdasflkja484"
        let sealed = try AES.GCM.seal(
            Array(resource.compactText.utf8), using: SymmetricKey(data: apiV3Key),
            nonce: AES.GCM.Nonce(data: Array(resourceNonce.utf8)),
            authenticating: Array(associatedData.utf8))
        let body = JSONValue.makeObject([
            ("id", .string(id)), ("create_time", .string("2026-03-31T16:15:05+08:00")),
            ("resource_type", .string("encrypt-resource")),
            ("event_type", .string(eventType)), ("summary", .string("支付成功")),
            (
                "resource",
                .makeObject([
                    ("original_type", .string("transaction")), ("algorithm", .string("AEAD_AES_256_GCM")),
                    ("ciphertext", .string(Data(sealed.ciphertext + sealed.tag).base64EncodedString())),
                    ("associated_data", .string(tamperAssociatedData ? associatedData + "x" : associatedData)),
                    ("nonce", .string(resourceNonce)),
                ])
            ),
        ])
        let bytes = Array(body.compactText.utf8)
        let ts = String(Int64(timestamp.timeIntervalSince1970))
        let message = Array("\(ts)\n\(nonce)\n".utf8) + bytes + [0x0A]
        let signature = try (signer ?? platformKey).signature(for: message, padding: .insecurePKCS1v1_5)
        return (
            bytes,
            .init(
                timestamp: ts, nonce: nonce, signature: Data(signature.rawRepresentation).base64EncodedString(),
                serial: serial ?? self.serial)
        )
    }
}
