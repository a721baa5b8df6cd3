import Foundation
import LedgerCore
import Testing

/// The ids a fact posted without one is given (`UUID.random()`).
@Suite("Random UUIDs")
struct RandomUUIDTests {
    /// Version 4 with RFC 4122's variant, every other bit drawn (each takes both values across a
    /// few thousand ids), the two halves drawn apart, and no id twice.
    @Test func versionFourWithEveryOtherBitRandom() {
        let ids = (0..<4_096).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        var ones = [UInt8](repeating: 0, count: 16), zeros = [UInt8](repeating: 0, count: 16)
        var halvesAlike = 0
        for id in ids {
            let b = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(b[6] >> 4 == 4 && b[8] >> 6 == 0b10, "\(id)")
            for i in 0..<16 {
                ones[i] |= b[i]
                zeros[i] |= ~b[i]
            }
            if b[0..<6] == b[8..<14] { halvesAlike += 1 }
        }
        // The version's four bits and the variant's two are fixed; the other 122 vary.
        var fixedOnes = [UInt8](repeating: 0xFF, count: 16), fixedZeros = [UInt8](repeating: 0xFF, count: 16)
        fixedOnes[6] = 0x4F
        fixedZeros[6] = 0xBF
        fixedOnes[8] = 0xBF
        fixedZeros[8] = 0x7F
        #expect(ones == fixedOnes)
        #expect(zeros == fixedZeros)
        #expect(halvesAlike == 0)
    }
}
