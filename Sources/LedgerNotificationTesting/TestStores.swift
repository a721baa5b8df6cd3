import _CryptoExtras
import Crypto
import Foundation
import LedgerCore
import LedgerNotifications
import SwiftASN1
import X509

/// Certificate chains, keys and signed notifications that tests make themselves (never real keys):
/// an Apple-shaped chain (root, intermediate and leaf with Apple's OIDs), a Google OIDC signer and
/// a WeChat Pay platform key with an APIv3 key.
public struct TestAppleChain: Sendable {
    // The keys as bytes (swift-crypto's keys are not Sendable).
    private let leafKeyBytes: Data
    public var leafKey: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: leafKeyBytes) }
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate

    public static let bundleId = "com.example.ledgertest"

    /// A chain valid from a year ago to a year ahead; `leafValidUntil` ends the leaf earlier, and the
    /// OIDs can be left out.
    public init(leafValidUntil: Date? = nil, intermediateOID: Bool = true, leafOID: Bool = true, name: String = "Test") throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        leafKeyBytes = leafKey.rawRepresentation
        let now = Date()
        let from = now.addingTimeInterval(-365 * 86_400)
        let until = now.addingTimeInterval(365 * 86_400)
        let rootName = try DistinguishedName { CommonName("\(name) Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("\(name) Worldwide Developer Relations") }
        let leafName = try DistinguishedName { CommonName("\(name) Prod ECC Mac App Store and iTunes Store Receipt Signing") }
        let ca = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        root = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: from, notValidAfter: until,
                               issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256, extensions: ca,
                               issuerPrivateKey: .init(rootKey))
        var intermediateExtensions = ca
        if intermediateOID { try intermediateExtensions.append(Certificate.Extension(oid: AppleVerifier.intermediateOID, critical: false, value: [0x05, 0x00])) }
        intermediate = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: from,
                                       notValidAfter: until, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
                                       extensions: intermediateExtensions, issuerPrivateKey: .init(rootKey))
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
        }
        if leafOID { try leafExtensions.append(Certificate.Extension(oid: AppleVerifier.leafOID, critical: false, value: [0x05, 0x00])) }
        leaf = try Certificate(version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: from,
                               notValidAfter: leafValidUntil ?? until, issuer: intermediateName, subject: leafName,
                               signatureAlgorithm: .ecdsaWithSHA256, extensions: leafExtensions, issuerPrivateKey: .init(intermediateKey))
    }

    /// A compact JWS of `payload` with this chain in x5c, signed by the leaf (or by `signer`: a forgery).
    public func sign(_ payload: JSONValue, signer: P256.Signing.PrivateKey? = nil) throws -> String {
        func der(_ c: Certificate) throws -> String {
            var s = DER.Serializer()
            try s.serialize(c)
            return Data(s.serializedBytes).base64EncodedString()
        }
        let header = JSONValue.makeObject([("alg", .string("ES256")), ("x5c", .array([.string(try der(leaf)), .string(try der(intermediate)), .string(try der(root))]))])
        let input = Self.b64url(Array(header.compactText.utf8)) + "." + Self.b64url(Array(payload.compactText.utf8))
        let signature = try (signer ?? leafKey).signature(for: Array(input.utf8))
        return input + "." + Self.b64url(Array(signature.rawRepresentation))
    }

    public static func b64url(_ bytes: [UInt8]) -> String { Base64.urlEncoded(bytes) }

    /// The root certificate's DER bytes (what LEDGER_APPSTORE_ROOT_CERT may name).
    public var rootDER: [UInt8] {
        var s = DER.Serializer()
        try! s.serialize(root)
        return s.serializedBytes
    }

    /// A signed transaction as the App Store Server API lists it in a transaction history
    /// (`price` in milliunits); `extra` adds or replaces members.
    public func signedTransaction(id: String, price: Int64 = 4990, currency: String = "USD", purchased: Date = Date(),
                                  bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
                                  extra: [(String, JSONValue)] = []) throws -> String {
        let ms = Int64(purchased.timeIntervalSince1970 * 1000)
        let base: [(String, JSONValue)] = [
            ("transactionId", .string(id)), ("originalTransactionId", .string(id)), ("bundleId", .string(bundleId)),
            ("productId", .string("coins_60")), ("purchaseDate", .int(ms)), ("originalPurchaseDate", .int(ms)), ("quantity", .int(1)),
            ("type", .string("Consumable")), ("inAppOwnershipType", .string("PURCHASED")), ("signedDate", .int(ms + 1000)),
            ("environment", .string(environment)), ("transactionReason", .string("PURCHASE")), ("storefront", .string("USA")),
            ("storefrontId", .string("143441")), ("price", .int(price)), ("currency", .string(currency)),
        ]
        return try sign(.makeObject(base.filter { b in !extra.contains { $0.0 == b.0 } } + extra))
    }

    /// One page of a Get Transaction History answer holding `signed`.
    public static func historyPage(_ signed: [String], bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
                                   hasMore: Bool = false) -> String {
        JSONValue.makeObject([
            ("revision", .string("rev-\(signed.count)")), ("bundleId", .string(bundleId)), ("appAppleId", .int(1234567890)),
            ("environment", .string(environment)), ("hasMore", .bool(hasMore)), ("signedTransactions", .array(signed.map(JSONValue.string))),
        ]).compactText
    }

    /// A recorded-shape App Store Server Notification V2 body: `{"signedPayload": ...}` with a signed transaction.
    public func notificationBody(type: String = "SUBSCRIBED", subtype: String? = "INITIAL_BUY", uuid: String = UUID().uuidString.lowercased(),
                                 bundleId: String = TestAppleChain.bundleId, environment: String = "Production",
                                 transactionId: String = "2000000123456789", signedDate: Date = Date(),
                                 signer: P256.Signing.PrivateKey? = nil, transaction extra: [(String, JSONValue)] = [],
                                 renewal renewalExtra: [(String, JSONValue)] = [], withTransaction: Bool = true,
                                 withUUID: Bool = true) throws -> [UInt8] {
        let ms = Int64(signedDate.timeIntervalSince1970 * 1000)
        var tx: [(String, JSONValue)] = [
            ("transactionId", .string(transactionId)), ("originalTransactionId", .string("2000000100000001")),
            ("webOrderLineItemId", .string("2000000011111111")), ("bundleId", .string(bundleId)), ("productId", .string("vip_month")),
            ("subscriptionGroupIdentifier", .string("21000001")), ("purchaseDate", .int(ms - 60_000)), ("originalPurchaseDate", .int(ms - 60_000)),
            ("expiresDate", .int(ms + 30 * 86_400_000)), ("quantity", .int(1)), ("type", .string("Auto-Renewable Subscription")),
            ("appAccountToken", .string("7e3fb20b-4cdb-47cc-936d-99d65f608138")), ("inAppOwnershipType", .string("PURCHASED")),
            ("signedDate", .int(ms)), ("environment", .string(environment)), ("transactionReason", .string("PURCHASE")),
            ("storefront", .string("USA")), ("price", .int(9990)), ("currency", .string("USD")),
        ]
        if type == "REFUND" || type == "REVOKE" {
            tx.append(("revocationDate", .int(ms - 1000)))
            tx.append(("revocationReason", .int(0)))
        }
        /// `extra` replaces members of the same name, and adds the rest; `.null` removes one.
        func merged(_ base: [(String, JSONValue)], _ extra: [(String, JSONValue)]) -> JSONValue {
            var out = base.filter { b in !extra.contains { $0.0 == b.0 } }
            out += extra.filter { !$0.1.isNull }
            return .makeObject(out)
        }
        let renewal = merged([("originalTransactionId", .string("2000000100000001")), ("autoRenewProductId", .string("vip_month")),
                              ("productId", .string("vip_month")), ("autoRenewStatus", .int(1)), ("signedDate", .int(ms)),
                              ("environment", .string(environment))], renewalExtra)
        var data: [(String, JSONValue)] = [("appAppleId", .int(1234567890)), ("bundleId", .string(bundleId)), ("bundleVersion", .string("42")),
                                           ("environment", .string(environment))]
        if withTransaction { data.append(("signedTransactionInfo", .string(try sign(merged(tx, extra), signer: signer)))) }
        data += [("signedRenewalInfo", .string(try sign(renewal, signer: signer))), ("status", .int(1))]
        var payload: [(String, JSONValue)] = [("notificationType", .string(type))]
        if withUUID { payload.append(("notificationUUID", .string(uuid))) }
        payload += [("version", .string("2.0")), ("signedDate", .int(ms)), ("data", .makeObject(data))]
        if let subtype { payload.append(("subtype", .string(subtype))) }
        let body = JSONValue.makeObject([("signedPayload", .string(try sign(.makeObject(payload), signer: signer)))])
        return Array(body.compactText.utf8)
    }
}

