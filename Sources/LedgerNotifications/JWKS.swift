import _CryptoExtras
import Foundation
import LedgerCore

/// RSA keys of a JSON Web Key Set (`{"keys": [{"kty": "RSA", "kid", "n", "e"}]}`), by key id.
public enum JWKS {
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public static func rsaKeys(_ bytes: [UInt8]) throws -> [String: _RSA.Signing.PublicKey] {
        guard let set = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)),
            case .array(let keys)? = set["keys"]
        else {
            throw Problem(description: "not a JSON Web Key Set (an object with a keys array)")
        }
        var out: [String: _RSA.Signing.PublicKey] = [:]
        for k in keys where k["kty"]?.stringValue == "RSA" {
            guard let kid = k["kid"]?.stringValue,
                let n = k["n"]?.stringValue.flatMap({ Base64.decode($0, url: true) }),
                let e = k["e"]?.stringValue.flatMap({ Base64.decode($0, url: true) })
            else {
                throw Problem(description: "an RSA key lacks kid, n or e")
            }
            out[kid] = try _RSA.Signing.PublicKey(n: n, e: e)
        }
        return out
    }
}
