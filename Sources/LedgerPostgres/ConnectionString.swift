import Foundation

/// Helpers for libpq connection strings (URLs and keyword/value strings).
public enum ConnectionString {
    /// The string with any password replaced by `***`, safe to print or log.
    ///
    /// Handles `postgresql://user:secret@host/db`, `?password=secret` and `password=secret` keywords.
    public static func redacted(_ s: String) -> String {
        var c = Array(s)
        // userinfo of a URL: scheme://user:secret@host...
        if let schemeEnd = find(Array("://"), in: c, from: 0) {
            let start = schemeEnd + 3
            var end = start
            while end < c.count, c[end] != "/", c[end] != "?", c[end] != "#" { end += 1 }
            if let at = c[start..<end].lastIndex(of: "@"),
               let colon = c[start..<at].firstIndex(of: ":") {
                c.replaceSubrange((colon + 1)..<at, with: Array("***"))
            }
        }
        // password=... as a URL query parameter or a keyword.
        let key = Array("password=")
        var out: [Character] = []
        var i = 0
        while i < c.count {
            let atBoundary = i == 0 || [" ", "?", "&", "\t"].contains(c[i - 1])
            if atBoundary, i + key.count <= c.count, Array(c[i..<(i + key.count)]) == key {
                out += key + Array("***")
                var j = i + key.count
                if j < c.count, c[j] == "'" {
                    j += 1
                    while j < c.count, c[j] != "'" { j += c[j] == "\\" ? 2 : 1 }
                    j = min(j + 1, c.count)
                } else {
                    while j < c.count, ![" ", "&", "\t", "#"].contains(c[j]) { j += 1 }
                }
                i = j
            } else {
                out.append(c[i])
                i += 1
            }
        }
        return String(out)
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
    /// `s` with the login user set to `user`: a `user=` query parameter for a URL, a `user=`
    /// keyword for a keyword string (libpq takes the last value given, so this wins over a user
    /// named earlier, in a URL's userinfo or a keyword).
    public static func settingUser(_ user: String, in s: String) -> String {
        if s.hasPrefix("postgresql://") || s.hasPrefix("postgres://") {
            let encoded = user.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "_-."))) ?? user
            let (base, fragment) = s.firstIndex(of: "#").map { (String(s[..<$0]), String(s[$0...])) } ?? (s, "")
            return base + (base.contains("?") ? "&" : "?") + "user=" + encoded + fragment
        }
        let quoted = "'" + user.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        return s + " user=" + quoted
    }
}
