#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// PostgreSQL's COPY text format (`COPY ... FROM STDIN` / `TO STDOUT` without options): fields
/// separated by a tab, rows ended by a newline, `\N` for NULL, and backslash escapes for backslash,
/// tab, newline and carriage return in the data.
public enum CopyText {
    /// Appends `s` as one field, escaping backslash, tab, newline and carriage return.
    @inlinable
    public static func appendEscaped(_ s: String, into out: inout [UInt8]) {
        for b in s.utf8 {
            switch b {
            case 0x5C:
                out.append(0x5C)
                out.append(0x5C)
            case 0x09:
                out.append(0x5C)
                out.append(UInt8(ascii: "t"))
            case 0x0A:
                out.append(0x5C)
                out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(0x5C)
                out.append(UInt8(ascii: "r"))
            default: out.append(b)
            }
        }
    }

    /// Appends `s` as one field, or the NULL marker `\N` when it is nil.
    @inlinable
    public static func appendEscaped(_ s: String?, into out: inout [UInt8]) {
        if let s { appendEscaped(s, into: &out) } else { appendNull(into: &out) }
    }

    /// Appends the NULL marker `\N`.
    @inlinable
    public static func appendNull(into out: inout [UInt8]) {
        out.append(0x5C)
        out.append(UInt8(ascii: "N"))
    }

    /// True when `raw[start..<end]` is the NULL marker `\N`.
    public static func isNull(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        end - start == 2 && raw[start] == 0x5C && raw[start + 1] == UInt8(ascii: "N")
    }

    /// Where each field of a row is (a raw tab always separates fields: tabs in data are escaped),
    /// without the final newline. With `limit`, the last field runs to the end of the row.
    public static func fieldBounds(_ raw: UnsafeRawBufferPointer, limit: Int = .max) -> [(Int, Int)] {
        var bounds: [(Int, Int)] = []
        fieldBounds(raw, limit: limit, into: &bounds)
        return bounds
    }

    /// ``fieldBounds(_:limit:)`` into an array the caller reuses from row to row.
    public static func fieldBounds(_ raw: UnsafeRawBufferPointer, limit: Int = .max, into bounds: inout [(Int, Int)]) {
        bounds.removeAll(keepingCapacity: true)
        var start = 0
        var end = raw.count
        if end > 0, raw[end - 1] == 0x0A { end -= 1 }
        var i = 0
        while i < end, bounds.count < limit - 1 {
            guard let tab = memchr(raw.baseAddress! + i, 0x09, end - i) else { break }
            i = tab - UnsafeMutableRawPointer(mutating: raw.baseAddress!)
            bounds.append((start, i))
            i += 1
            start = i
        }
        bounds.append((start, end))
    }

    /// Undoes the escaping (`\\`, `\n`, `\t`, `\r`, `\b`, `\f`, `\v`; any other escaped byte stands
    /// for itself) of `raw[from..<to]` onto `out`.
    public static func appendUnescaped(_ raw: UnsafeRawBufferPointer, from: Int, to: Int, into out: inout [UInt8]) {
        var k = from
        while k < to {
            // The run up to the next backslash is copied as it is, in one piece.
            let j =
                memchr(raw.baseAddress! + k, 0x5C, to - k).map {
                    $0 - UnsafeMutableRawPointer(mutating: raw.baseAddress!)
                } ?? to
            if j > k {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[k..<j]))
                k = j
                if k == to { break }
            }
            let b = raw[k]
            if b == 0x5C, k + 1 < to {
                switch raw[k + 1] {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "v"): out.append(0x0B)
                case let e: out.append(e)
                }
                k += 2
                continue
            }
            out.append(b)
            k += 1
        }
    }
}
