/// Hexadecimal text read back into bytes: two digits a byte, either case, nothing else.
public enum Hex {
    /// The value of the hex digit `c`, 0xFF when `c` is not one.
    @inlinable @inline(__always)
    public static func digit(_ c: UInt8) -> UInt8 {
        let decimal = c &- 0x30
        if decimal < 10 { return decimal }
        let letter = (c | 0x20) &- 0x61  // a-f, either case
        return letter < 6 ? letter + 10 : 0xFF
    }

    /// The bytes `text` spells; nil when it is not an even number of hex digits.
    public static func bytes(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: text.count / 2) { buffer, count in
            var i = 0, k = 0
            while i < text.count {
                let hi = digit(text[i]), lo = digit(text[i + 1])
                if hi | lo > 0x0F {
                    valid = false
                    break
                }
                buffer[k] = hi << 4 | lo
                i += 2
                k += 1
            }
            count = k
        }
        return valid ? out : nil
    }

    /// ``bytes(_:)-(UnsafeRawBufferPointer)`` of a string.
    public static func bytes(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }
}
