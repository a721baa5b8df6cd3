import Foundation
import LedgerCore
import LedgerDomain

/// What one verified notification becomes: the facts it implies (the notification itself first)
/// and the raw signed payload, kept so an auditor can verify it again.
public struct NotificationFacts: Sendable {
    public var channel: Channel
    public var notificationId: String
    public var facts: [Fact]
    /// The store's time for the notification (its signing time).
    public var occurredAt: Timestamp
    /// The exact bytes received, with the headers that sign them where the store signs in headers.
    public var raw: [UInt8]
    public var rawHeaders: JSONValue
    /// `sha256:<hex>` of `raw`, as the facts carry it.
    public var rawDigest: String

    public static func digest(_ raw: [UInt8]) -> String { LedgerCore.SHA256.digest(raw) }

    /// Why it was recorded untranslated (in whole or in part), when it was.
    public var untranslated: String? {
        guard case .storeNotificationReceived(let n)? = facts.first else { return nil }
        return n.untranslated
    }
}

/// Pure translations from a verified notification to facts, one per store (docs/domain.md, the
/// stores' signed word). They add nothing the store did not sign, and never refuse: what cannot be
/// translated is recorded on the notification fact with the reason, so a verified notification is
/// always kept and answered 2xx. Grants and revocations are fulfilment's decisions, never made here.
///
/// One file per store: `AppleTranslator.swift`, `GoogleTranslator.swift`, `WeChatTranslator.swift`.
public enum NotificationTranslator {}

/// The facts a translation derives, and why it fell short where it did.
struct Translation {
    var facts: [Fact] = []
    var reasons: [String] = []
    var awaiting: StoreNotificationReceived.Awaiting?

    mutating func add(_ f: Fact) { facts.append(f) }
    /// The fact `body` makes of `value`, or, without it, that the notification lacks `what`.
    mutating func add(_ what: String, _ value: String?, _ body: (String) -> Fact) {
        guard let value else { return missing(what) }
        add(body(value))
    }
    mutating func missing(_ what: String) { reasons.append("lacks \(what)") }
    mutating func unknown(_ what: String) { reasons.append("not translated: \(what)") }
    mutating func await(_ a: StoreNotificationReceived.Awaiting, _ why: String) {
        awaiting = a
        reasons.append(why)
    }

    var reason: String? { reasons.isEmpty ? nil : reasons.joined(separator: "; ") }
}
