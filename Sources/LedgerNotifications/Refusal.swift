import Foundation

/// Why a store notification was refused. Nothing is appended for a refused notification; the
/// store is told by the status (and retries when the store does so on its own).
public struct NotificationRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The body or a header is not what the store sends.
        case malformed
        /// The signature does not verify with the signing key.
        case forgedSignature = "forged-signature"
        /// The certificate chain does not lead to a configured root.
        case untrustedChain = "untrusted-chain"
        /// A certificate of the chain was not valid at the signing time.
        case certificateExpired = "certificate-expired"
        /// The intermediate or the leaf lacks the store's marker extension.
        case missingOID = "missing-oid"
        /// Signed for another app (bundle id, package name, appid or mchid).
        case wrongApp = "wrong-app"
        /// Signed for another environment (a sandbox notification sent to production).
        case wrongEnvironment = "wrong-environment"
        /// The bearer token is missing, expired, for another audience, or not signed by a configured key.
        case badToken = "bad-token"
        /// The timestamp is 300 s or more away from now.
        case staleTimestamp = "stale-timestamp"
        /// The same signed request was already received.
        case replay
        /// The encrypted resource does not decrypt (wrong key, tampered ciphertext or associated data).
        case undecryptable
        /// The endpoint has no configuration for this store.
        case notConfigured = "not-configured"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Base64 and base64url without padding, as JWS and the stores use them.
enum Base64 {
    static func decode(_ text: some StringProtocol, url: Bool) -> [UInt8]? {
        var s = String(text)
        if url {
            s = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        }
        while s.utf8.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { Array($0) }
    }

    static func urlEncode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
