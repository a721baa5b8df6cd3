import LedgerDomain

/// How the generated histories write their ids.
///
/// `short` ids (`u17`, `o139`, `2000139`, `g139`) are at most 15 UTF-8 bytes, which a Swift
/// `String` keeps inline: no allocation, no reference count. The stores' and apps' ids are longer,
/// and a `String` of more than 15 bytes lives on the heap, so a fold of real ids allocates, retains
/// and releases where a fold of short ones does not. `store` ids are as long as theirs:
///
/// - users and orders as an app names them: `usr_` and `ord_` and 19 or 20 digits (24 and 23 bytes);
/// - App Store transactions: 16 digits, renewals their own 16 digits;
/// - Google Play: `GPA.` and four groups of digits (24 bytes);
/// - WeChat Pay: 28 digits (`4200001`, a date, 13 digits);
/// - grants, spends and refunds as an app names them: 23 to 25 bytes.
public enum IdShape: String, Sendable, CaseIterable {
    case short
    case store

    func user(_ k: Int) -> String { self == .short ? "u\(k)" : "usr_" + Self.digits(k, 20) }
    func order(_ n: Int) -> String { self == .short ? "o\(n)" : "ord_" + Self.digits(n, 19) }
    func grant(_ n: Int) -> String { self == .short ? "g\(n)" : "grant_" + Self.digits(n, 18) }
    func grant(_ n: Int, renewal r: Int) -> String { grant(n) + "r\(r)" }
    func spend(_ n: Int) -> String { self == .short ? "s\(n)" : "spend_" + Self.digits(n, 18) }
    func refund(_ n: Int) -> String { self == .short ? "rf\(n)" : "refund_" + Self.digits(n, 18) }

    func transaction(_ channel: Channel, _ n: Int) -> String {
        switch (self, channel) {
        case (.short, .appstore): return "2000\(n)"
        case (.short, .googleplay): return "GPA.\(n)"
        case (.short, _): return "4200\(n)"
        case (.store, .appstore): return "2000000" + Self.digits(n, 9)
        case (.store, .googleplay):
            let d = Self.digits(n, 17)
            return "GPA.\(d.prefix(4))-\(d.dropFirst(4).prefix(4))-\(d.dropFirst(8).prefix(4))-\(d.suffix(5))"
        case (.store, _): return "420000120260101" + Self.digits(n, 13)
        }
    }

    /// The id of renewal `r` of purchase `n`, whose first transaction is `first` (the generated
    /// subscriptions are the App Store's).
    func renewal(_ n: Int, _ r: Int, of first: String) -> String {
        self == .short ? "\(first)r\(r)" : "2000001" + Self.digits(n, 7) + Self.digits(r, 2)
    }

    /// `n` in `width` decimal digits, zeros first (the last `width` digits of a larger `n`: ids stay
    /// distinct up to ten million purchases, about 65 million facts).
    static func digits(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? String(s.suffix(width)) : String(repeating: "0", count: width - s.count) + s
    }
}
