/// Input echoed into a message: control characters escaped (so no escape sequence reaches the
/// terminal and no forged line starts in a log) and long values cut (so a megabyte key gives a
/// line, not a megabyte). Every message that repeats what it was given goes through here.
public enum Echo {
    /// The most characters of one echoed value.
    public static let limit = 120

    /// `value` with control characters (C0, DEL, C1, line and paragraph separators) written as
    /// `\n`, `\t`, `\r` or `\u{XX}`, cut after `limit` characters with the number left out.
    public static func shown(_ value: String, limit: Int = Echo.limit) -> String {
        var out = ""
        var count = 0
        for scalar in value.unicodeScalars {
            if count >= limit {
                let rest = value.unicodeScalars.count - count
                out += "… (\(rest) more characters)"
                break
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                let v = scalar.value
                if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029 || (0x202A...0x202E).contains(v)
                    || (0x2066...0x2069).contains(v)
                {
                    out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
            count += 1
        }
        return out
    }

    /// ``shown(_:limit:)`` in double quotes, for a value inside a sentence.
    public static func quoted(_ value: String, limit: Int = Echo.limit) -> String {
        "\"" + shown(value, limit: limit) + "\""
    }
}
