import Foundation
import LedgerCore

/// One purchase fact, typed. Each case's payload type and ``FactType`` are declared in the folder
/// of its domain area (catalogue, orders, payments, subscriptions, refunds, entitlements).
public enum Fact: Hashable, Sendable {
    case productDefined(ProductDefinition)
    case productChanged(ProductDefinition)
    case orderCreated(OrderCreated)
    case paymentLaunched(PaymentLaunched)
    case clientCallbackReceived(ClientCallbackReceived)
    case storeNotificationReceived(StoreNotificationReceived)
    case paymentVerified(PaymentVerified)
    case verificationFailed(VerificationFailed)
    case transactionBound(TransactionBound)
    case entitlementGranted(EntitlementGranted)
    case entitlementRevoked(EntitlementRevoked)
    case coinsSpent(CoinsSpent)
    case subscriptionRenewed(SubscriptionRenewed)
    case renewalFailed(RenewalFailed)
    case autoRenewChanged(AutoRenewChanged)
    case planChanged(PlanChanged)
    case subscriptionExpired(SubscriptionExpired)
    case subscriptionStateChanged(SubscriptionStateChanged)
    case storeRevoked(StoreRevoked)
    case refundRequested(RefundNotice)
    case refundDeclined(RefundNotice)
    case refunded(Refunded)
    case refundReversed(RefundNotice)
    case orderClosed(OrderClosed)
    case transactionTransferred(TransactionTransferred)
    case purchaseAcknowledged(PurchaseAcknowledged)
    case purchaseVoided(PurchaseVoided)
    case statementImported(StatementImported)
    case statementLine(StatementLine)
    case statementSignatures(StatementSignatures)

    /// The body with its type's declaration: the one place a case meets its ``FactType``.
    var declared: any DeclaredFact {
        switch self {
        case .productDefined(let b): return Declared(FactTypes.productDefined, b)
        case .productChanged(let b): return Declared(FactTypes.productChanged, b)
        case .orderCreated(let b): return Declared(FactTypes.orderCreated, b)
        case .paymentLaunched(let b): return Declared(FactTypes.paymentLaunched, b)
        case .clientCallbackReceived(let b): return Declared(FactTypes.clientCallbackReceived, b)
        case .storeNotificationReceived(let b): return Declared(FactTypes.storeNotificationReceived, b)
        case .paymentVerified(let b): return Declared(FactTypes.paymentVerified, b)
        case .verificationFailed(let b): return Declared(FactTypes.verificationFailed, b)
        case .transactionBound(let b): return Declared(FactTypes.transactionBound, b)
        case .entitlementGranted(let b): return Declared(FactTypes.entitlementGranted, b)
        case .entitlementRevoked(let b): return Declared(FactTypes.entitlementRevoked, b)
        case .coinsSpent(let b): return Declared(FactTypes.coinsSpent, b)
        case .subscriptionRenewed(let b): return Declared(FactTypes.subscriptionRenewed, b)
        case .renewalFailed(let b): return Declared(FactTypes.renewalFailed, b)
        case .autoRenewChanged(let b): return Declared(FactTypes.autoRenewChanged, b)
        case .planChanged(let b): return Declared(FactTypes.planChanged, b)
        case .subscriptionExpired(let b): return Declared(FactTypes.subscriptionExpired, b)
        case .subscriptionStateChanged(let b): return Declared(FactTypes.subscriptionStateChanged, b)
        case .storeRevoked(let b): return Declared(FactTypes.storeRevoked, b)
        case .refundRequested(let b): return Declared(FactTypes.refundRequested, b)
        case .refundDeclined(let b): return Declared(FactTypes.refundDeclined, b)
        case .refunded(let b): return Declared(FactTypes.refunded, b)
        case .refundReversed(let b): return Declared(FactTypes.refundReversed, b)
        case .orderClosed(let b): return Declared(FactTypes.orderClosed, b)
        case .transactionTransferred(let b): return Declared(FactTypes.transactionTransferred, b)
        case .purchaseAcknowledged(let b): return Declared(FactTypes.purchaseAcknowledged, b)
        case .purchaseVoided(let b): return Declared(FactTypes.purchaseVoided, b)
        case .statementImported(let b): return Declared(FactTypes.statementImported, b)
        case .statementLine(let b): return Declared(FactTypes.statementLine, b)
        case .statementSignatures(let b): return Declared(FactTypes.statementSignatures, b)
        }
    }

    public var typeName: String { declared.typeName }

    /// The payload in the current schema version of its type.
    public var payload: JSONValue { declared.payload }

    /// The stream this fact belongs in: one per order, store transaction, subscription, user,
    /// notification or product.
    public var stream: String { declared.stream }

    /// The natural business idempotency key, where one exists.
    public var idempotencyKey: String? { declared.idempotencyKey }

    /// One readable line: what happened, with the ids that matter.
    public var summary: String { declared.summary }

    /// A fact ready to append, in the current schema version.
    public func newEvent(
        occurredAt: Timestamp, eventId: UUID = .systemRandom(), metadata: EventMetadata = EventMetadata()
    ) -> NewEvent {
        let d = declared
        return NewEvent(
            eventId: eventId, stream: d.stream, type: d.typeName, schemaVersion: d.schemaVersion,
            payload: d.payload, metadata: metadata, occurredAt: occurredAt, idempotencyKey: d.idempotencyKey)
    }
}
