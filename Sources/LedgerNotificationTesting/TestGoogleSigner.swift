import _CryptoExtras
import Crypto
import Foundation
import LedgerCore
import LedgerNotifications
import SwiftASN1
import X509

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
        return JSONValue.makeObject([
            (
                "keys",
                .array([
                    .makeObject([
                        ("kty", .string("RSA")), ("alg", .string("RS256")), ("use", .string("sig")),
                        ("kid", .string(kid)),
                        ("n", .string(TestAppleChain.b64url(Array(p.modulus)))),
                        ("e", .string(TestAppleChain.b64url(Array(p.publicExponent)))),
                    ])
                ])
            )
        ]).compactText
    }

    public func token(
        audience: String = TestGoogleSigner.audience, expiresIn: TimeInterval = 3600,
        issuer: String = "https://accounts.google.com",
        email: String = TestGoogleSigner.serviceAccount, signer: _RSA.Signing.PrivateKey? = nil
    ) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let header = JSONValue.makeObject([("alg", .string("RS256")), ("kid", .string(kid)), ("typ", .string("JWT"))])
        let claims = JSONValue.makeObject([
            ("aud", .string(audience)), ("azp", .string("1234567890")), ("email", .string(email)),
            ("email_verified", .bool(true)), ("exp", .int(now + Int64(expiresIn))), ("iat", .int(now - 10)),
            ("iss", .string(issuer)), ("sub", .string("1234567890")),
        ])
        let input =
            TestAppleChain.b64url(Array(header.compactText.utf8)) + "."
            + TestAppleChain.b64url(Array(claims.compactText.utf8))
        let sig = try (signer ?? key).signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + TestAppleChain.b64url(Array(sig.rawRepresentation))
    }

    /// A Pub/Sub push body carrying a DeveloperNotification.
    public static func pushBody(messageId: String, notification: JSONValue) -> [UInt8] {
        let data = Data(notification.compactText.utf8).base64EncodedString()
        return Array(
            JSONValue.makeObject([
                (
                    "message",
                    .makeObject([
                        ("attributes", .makeObject([])), ("data", .string(data)), ("messageId", .string(messageId)),
                        ("publishTime", .string("2026-03-31T08:15:00.000Z")),
                    ])
                ),
                ("subscription", .string("projects/example-project/subscriptions/rtdn-push")),
            ]).compactText.utf8)
    }

    public static func subscription(
        _ code: Int64, token: String = "purchase-token-abc", package: String = TestGoogleSigner.packageName
    ) -> JSONValue {
        .makeObject([
            ("version", .string("1.0")), ("packageName", .string(package)),
            ("eventTimeMillis", .string("1774944900000")),
            (
                "subscriptionNotification",
                .makeObject([
                    ("version", .string("1.0")), ("notificationType", .int(code)),
                    ("purchaseToken", .string(token)), ("subscriptionId", .string("vip_month")),
                ])
            ),
        ])
    }

    public static func voided(orderId: String, refundType: Int64 = 1) -> JSONValue {
        .makeObject([
            ("version", .string("1.0")), ("packageName", .string(packageName)),
            ("eventTimeMillis", .string("1774944900000")),
            (
                "voidedPurchaseNotification",
                .makeObject([
                    ("purchaseToken", .string("purchase-token-void")), ("orderId", .string(orderId)),
                    ("productType", .int(2)), ("refundType", .int(refundType)),
                ])
            ),
        ])
    }
}
