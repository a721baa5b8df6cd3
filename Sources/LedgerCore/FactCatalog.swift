/// The purchase facts of the domain reference (`shared/domain.md`, section 3).
///
/// The event log refuses other type names unless told to accept them, so a typo
/// (`PaymentVerifed`) never becomes a fact no projection reads.
public enum FactCatalog {
    public static let knownTypes: Set<String> = [
        "ProductDefined", "ProductChanged",
        "OrderCreated", "PaymentLaunched", "ClientCallbackReceived", "StoreNotificationReceived",
        "PaymentVerified", "VerificationFailed", "TransactionBound",
        "EntitlementGranted", "EntitlementRevoked", "CoinsSpent",
        "SubscriptionRenewed", "RenewalFailed", "AutoRenewChanged", "PlanChanged", "SubscriptionExpired",
        "RefundRequested", "RefundDeclined", "Refunded", "RefundReversed", "OrderClosed",
    ]
}
