import _CryptoExtras
import Crypto
import Foundation
import LedgerCore
import Synchronization

/// Verifies WeChat Pay API v3 notifications: SHA256withRSA over `"{timestamp}\n{nonce}\n{body}\n"` by
/// the key `Wechatpay-Serial` names: a platform certificate's serial, or the WeChat Pay public key's
/// id (`PUB_KEY_ID_…`; both are accepted while a merchant switches); the timestamp within 300 s of now; the same
/// signed request refused the second time (replay); the resource decrypted with AEAD_AES_256_GCM
/// and the APIv3 key, its associated data authenticated; the appid and mchid the configured ones.
public final class WeChatPayVerifier: Sendable {
    public struct Configuration: Sendable {
        /// Platform public keys by certificate serial.
        public var platformKeys: [String: _RSA.Signing.PublicKey]
        /// WeChat Pay public keys by key id (`PUB_KEY_ID_…`), as the merchant platform shows them.
        public var publicKeys: [String: _RSA.Signing.PublicKey] = [:]
        /// The 32-byte APIv3 key.
        public var apiV3Key: [UInt8]
        public var appId: String
        public var merchantId: String
        public var window: TimeInterval = 300

        public init(
            platformKeys: [String: _RSA.Signing.PublicKey], apiV3Key: [UInt8], appId: String, merchantId: String
        ) {
            self.platformKeys = platformKeys
            self.apiV3Key = apiV3Key
            self.appId = appId
            self.merchantId = merchantId
        }
    }

    public struct Headers: Sendable {
        public var timestamp: String?
        public var nonce: String?
        public var signature: String?
        public var serial: String?
        public init(timestamp: String?, nonce: String?, signature: String?, serial: String?) {
            self.timestamp = timestamp
            self.nonce = nonce
            self.signature = signature
            self.serial = serial
        }
    }

    public struct Verified: Sendable {
        /// The notification envelope (`id`, `event_type`, `create_time`, `resource`...).
        public var envelope: JSONValue
        /// The decrypted resource (a transaction or a refund).
        public var resource: JSONValue
        public var signedAt: Date

        /// What ``WeChatPayVerifier/verify(headers:body:now:)`` returns; built directly by the simulator.
        public init(envelope: JSONValue, resource: JSONValue, signedAt: Date) {
            self.envelope = envelope
            self.resource = resource
            self.signedAt = signedAt
        }
    }

    public let configuration: Configuration
    /// Signed requests seen within the window (`serial/timestamp/nonce/signature` → when).
    private let seen = Mutex<[String: Date]>([:])

    public init(_ configuration: Configuration) { self.configuration = configuration }

    /// How a WeChat Pay public key's id begins, where a platform certificate's serial is hex.
    public static let publicKeyPrefix = "PUB_KEY_ID_"

    /// A certificate serial as WeChat writes it in Wechatpay-Serial: uppercase hex, no leading zeros.
    public static func serial(_ text: String) -> String {
        let trimmed = text.uppercased().drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    /// The serial of a certificate's serial-number bytes.
    public static func serial(_ bytes: some Sequence<UInt8>) -> String { serial(bytes.hexString) }

    public func verify(headers: Headers, body: [UInt8], now: Date = Date()) throws(NotificationRefusal) -> Verified {
        guard let ts = headers.timestamp, let nonce = headers.nonce, let sig = headers.signature,
            let serial = headers.serial,
            let seconds = Int64(ts)
        else {
            throw NotificationRefusal(
                .malformed, "the Wechatpay-Timestamp, -Nonce, -Signature and -Serial headers are required")
        }
        let signedAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        guard abs(signedAt.timeIntervalSince(now)) < configuration.window else {
            throw NotificationRefusal(
                .staleTimestamp,
                "Wechatpay-Timestamp is \(Int(abs(signedAt.timeIntervalSince(now)))) s away from now (the window is \(Int(configuration.window)) s)"
            )
        }
        let publicKeyMode = serial.hasPrefix(Self.publicKeyPrefix)
        guard
            let key = publicKeyMode ? configuration.publicKeys[serial] : configuration.platformKeys[Self.serial(serial)]
        else {
            throw NotificationRefusal(
                .untrustedChain,
                publicKeyMode
                    ? "Wechatpay-Serial names no configured WeChat Pay public key id"
                    : "Wechatpay-Serial names no configured platform certificate")
        }
        let message = Array("\(ts)\n\(nonce)\n".utf8) + body + [0x0A]
        guard let raw = Base64.decode(sig, url: false),
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: raw), for: message, padding: .insecurePKCS1v1_5)
        else {
            throw NotificationRefusal(
                .forgedSignature, "the Wechatpay-Signature does not verify with the key of that serial")
        }
        let replayKey = "\(serial)/\(ts)/\(nonce)/\(sig)"
        let replayed = seen.withLock { seen in
            seen = seen.filter { now.timeIntervalSince($0.value) < configuration.window * 2 }
            if seen[replayKey] != nil { return true }
            seen[replayKey] = now
            return false
        }
        if replayed {
            throw NotificationRefusal(.replay, "this signed request (timestamp, nonce, signature) was already received")
        }
        guard let envelope = try? JSONValue.parse(String(decoding: body, as: UTF8.self)),
            let resource = envelope["resource"],
            envelope["id"]?.stringValue != nil
        else {
            throw NotificationRefusal(.malformed, "the body is not a notification with id and resource")
        }
        let plain = try decrypt(resource)
        guard let decoded = try? JSONValue.parse(String(decoding: plain, as: UTF8.self)) else {
            throw NotificationRefusal(.malformed, "the decrypted resource is not JSON")
        }
        if let appid = decoded["appid"]?.stringValue ?? decoded["sp_appid"]?.stringValue, appid != configuration.appId {
            throw NotificationRefusal(
                .wrongApp, "the resource is for appid \(Echo.quoted(appid, limit: 60)), not the configured one")
        }
        if let mchid = decoded["mchid"]?.stringValue ?? decoded["sp_mchid"]?.stringValue,
            mchid != configuration.merchantId
        {
            throw NotificationRefusal(
                .wrongApp, "the resource is for mchid \(Echo.quoted(mchid, limit: 60)), not the configured one")
        }
        return Verified(envelope: envelope, resource: decoded, signedAt: signedAt)
    }

    private func decrypt(_ resource: JSONValue) throws(NotificationRefusal) -> [UInt8] {
        guard resource["algorithm"]?.stringValue == "AEAD_AES_256_GCM", let ct = resource["ciphertext"]?.stringValue,
            let nonceText = resource["nonce"]?.stringValue, let sealed = Base64.decode(ct, url: false),
            sealed.count > 16
        else {
            throw NotificationRefusal(.malformed, "resource must have algorithm AEAD_AES_256_GCM, ciphertext and nonce")
        }
        let aad = Array((resource["associated_data"]?.stringValue ?? "").utf8)
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: Array(nonceText.utf8)),
                ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: configuration.apiV3Key), authenticating: aad))
        } catch {
            throw NotificationRefusal(
                .undecryptable,
                "the resource does not decrypt with the APIv3 key (tampered ciphertext or associated data, or another key)"
            )
        }
    }
}
