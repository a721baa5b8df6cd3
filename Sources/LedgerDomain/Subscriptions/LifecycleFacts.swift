import LedgerCore

// What the stores sign about a subscription's life between payments: pauses, holds, grace that
// ended, time given without payment, price consent (docs/domain.md, the stores' signed word).

/// How a subscription's state changed, as the store signed it.
public enum LifecycleChange: String, Sendable, Hashable, CaseIterable {
    /// Google SUBSCRIPTION_PAUSED: no access until it resumes; the expiry moves by the pause.
    case paused
    /// Google SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED: a pause will start at the next renewal.
    case pauseScheduled = "pause-scheduled"
    /// Google SUBSCRIPTION_RESTARTED (or a resumption): access again.
    case resumed
    /// Google SUBSCRIPTION_ON_HOLD: a payment failed after grace; no access.
    case onHold = "on-hold"
    /// Apple DID_FAIL_TO_RENEW GRACE_PERIOD_EXPIRED... the grace period ended in billing retry; no access.
    case graceEnded = "grace-ended"
    /// Apple RENEWAL_EXTENDED, Google SUBSCRIPTION_DEFERRED: a new expiry without payment (owed time).
    case extended
    /// Apple PRICE_INCREASE, Google PRICE_CHANGE_*: the buyer's consent to a new price.
    case priceConsent = "price-consent"
}

/// The buyer's answer to a price increase, as the store signed it.
public struct PriceConsent: OpenEnum, Codable {
    public let raw: String
    public init(raw: String) { self.raw = raw }
    /// Apple PRICE_INCREASE PENDING, Google PRICE_CHANGE_UPDATED / PRICE_STEP_UP_CONSENT_UPDATED (asked).
    public static let pending = PriceConsent(raw: "pending")
    /// Apple PRICE_INCREASE ACCEPTED, Google PRICE_CHANGE_CONFIRMED.
    public static let accepted = PriceConsent(raw: "accepted")
    public static let known: [PriceConsent] = [.pending, .accepted]
}

/// A subscription's state changed without a payment: paused, on hold, grace ended, resumed,
/// extended or deferred, or the buyer's consent to a new price.
@PublicInit
public struct SubscriptionStateChanged: SubscriptionNotice {
    public var channel: Channel
    public var originalTransactionId: String
    public var notificationId: String
    public var change: LifecycleChange
    /// The store's time of the change.
    public var effectiveAt: Timestamp
    /// Extended or deferred: the new expiry. Paused: when it resumes, where the store says.
    public var expiresAt: Timestamp?
    /// Extended: the transaction whose period now ends at `expiresAt`.
    public var transactionId: String?
    public var priceConsent: PriceConsent?
    /// The new price the consent is about, exactly as the store signed it.
    public var newPrice: Money?
    public var app: String?
    public var merchant: String?

    public static let fields = FieldTable(
        SubscriptionStateChanged(
            channel: .appstore, originalTransactionId: "", notificationId: "", change: .paused, effectiveAt: .blank),
        noticeFields(
            \.channel, \.originalTransactionId, \.notificationId, \.app, \.merchant,
            [
                .choice(
                    "change", \.change,
                    "paused, pause-scheduled, resumed, on-hold, grace-ended, extended (a new expiry without payment) or price-consent."
                ),
                .timestamp("effectiveAt", \.effectiveAt, "The store's time of the change."),
                .optionalTimestamp(
                    "expiresAt", \.expiresAt,
                    "Extended: the new expiry, owed without payment. Paused: when it resumes, where the store says."),
                .optionalText(
                    "transactionId", \.transactionId, "Extended: the transaction whose period now ends at expiresAt."),
                .optionalOpen(
                    "priceConsent", \.priceConsent, "price-consent: the buyer's answer, pending or accepted."),
                .optionalObject("newPrice", \.newPrice, "price-consent: the new price, as the store signed it."),
            ]))
}

extension FactTypes {
    public static let subscriptionStateChanged = FactType<SubscriptionStateChanged>(
        "SubscriptionStateChanged",
        "A subscription's state changed without a payment: paused, on hold, grace ended, resumed, "
            + "extended or deferred (a new expiry owed without payment), or the buyer's consent to a new price.",
        stream: "<channel>:sub:<originalTransactionId>", key: "<channel>:notification:<notificationId>:state",
        wrap: Fact.subscriptionStateChanged,
        summary: { f in
            "\(f.originalTransactionId) \(f.change.rawValue)" + (f.expiresAt.map { " until \($0.iso8601)" } ?? "")
                + (f.priceConsent.map { " (\($0.raw)" + (f.newPrice.map { " \($0)" } ?? "") + ")" } ?? "")
        })
}
