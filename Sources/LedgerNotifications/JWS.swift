import Foundation
import LedgerCore

/// A compact JWS (`header.payload.signature`), split and decoded but not yet verified.
public struct CompactJWS: Sendable {
    public var header: JSONValue
    public var payload: JSONValue
    public var payloadBytes: [UInt8]
    /// The ASCII bytes the signature covers: `header.payload` as sent.
    public var signingInput: [UInt8]
    public var signature: [UInt8]

    public init(_ text: String, what: String) throws(NotificationRefusal) {
        let bytes = Array(text.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw NotificationRefusal(.malformed, "\(what) is not a compact JWS (three dot-separated parts)")
        }
        guard let h = Base64.decode(bytes: parts[0], url: true), let p = Base64.decode(bytes: parts[1], url: true),
            let s = Base64.decode(bytes: parts[2], url: true)
        else {
            throw NotificationRefusal(.malformed, "\(what) has a part that is not base64url")
        }
        guard let header = try? JSONValue.parse(String(decoding: h, as: UTF8.self)), case .object = header else {
            throw NotificationRefusal(.malformed, "\(what): the JWS header is not a JSON object")
        }
        guard let payload = try? JSONValue.parse(String(decoding: p, as: UTF8.self)), case .object = payload else {
            throw NotificationRefusal(.malformed, "\(what): the JWS payload is not a JSON object")
        }
        self.header = header
        self.payload = payload
        self.payloadBytes = p
        self.signingInput = Array(bytes[parts[0].startIndex..<parts[1].endIndex])
        self.signature = s
    }
}
