import Foundation
import LedgerCore
import Testing

/// Hex text back to bytes, as an API token's digest and a payload's UUID are read.
@Suite("Hex")
struct HexTests {
    @Test func digitsOfEitherCaseAndNothingElse() {
        #expect(Hex.bytes("00ff7A0b") == [0x00, 0xFF, 0x7A, 0x0B])
        #expect(Hex.bytes("") == [])
        for bad in ["0", "abc", "0g", "g0", " 0", "0x00", "-1", "é0"] { #expect(Hex.bytes(bad) == nil, "\(bad)") }
        for c in UInt8.min...UInt8.max {
            let isDigit = (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
            #expect((Hex.digit(c) < 0x10) == isDigit, "\(c)")
        }
    }

    /// A UUID's text, spelled digit by digit, is Foundation's (`uuidString`, and lowercased), for
    /// every value of every byte in every place.
    @Test func aUUIDIsSpelledAsFoundationSpellsIt() {
        var ids = [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        for place in 0..<16 {
            for value in UInt8.min...UInt8.max {
                var bytes = [UInt8](repeating: 0x5A, count: 16)
                bytes[place] = value
                ids.append(bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) })
            }
        }
        for id in ids {
            #expect(id.lowercased == id.uuidString.lowercased() && id.uppercased == id.uuidString, "\(id)")
        }
        #expect(
            UUID(uuidString: "A03BBB47-0000-4000-8000-00000000FFFF")!.lowercased
                == "a03bbb47-0000-4000-8000-00000000ffff")
    }

    @Test func everyByteRoundTrips() {
        let all = Array(UInt8.min...UInt8.max)
        #expect(Hex.bytes(all.hexString) == all)
        #expect(Hex.bytes(all.hexString.uppercased()) == all)
    }
}
