import LedgerCore

/// A verified notification the ledger kept but could not make into facts, in whole or in part: an
/// unknown type, a missing field, a partial void without its quantity, a purchase whose price the
/// notification does not carry. Listed as `untranslated-notification` until a later fact completes
/// it (``StoreNotificationReceived/Awaiting``); a notice for operators, with no money at risk.
public struct UntranslatedNotice: Hashable, Sendable, Codable {
    public var position: Int64
    public var channel: Channel
    public var notificationId: String
    public var type: String
    public var transactionId: String?
    public var originalTransactionId: String?
    public var reason: String
    /// `voided-quantity` or `verification`; nil when no later fact completes it.
    public var awaiting: String?
}

extension Projections {
    mutating func untranslated(_ f: StoreNotificationReceived, _ ctx: FactContext) {
        pendingCanceled(f)
        // One per notification: a redelivery is the same fact (its natural key), never stored twice.
        guard let reason = f.untranslated, !alreadyCompleted(f) else { return }
        let n = UntranslatedNotice(
            position: ctx.position, channel: f.channel, notificationId: f.notificationId,
            type: f.type.raw + (f.subtype.map { "/" + $0.raw } ?? ""), transactionId: f.transactionId,
            originalTransactionId: f.originalTransactionId, reason: reason, awaiting: f.awaiting?.rawValue)
        untranslated.append(n)
        if let key = Self.awaitingKey(n) { awaitingNotices.insert(key) }
    }

    /// Whether what the notice awaits is in the log already: the verification of the transaction it
    /// names (a backend that verified before the notification arrived), or the quantity of its void.
    /// A Google subscription's purchase notice that names only its purchase token is complete when
    /// the subscription that token names has its purchase verified (its first period: every later
    /// one is a renewal). (A one-time purchase's notice that names only its token waits for a
    /// verification naming that token: one logged before it is not found by the token.)
    func alreadyCompleted(_ f: StoreNotificationReceived) -> Bool {
        if f.awaiting == .verification, f.channel == .googleplay, let token = f.originalTransactionId,
            Self.isPendingPurchase(f.type.raw)
        {
            // A pending purchase canceled before its notice was logged (Pub/Sub keeps no order).
            if canceledPending.contains(token) { return true }
            if f.transactionId == nil, f.type.raw == "4",
                let periods = subscriptions.with(Self.subscriptionKey(.googleplay, token), \.periods),
                periods.contains(where: {
                    transactions.with($0.transactionId, { $0.verified && !$0.isRenewal }) == true
                })
            {
                return true
            }
        }
        guard let awaiting = f.awaiting, let tx = f.transactionId else { return false }
        switch awaiting {
        case .verification:
            return withTransaction(f.channel, f.app, tx, \.verified) == true
        case .voidedQuantity:
            return withTransaction(f.channel, f.app, tx) { $0.voidedQuantity != nil || $0.storeRevokedPosition != nil }
                == true
        }
    }

    /// What completes a notice: `channel|awaiting|tx|<id>`, or `...|token|<original>` for one that
    /// names no transaction; nil for a notice nothing completes.
    static func awaitingKey(_ n: UntranslatedNotice) -> String? {
        guard let a = n.awaiting else { return nil }
        if let tx = n.transactionId { return "\(n.channel.rawValue)|\(a)|tx|\(tx)" }
        return n.originalTransactionId.map { "\(n.channel.rawValue)|\(a)|token|\($0)" }
    }

    /// A later fact completes the notices awaiting it: a void's quantity, or the purchase's
    /// verification. A lookup per fact; the list is only touched when a notice is completed.
    mutating func complete(
        _ awaiting: StoreNotificationReceived.Awaiting, _ channel: Channel, transactionId: String?, original: String?
    ) {
        guard !awaitingNotices.isEmpty else { return }
        let prefix = "\(channel.rawValue)|\(awaiting.rawValue)|"
        let keys = [transactionId.map { prefix + "tx|" + $0 }, original.map { prefix + "token|" + $0 }].compactMap {
            $0
        }
        .filter { awaitingNotices.contains($0) }
        guard !keys.isEmpty else { return }
        for k in keys { awaitingNotices.remove(k) }
        untranslated.removeAll { n in Self.awaitingKey(n).map(keys.contains) ?? false }
    }

    /// A Google purchase canceled while its payment was pending (SUBSCRIPTION_PENDING_PURCHASE_CANCELED,
    /// ONE_TIME_PRODUCT_CANCELED) will never be verified: the notices of that purchase token's
    /// purchase awaiting its verification are complete, logged before the cancellation or after it.
    mutating func pendingCanceled(_ f: StoreNotificationReceived) {
        guard f.channel == .googleplay, let token = f.originalTransactionId,
            ["20", "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", "ONE_TIME_PRODUCT_2"].contains(f.type.raw)
        else { return }
        canceledPending.insert(token)
        guard !awaitingNotices.isEmpty else { return }
        let awaiting = StoreNotificationReceived.Awaiting.verification.rawValue
        let done = untranslated.filter {
            $0.channel == .googleplay && $0.awaiting == awaiting && $0.originalTransactionId == token
                && Self.isPendingPurchase($0.type)
        }
        guard !done.isEmpty else { return }
        for n in done { if let key = Self.awaitingKey(n) { awaitingNotices.remove(key) } }
        untranslated.removeAll { n in done.contains(n) }
    }

    /// A Google notification of the purchase itself (SUBSCRIPTION_PURCHASED, ONE_TIME_PRODUCT_PURCHASED),
    /// the one a pending payment leaves awaiting: `type` raw, or a notice's `type/subtype`. A renewal
    /// of the same token is not (a pending purchase canceled has none).
    static func isPendingPurchase(_ type: String) -> Bool {
        let code = type.split(separator: "/", maxSplits: 1).first.map(String.init) ?? type
        return code == "4" || code == "ONE_TIME_PRODUCT_1"
    }

    /// Whether a notice awaits the quantity of this transaction's void.
    func awaitsVoidedQuantity(_ channel: Channel, _ transactionId: String) -> Bool {
        awaitingNotices.contains(
            "\(channel.rawValue)|\(StoreNotificationReceived.Awaiting.voidedQuantity.rawValue)|tx|\(transactionId)")
    }
}

extension Audit {
    /// **untranslated-notification** (info, a notice): a verified notification kept without the
    /// facts it implies, until a later fact completes it. Subject: the transaction it names (else
    /// the purchase token or original transaction, else `notification:<id>`). No money at risk; no window.
    static func untranslatedNotifications(_ p: Projections, _ c: inout Context) {
        for n in p.untranslated {
            c.add(
                .untranslatedNotification, n.channel, user: nil, order: nil,
                tx: n.transactionId ?? n.originalTransactionId ?? "notification:\(n.notificationId)", [n.position], nil,
                "\(n.channel.rawValue) notification \(n.notificationId) (\(n.type)) was kept but not translated: \(n.reason)"
                    + (n.awaiting.map { "; awaiting \($0)" } ?? "") + ".")
        }
    }
}
