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

/// Base64 and base64url (padding optional), decoded straight from UTF-8 bytes; base64url written
/// without padding, as JWS and JWT parts are.
public enum Base64 {
    /// `bytes` as unpadded base64url.
    public static func urlEncoded(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// 6-bit values of both alphabets (`+/` and `-_`); 0xFF for anything else.
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            t[Int(c)] = UInt8(i)
        }
        t[Int(UInt8(ascii: "+"))] = 62
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "/"))] = 63
        t[Int(UInt8(ascii: "_"))] = 63
        return t
    }()

    /// The bytes, or nil for a character outside the alphabet `url` selects (padding may end the text).
    public static func decode(_ text: some StringProtocol, url: Bool) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        while utf8.last == UInt8(ascii: "=") { utf8.removeLast() }
        return decode(bytes: utf8[...], url: url)
    }

    static func decode(bytes: ArraySlice<UInt8>, url: Bool) -> [UInt8]? {
        if bytes.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for c in bytes {
            if url
                ? (c == UInt8(ascii: "+") || c == UInt8(ascii: "/"))
                : (c == UInt8(ascii: "-") || c == UInt8(ascii: "_"))
            {
                return nil
            }
            let v = table[Int(c)]
            if v == 0xFF { return nil }
            buffer = buffer << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}
