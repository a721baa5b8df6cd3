import _CryptoExtras
import Crypto
import Foundation
import LedgerCore

/// Verifies Google Play RTDN delivered by Pub/Sub push: the push's OIDC bearer token (RS256 JWT)
/// signed by a configured key (by `kid`), issued by Google, for the configured audience, not
/// expired, and (when configured) for the push's service account; then `message.data` decoded and
/// its packageName checked.
public struct GooglePlayVerifier: Sendable {
    public struct Configuration: Sendable {
        /// RSA keys by key id (Google's JWKS, as the operator configures it).
        public var keys: [String: _RSA.Signing.PublicKey]
        public var audience: String
        /// The push subscription's service account, checked against the `email` claim when set.
        public var serviceAccount: String?
        public var packageName: String
        /// Clock skew allowed on `exp` and `iat`.
        public var leeway: TimeInterval = 60

        public init(
            keys: [String: _RSA.Signing.PublicKey], audience: String, serviceAccount: String?, packageName: String
        ) {
            self.keys = keys
            self.audience = audience
            self.serviceAccount = serviceAccount
            self.packageName = packageName
        }
    }

    public struct Verified: Sendable {
        public var messageId: String
        public var publishTime: String?
        /// The decoded DeveloperNotification.
        public var notification: JSONValue

        /// What ``GooglePlayVerifier/verify(authorization:body:)`` returns; built directly by the simulator.
        public init(messageId: String, publishTime: String?, notification: JSONValue) {
            self.messageId = messageId
            self.publishTime = publishTime
            self.notification = notification
        }
    }

    public let configuration: Configuration

    public init(_ configuration: Configuration) { self.configuration = configuration }

    public func verify(
        authorization: String?, body: [UInt8], now: Date = Date()
    ) throws(NotificationRefusal) -> Verified {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            throw NotificationRefusal(.badToken, "the push carries no OIDC bearer token")
        }
        try verifyToken(String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces), now: now)
        guard let push = try? JSONValue.parse(String(decoding: body, as: UTF8.self)), let message = push["message"],
            let id = message["messageId"]?.stringValue ?? message["message_id"]?.stringValue,
            let data = message["data"]?.stringValue, let decoded = Base64.decode(data, url: false),
            let notification = try? JSONValue.parse(String(decoding: decoded, as: UTF8.self))
        else {
            throw NotificationRefusal(
                .malformed, "the body is not a Pub/Sub push with message.messageId and base64 message.data holding JSON"
            )
        }
        let package = notification["packageName"]?.stringValue
        guard package == configuration.packageName else {
            throw NotificationRefusal(
                .wrongApp,
                "the notification is for package \(Echo.quoted(package ?? "(none)", limit: 80)), not the configured one"
            )
        }
        return Verified(messageId: id, publishTime: message["publishTime"]?.stringValue, notification: notification)
    }

    func verifyToken(_ token: String, now: Date) throws(NotificationRefusal) {
        let jws: CompactJWS
        do { jws = try CompactJWS(token, what: "the bearer token") } catch {
            throw NotificationRefusal(.badToken, "the bearer token is not a JWT")
        }
        guard jws.header["alg"]?.stringValue == "RS256", let kid = jws.header["kid"]?.stringValue,
            let key = configuration.keys[kid]
        else {
            throw NotificationRefusal(.badToken, "the bearer token is not RS256 by a configured key id")
        }
        guard
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jws.signature), for: jws.signingInput,
                padding: .insecurePKCS1v1_5)
        else {
            throw NotificationRefusal(.badToken, "the bearer token's signature does not verify")
        }
        let claims = jws.payload
        let issuer = claims["iss"]?.stringValue
        guard issuer == "https://accounts.google.com" || issuer == "accounts.google.com" else {
            throw NotificationRefusal(.badToken, "the bearer token was not issued by Google")
        }
        guard claims["aud"]?.stringValue == configuration.audience else {
            throw NotificationRefusal(.badToken, "the bearer token is for another audience")
        }
        guard let exp = claims["exp"]?.intValue, Double(exp) + configuration.leeway > now.timeIntervalSince1970 else {
            throw NotificationRefusal(.badToken, "the bearer token has expired")
        }
        if let iat = claims["iat"]?.intValue, Double(iat) - configuration.leeway > now.timeIntervalSince1970 {
            throw NotificationRefusal(.badToken, "the bearer token is issued in the future")
        }
        if let account = configuration.serviceAccount {
            guard claims["email"]?.stringValue == account, claims["email_verified"] == .bool(true) else {
                throw NotificationRefusal(
                    .badToken, "the bearer token is not for the push subscription's service account")
            }
        }
    }
}
