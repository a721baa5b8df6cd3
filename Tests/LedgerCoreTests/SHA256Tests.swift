import Testing
@testable import LedgerCore

/// Expected digests come from the NIST FIPS 180-4 examples and, for the boundary lengths,
/// from Python's `hashlib.sha256` (hard-coded here).
@Suite("SHA-256")
struct SHA256Tests {
    static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// `bytes(i % 256 for i in range(n))`.
    static func counting(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0) } }

    @Test(
        "NIST short messages",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ])
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hash(Self.ascii(message)).hexString == digest)
        #expect(SHA256.hash(message.utf8).hexString == digest)
    }

    @Test("one million 'a', fed in uneven chunks")
    func millionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        let total = 1_000_000
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        let sizes = [1, 63, 64, 65, 0, 7, 127, 128, 129, 1000, 3, 500, 55, 56]
        var h = SHA256()
        var fed = 0
        var k = 0
        while fed < total {
            let n = min(sizes[k % sizes.count], total - fed)
            h.update(Array(chunk[0..<n]))
            fed += n
            k += 1
        }
        #expect(fed == total)
        #expect(h.finalize().hexString == expected)

        // And in one call.
        #expect(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: total)).hexString == expected)
    }

    @Test(
        "padding boundaries: bytes 0,1,2,... of length n",
        arguments: [
            (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
            (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
            (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
            (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
            (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
            (119, "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6"),
            (120, "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c"),
            (127, "92ca0fa6651ee2f97b884b7246a562fa71250fedefe5ebf270d31c546bfea976"),
            (128, "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5"),
            (129, "5099c6a56203f9687f7d33f4bfdf576d31dc91f6b695ecea38b2770c87631135"),
        ])
    func countingBoundaries(length: Int, digest: String) {
        #expect(SHA256.hash(Self.counting(length)).hexString == digest)
    }

    @Test(
        "padding boundaries: 'a' repeated n times",
        arguments: [
            (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
            (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
        ])
    func repeatedABoundaries(length: Int, digest: String) {
        #expect(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: length)).hexString == digest)
    }

    @Test("any two-way split gives the one-shot digest")
    func everySplitPoint() {
        let message = Self.counting(200)
        let oneShot = SHA256.hash(message)
        for split in 0...message.count {
            var h = SHA256()
            h.update(Array(message[..<split]))
            h.update(Array(message[split...]))
            #expect(h.finalize() == oneShot, "split at \(split)")
        }
    }

    @Test("byte-at-a-time and empty updates give the one-shot digest")
    func byteAtATime() {
        let message = Self.counting(300)
        var h = SHA256()
        h.update([])
        for b in message {
            h.update([b])
            h.update([])
        }
        #expect(h.finalize() == SHA256.hash(message))
    }

    @Test("unsafe-buffer update matches array update")
    func bufferUpdate() {
        let message = Self.counting(150)
        var h = SHA256()
        message.withUnsafeBufferPointer { h.update($0) }
        #expect(h.finalize().hexString == SHA256.hash(message).hexString)
    }

    @Test("digest is 32 bytes")
    func digestLength() {
        #expect(SHA256.hash([UInt8]()).count == 32)
        #expect(SHA256.hash(Self.counting(1000)).count == 32)
    }

    @Test("hexString is lowercase, two digits per byte")
    func hexString() {
        #expect([UInt8]().hexString == "")
        #expect([0x00, 0x01, 0x0a, 0x7f, 0x80, 0xab, 0xff].hexString == "00010a7f80abff")
    }
}
