import Crypto

/// SHA-256 by the platform's implementation (swift-crypto: BoringSSL on Linux, which uses the
/// CPU's SHA extensions where it has them; CryptoKit on Apple platforms).
public struct SHA256 {
    private var hasher = Crypto.SHA256()

    public init() {}

    public static func hash(_ bytes: [UInt8]) -> [UInt8] { bytesOf(Crypto.SHA256.hash(data: bytes)) }

    /// `body` given the digest of `bytes` where it lies (no array made for it).
    public static func withHash<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try Crypto.SHA256.hash(data: bytes).withUnsafeBytes(body)
    }

    public static func hash<S: Sequence>(_ data: S) -> [UInt8] where S.Element == UInt8 {
        if let bytes = data as? [UInt8] { return bytesOf(Crypto.SHA256.hash(data: bytes)) }
        return bytesOf(Crypto.SHA256.hash(data: Array(data)))
    }

    /// `sha256:<hex>`, the form the ledger names a file or a raw payload by.
    public static func digest<S: Sequence>(_ data: S) -> String where S.Element == UInt8 {
        "sha256:" + hash(data).hexString
    }

    public mutating func update(_ data: [UInt8]) { hasher.update(data: data) }

    public mutating func update(_ data: UnsafeBufferPointer<UInt8>) {
        hasher.update(bufferPointer: UnsafeRawBufferPointer(data))
    }

    public mutating func finalize() -> [UInt8] { Self.bytesOf(hasher.finalize()) }

    /// The digest's 32 bytes, copied at once (`Array(digest)` goes through the generic sequence
    /// path, byte by byte).
    private static func bytesOf(_ digest: Crypto.SHA256.Digest) -> [UInt8] { digest.withUnsafeBytes { Array($0) } }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
