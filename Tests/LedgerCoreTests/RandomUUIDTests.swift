import Foundation
import LedgerCore
import Testing

/// The ids a fact posted without one is given (`UUID.systemRandom()`).
@Suite("Random UUIDs")
struct RandomUUIDTests {
    /// Version 4 with RFC 4122's variant, every other bit drawn (each takes both values across a
    /// few thousand ids), each byte drawn apart from the others, and no id twice.
    @Test func versionFourWithEveryOtherBitRandom() {
        let ids = (0..<4_096).map { _ in UUID.systemRandom() }
        #expect(Set(ids).count == ids.count)
        var ones = [UInt8](repeating: 0, count: 16), zeros = [UInt8](repeating: 0, count: 16)
        // How often each two of the 16 bytes are equal: about 16 times in 4,096 for bytes drawn
        // apart, every time for a byte used twice.
        var alike = [[Int]](repeating: [Int](repeating: 0, count: 16), count: 16)
        var wrongBits = 0
        for id in ids {
            let b = withUnsafeBytes(of: id.uuid) { Array($0) }
            if b[6] >> 4 != 4 || b[8] >> 6 != 0b10 { wrongBits += 1 }
            for i in 0..<16 {
                ones[i] |= b[i]
                zeros[i] |= ~b[i]
                for j in (i + 1)..<16 where b[i] == b[j] { alike[i][j] += 1 }
            }
        }
        #expect(wrongBits == 0)
        // The version's four bits and the variant's two are fixed; the other 122 vary.
        var fixedOnes = [UInt8](repeating: 0xFF, count: 16), fixedZeros = [UInt8](repeating: 0xFF, count: 16)
        fixedOnes[6] = 0x4F
        fixedZeros[6] = 0xBF
        fixedOnes[8] = 0xBF
        fixedZeros[8] = 0x7F
        #expect(ones == fixedOnes)
        #expect(zeros == fixedZeros)
        for i in 0..<16 {
            for j in (i + 1)..<16 { #expect(alike[i][j] < 128, "bytes \(i) and \(j) alike \(alike[i][j]) times") }
        }
    }
}
