/// An integer's decimal digits written straight into bytes, as `String(value)` spells them, with
/// no String in between (COPY rows, the hash chain's canonical bytes).
public enum DecimalText {
    @inlinable
    public static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var v = value.magnitude
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: more than UInt64's 20 digits
        withUnsafeMutableBytes(of: &buffer) { b in
            var i = b.count
            repeat {
                i -= 1
                b[i] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                v /= 10
            } while v > 0
            out.append(contentsOf: b[i...])
        }
    }
}