/// A Google OIDC signer (RS256) and Pub/Sub push bodies.
public struct TestGoogleSigner: Sendable {
    public let key: _RSA.Signing.PrivateKey
    public let kid: String
    public static let audience = "https://ledger.example.test/v1/notifications/googleplay"
    public static let serviceAccount = "rtdn-push@example-project.iam.gserviceaccount.com"
    public static let packageName = "com.example.ledgertest"

    public init(kid: String = "test-key-1") throws {
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        self.kid = kid
    }

    public var publicKeys: [String: _RSA.Signing.PublicKey] { [kid: key.publicKey] }

    /// The public key as a JSON Web Key Set, as Google publishes its keys.
    public func jwks() throws -> String {
        let p = try key.publicKey.getKeyPrimitives()
        return JSONValue.makeObject([("keys", .array([.makeObject([
            ("kty", .string("RSA")), ("alg", .string("RS256")), ("use", .string("sig")), ("kid", .string(kid)),
            ("n", .string(TestAppleChain.b64url(Array(p.modulus)))), ("e", .string(TestAppleChain.b64url(Array(p.publicExponent)))),
        ])]))]).compactText
    }

    public func token(audience: String = TestGoogleSigner.audience, expiresIn: TimeInterval = 3600, issuer: String = "https://accounts.google.com",
                      email: String = TestGoogleSigner.serviceAccount, signer: _RSA.Signing.PrivateKey? = nil) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let header = JSONValue.makeObject([("alg", .string("RS256")), ("kid", .string(kid)), ("typ", .string("JWT"))])
        let claims = JSONValue.makeObject([("aud", .string(audience)), ("azp", .string("1234567890")), ("email", .string(email)),
                                           ("email_verified", .bool(true)), ("exp", .int(now + Int64(expiresIn))), ("iat", .int(now - 10)),
                                           ("iss", .string(issuer)), ("sub", .string("1234567890"))])
        let input = TestAppleChain.b64url(Array(header.compactText.utf8)) + "." + TestAppleChain.b64url(Array(claims.compactText.utf8))
        let sig = try (signer ?? key).signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + TestAppleChain.b64url(Array(sig.rawRepresentation))
    }

    /// A Pub/Sub push body carrying a DeveloperNotification.
    public static func pushBody(messageId: String, notification: JSONValue) -> [UInt8] {
        let data = Data(notification.compactText.utf8).base64EncodedString()
        return Array(JSONValue.makeObject([
            ("message", .makeObject([("attributes", .makeObject([])), ("data", .string(data)), ("messageId", .string(messageId)),
                                     ("publishTime", .string("2026-03-31T08:15:00.000Z"))])),
            ("subscription", .string("projects/example-project/subscriptions/rtdn-push")),
        ]).compactText.utf8)
    }

    public static func subscription(_ code: Int64, token: String = "purchase-token-abc", package: String = TestGoogleSigner.packageName) -> JSONValue {
        .makeObject([("version", .string("1.0")), ("packageName", .string(package)), ("eventTimeMillis", .string("1774944900000")),
                     ("subscriptionNotification", .makeObject([("version", .string("1.0")), ("notificationType", .int(code)),
                                                               ("purchaseToken", .string(token)), ("subscriptionId", .string("vip_month"))]))])
    }

    public static func voided(orderId: String, refundType: Int64 = 1) -> JSONValue {
        .makeObject([("version", .string("1.0")), ("packageName", .string(packageName)), ("eventTimeMillis", .string("1774944900000")),
                     ("voidedPurchaseNotification", .makeObject([("purchaseToken", .string("purchase-token-void")), ("orderId", .string(orderId)),
                                                                 ("productType", .int(2)), ("refundType", .int(refundType))]))])
    }
}

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
        let cert = try Certificate(version: .v3, serialNumber: .init(bytes: serialBytes), publicKey: .init(platformKey.publicKey),
                                   notValidBefore: Date().addingTimeInterval(-86_400), notValidAfter: Date().addingTimeInterval(86_400 * 365),
                                   issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
                                   extensions: Certificate.Extensions(), issuerPrivateKey: .init(platformKey))
        return try cert.serializeAsPEM().pemString
    }

    public var configuration: WeChatPayVerifier.Configuration {
        .init(platformKeys: [WeChatPayVerifier.serial(serial): platformKey.publicKey], apiV3Key: apiV3Key, appId: Self.appId, merchantId: Self.merchantId)
    }

    /// The WeChat Pay public key's id, for a merchant signed in public-key mode (its key: ``publicKey``).
    public static let publicKeyId = "PUB_KEY_ID_0112345678902026033100112233000001"

    /// The configuration with the WeChat Pay public key `publicKey` beside (or, `certificates` false,
    /// instead of) the platform certificate.
    public func configuration(publicKey: _RSA.Signing.PrivateKey, certificates: Bool = true) -> WeChatPayVerifier.Configuration {
        var c = configuration
        if !certificates { c.platformKeys = [:] }
        c.publicKeys = [Self.publicKeyId: publicKey.publicKey]
        return c
    }

    /// A TRANSACTION.SUCCESS body (its resource encrypted) and the headers that sign it.
    public func notification(id: String, outTradeNo: String = "order-0001", transactionId: String = "4200000000202603310000000001",
                             associatedData: String = "transaction", tamperAssociatedData: Bool = false, timestamp: Date = Date(),
                             nonce: String = UUID().uuidString, signer: _RSA.Signing.PrivateKey? = nil) throws -> (body: [UInt8], headers: WeChatPayVerifier.Headers) {
        try signed(id: id, eventType: "TRANSACTION.SUCCESS", resource: Self.transaction(outTradeNo: outTradeNo, transactionId: transactionId),
                   associatedData: associatedData, tamperAssociatedData: tamperAssociatedData, timestamp: timestamp, nonce: nonce, signer: signer)
    }

    /// A paid transaction's resource, as WeChat Pay sends it.
    public static func transaction(outTradeNo: String = "order-0001", transactionId: String = "4200000000202603310000000001", total: Int64 = 600) -> JSONValue {
        .makeObject([
            ("appid", .string(Self.appId)), ("mchid", .string(Self.merchantId)), ("out_trade_no", .string(outTradeNo)),
            ("transaction_id", .string(transactionId)), ("trade_type", .string("APP")), ("trade_state", .string("SUCCESS")),
            ("trade_state_desc", .string("支付成功")), ("bank_type", .string("CMC")), ("attach", .string("")),
            ("success_time", .string("2026-03-31T16:15:00+08:00")), ("payer", .makeObject([("openid", .string("oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"))])),
            ("amount", .makeObject([("total", .int(total)), ("payer_total", .int(total)), ("currency", .string("CNY")), ("payer_currency", .string("CNY"))])),
        ])
    }

    /// A refund's resource, as WeChat Pay sends it (REFUND.SUCCESS, .ABNORMAL, .CLOSED).
    public static func refund(status: String, refundId: String = "50000000382019052709732678859", transactionId: String = "4200000000202603310000000001",
                              refund: Int64 = 600) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("mchid", .string(merchantId)), ("out_trade_no", .string("order-0001")), ("transaction_id", .string(transactionId)),
            ("out_refund_no", .string("refund-0001")), ("refund_id", .string(refundId)), ("refund_status", .string(status)),
            ("user_received_account", .string("招商银行信用卡0403")),
            ("amount", .makeObject([("total", .int(600)), ("refund", .int(refund)), ("payer_total", .int(600)), ("payer_refund", .int(refund))])),
        ]
        if status == "SUCCESS" { members.append(("success_time", .string("2026-04-01T10:00:00+08:00"))) }
        return .makeObject(members)
    }

    /// Any event with `resource` encrypted, signed by the platform key (or `signer`, with `serial`).
    public func signed(id: String, eventType: String, resource: JSONValue, associatedData: String = "transaction", tamperAssociatedData: Bool = false,
                       timestamp: Date = Date(), nonce: String = UUID().uuidString, signer: _RSA.Signing.PrivateKey? = nil,
                       serial: String? = nil) throws -> (body: [UInt8], headers: WeChatPayVerifier.Headers) {
        let resourceNonce = "fdasflkja484"
        let sealed = try AES.GCM.seal(Array(resource.compactText.utf8), using: SymmetricKey(data: apiV3Key), nonce: AES.GCM.Nonce(data: Array(resourceNonce.utf8)),
                                      authenticating: Array(associatedData.utf8))
        let body = JSONValue.makeObject([
            ("id", .string(id)), ("create_time", .string("2026-03-31T16:15:05+08:00")), ("resource_type", .string("encrypt-resource")),
            ("event_type", .string(eventType)), ("summary", .string("支付成功")),
            ("resource", .makeObject([("original_type", .string("transaction")), ("algorithm", .string("AEAD_AES_256_GCM")),
                                      ("ciphertext", .string(Data(sealed.ciphertext + sealed.tag).base64EncodedString())),
                                      ("associated_data", .string(tamperAssociatedData ? associatedData + "x" : associatedData)),
                                      ("nonce", .string(resourceNonce))])),
        ])
        let bytes = Array(body.compactText.utf8)
        let ts = String(Int64(timestamp.timeIntervalSince1970))
        let message = Array("\(ts)\n\(nonce)\n".utf8) + bytes + [0x0A]
        let signature = try (signer ?? platformKey).signature(for: message, padding: .insecurePKCS1v1_5)
        return (bytes, .init(timestamp: ts, nonce: nonce, signature: Data(signature.rawRepresentation).base64EncodedString(), serial: serial ?? self.serial))
    }
}
