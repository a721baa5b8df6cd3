import Foundation

/// Helpers for libpq connection strings (URLs and keyword/value strings).
public enum ConnectionString {
    /// The keywords whose values are secrets (compared without case, percent-decoded).
    static let secretKeys = ["password", "sslpassword"]

    /// `text` with every password replaced by `***`, safe to print or log. `text` is a connection
    /// string or any message that may quote one (libpq's parse errors quote the whole string).
    ///
    /// Errs on the side of hiding: in a URL the userinfo password runs to the LAST `@` of the
    /// URL (libpq's parser accepts `?`, `#` and `@` there; a `/` makes libpq fail and quote the
    /// string, which this hides too); a `password` or `sslpassword` keyword or query parameter (any
    /// case, percent-encoded or not, spaces around `=`) hides its value, quoted or not.
    public static func redacted(_ text: String) -> String {
        redactKeywords(redactUserinfo(Array(text)))
    }

    /// `message` redacted, and with the literal password values of `connectionString` hidden too
    /// (libpq quotes fragments of a string it cannot parse).
    public static func redacted(_ message: String, quoting connectionString: String) -> String {
        var out = redacted(message)
        // Whole values, then the pieces libpq may quote apart (a '/' or ':' in a URL password makes
        // it read part of the password as a host or a port); longest first.
        var pieces: Set<String> = []
        for secret in secrets(in: connectionString) {
            for form in [secret, secret.removingPercentEncoding ?? secret] {
                pieces.insert(form)
                for part in form.split(whereSeparator: { "/:?#@".contains($0) }) { pieces.insert(String(part)) }
            }
        }
        for piece in pieces.filter({ $0.count >= 3 }).sorted(by: { $0.count > $1.count }) {
            out = out.replacingOccurrences(of: piece, with: "***")
        }
        return out
    }

    /// The password values a connection string holds, as written.
    static func secrets(in s: String) -> [String] {
        let c = Array(s)
        return userinfoSpans(c).map { String(c[$0]) } + keywordSpans(c).map { String(c[$0]) }
    }

    // MARK: URLs

    private static func redactUserinfo(_ c: [Character]) -> [Character] {
        var out = c
        for span in userinfoSpans(c).reversed() { out.replaceSubrange(span, with: Array("***")) }
        return out
    }

    /// The password ranges of every `scheme://user:password@` in `c`.
    private static func userinfoSpans(_ c: [Character]) -> [Range<Int>] {
        var spans: [Range<Int>] = []
        var i = 0
        while let schemeEnd = find(Array("://"), in: c, from: i) {
            let start = schemeEnd + 3
            var end = start
            while end < c.count, !c[end].isWhitespace { end += 1 }
            // The user runs to the first ':'; the password to the last '@' of the token.
            if let colon = c[start..<end].firstIndex(of: ":"),
                !c[start..<colon].contains(where: { "@/?#".contains($0) }),
                let at = c[(colon + 1)..<end].lastIndex(of: "@")
            {
                spans.append((colon + 1)..<at)
            }
            i = max(end, start)
        }
        return spans
    }

    // MARK: Keywords and query parameters

    private static func redactKeywords(_ c: [Character]) -> String {
        var out = c
        for span in keywordSpans(c).reversed() { out.replaceSubrange(span, with: Array("***")) }
        return String(out)
    }

    /// The value ranges of every `password=` / `sslpassword=` keyword or query parameter in `c`.
    private static func keywordSpans(_ c: [Character]) -> [Range<Int>] {
        var spans: [Range<Int>] = []
        var i = 0
        while i < c.count {
            let atBoundary = i == 0 || c[i - 1].isWhitespace || "?&\"'(,;".contains(c[i - 1])
            guard atBoundary, let (keyEnd, matched) = matchKey(c, at: i), matched else {
                i += 1
                continue
            }
            var j = keyEnd
            while j < c.count, c[j] == " " || c[j] == "\t" { j += 1 }
            guard j < c.count, c[j] == "=" else {
                i += 1
                continue
            }
            j += 1
            while j < c.count, c[j] == " " || c[j] == "\t" { j += 1 }
            let valueStart = j
            if j < c.count, c[j] == "'" {
                j += 1
                while j < c.count, c[j] != "'" { j += c[j] == "\\" ? 2 : 1 }
                j = min(j + 1, c.count)
            } else if i > 0 && "?&".contains(c[i - 1]) {
                // A URL's query parameter: to the next parameter (or the fragment).
                while j < c.count, !c[j].isWhitespace, c[j] != "&", c[j] != "#" { j += 1 }
            } else {
                // A keyword/value string: to the next unescaped space; `&` is part of the value,
                // and a backslash makes the next character (a space too) part of it.
                while j < c.count, !c[j].isWhitespace { j += c[j] == "\\" ? 2 : 1 }
                j = min(j, c.count)
            }
            if j > valueStart { spans.append(valueStart..<j) }
            i = max(j, i + 1)
        }
        return spans
    }

    /// Whether a secret keyword starts at `i` (letters compared without case, `%XX` decoded);
    /// returns where the key ends.
    private static func matchKey(_ c: [Character], at i: Int) -> (Int, Bool)? {
        var decoded = ""
        var j = i
        while j < c.count, decoded.count < 12 {
            if c[j] == "%", j + 2 < c.count, let byte = UInt8(String(c[(j + 1)...(j + 2)]), radix: 16), byte < 0x80 {
                decoded.append(Character(Unicode.Scalar(byte)))
                j += 3
            } else if c[j].isLetter {
                decoded.append(c[j])
                j += 1
            } else {
                break
            }
            if secretKeys.contains(decoded.lowercased()) {
                // Longest match: "password" must not stop inside "passwordx".
                let next = j < c.count ? c[j] : " "
                if !(next.isLetter || next == "%") { return (j, true) }
            }
        }
        return nil
    }

    private static func find(_ needle: [Character], in hay: [Character], from: Int) -> Int? {
        guard needle.count <= hay.count else { return nil }
        var i = from
        while i + needle.count <= hay.count {
            if Array(hay[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}

extension ConnectionString {
    /// `s` with the login user set to `user` (see ``setting(_:to:in:)``).
    public static func settingUser(_ user: String, in s: String) -> String { setting("user", to: user, in: s) }

    /// `s` with libpq's `keyword` set to `value`: a query parameter for a URL, a keyword for a
    /// keyword string (libpq takes the last value given, so this wins over one given earlier, in a
    /// URL's userinfo or a keyword).
    public static func setting(_ keyword: String, to value: String, in s: String) -> String {
        if s.hasPrefix("postgresql://") || s.hasPrefix("postgres://") {
            let encoded =
                value.addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "_-."))) ?? value
            let (base, fragment) = s.firstIndex(of: "#").map { (String(s[..<$0]), String(s[$0...])) } ?? (s, "")
            return base + (base.contains("?") ? "&" : "?") + keyword + "=" + encoded + fragment
        }
        let quoted =
            "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        return s + " " + keyword + "=" + quoted
    }
}
