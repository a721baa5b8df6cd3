extension JSONValue {
    /// The text PostgreSQL prints for this value stored as `jsonb` (`{"a": 1, "b": [true, null]}`):
    /// the canonical form hashed into the chain and compared on idempotent retries.
    public var canonicalText: String {
        var out: [UInt8] = []
        writeCanonical(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func writeCanonical(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case .int(let i): out.append(contentsOf: Array(String(i).utf8))
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 {
                    out.append(UInt8(ascii: ","))
                    out.append(UInt8(ascii: " "))
                }
                item.writeCanonical(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 {
                    out.append(UInt8(ascii: ","))
                    out.append(UInt8(ascii: " "))
                }
                Self.writeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(UInt8(ascii: " "))
                m.value.writeCanonical(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case 0x22:
                out.append(0x5C)
                out.append(0x22)
            case 0x5C:
                out.append(0x5C)
                out.append(0x5C)
            case 0x08:
                out.append(0x5C)
                out.append(UInt8(ascii: "b"))
            case 0x0C:
                out.append(0x5C)
                out.append(UInt8(ascii: "f"))
            case 0x0A:
                out.append(0x5C)
                out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(0x5C)
                out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(0x5C)
                out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(b >> 4)])
                out.append(hexDigits[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Compact JSON (no spaces), for output lines.
    public var compactText: String {
        var out: [UInt8] = []
        writeCompact(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func writeCompact(into out: inout [UInt8]) {
        switch self {
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.writeCompact(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                m.value.writeCompact(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        default:
            writeCanonical(into: &out)
        }
    }
}
