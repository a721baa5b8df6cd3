import Foundation
import LedgerCore

/// One purchase fact, typed.
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
    case refundRequested(RefundNotice)
    case refundDeclined(RefundNotice)
    case refunded(Refunded)
    case refundReversed(RefundNotice)
    case orderClosed(OrderClosed)

    public var typeName: String {
        switch self {
        case .productDefined: return "ProductDefined"
        case .productChanged: return "ProductChanged"
        case .orderCreated: return "OrderCreated"
        case .paymentLaunched: return "PaymentLaunched"
        case .clientCallbackReceived: return "ClientCallbackReceived"
        case .storeNotificationReceived: return "StoreNotificationReceived"
        case .paymentVerified: return "PaymentVerified"
        case .verificationFailed: return "VerificationFailed"
        case .transactionBound: return "TransactionBound"
        case .entitlementGranted: return "EntitlementGranted"
        case .entitlementRevoked: return "EntitlementRevoked"
        case .coinsSpent: return "CoinsSpent"
        case .subscriptionRenewed: return "SubscriptionRenewed"
        case .renewalFailed: return "RenewalFailed"
        case .autoRenewChanged: return "AutoRenewChanged"
        case .planChanged: return "PlanChanged"
        case .subscriptionExpired: return "SubscriptionExpired"
        case .refundRequested: return "RefundRequested"
        case .refundDeclined: return "RefundDeclined"
        case .refunded: return "Refunded"
        case .refundReversed: return "RefundReversed"
        case .orderClosed: return "OrderClosed"
        }
    }

    /// The payload in the current schema version of its type.
    public var payload: JSONValue {
        switch self {
        case .productDefined(let f), .productChanged(let f): return f.payload
        case .orderCreated(let f): return f.payload
        case .paymentLaunched(let f): return f.payload
        case .clientCallbackReceived(let f): return f.payload
        case .storeNotificationReceived(let f): return f.payload
        case .paymentVerified(let f): return f.payload
        case .verificationFailed(let f): return f.payload
        case .transactionBound(let f): return f.payload
        case .entitlementGranted(let f): return f.payload
        case .entitlementRevoked(let f): return f.payload
        case .coinsSpent(let f): return f.payload
        case .subscriptionRenewed(let f): return f.payload
        case .renewalFailed(let f): return f.payload
        case .autoRenewChanged(let f): return f.payload
        case .planChanged(let f): return f.payload
        case .subscriptionExpired(let f): return f.payload
        case .refundRequested(let f), .refundDeclined(let f), .refundReversed(let f): return f.payload
        case .refunded(let f): return f.payload
        case .orderClosed(let f): return f.payload
        }
    }

    /// The stream this fact belongs in: one per order, store transaction, subscription, user,
    /// notification or product.
    public var stream: String {
        switch self {
        case .productDefined(let f), .productChanged(let f): return "product:\(f.channel.rawValue):\(f.storeProductId)"
        case .orderCreated(let f): return "order:\(f.orderId)"
        case .paymentLaunched(let f): return "order:\(f.orderId)"
        case .orderClosed(let f): return "order:\(f.orderId)"
        case .clientCallbackReceived(let f): return "client:\(f.channel.rawValue):\(f.userId)"
        case .storeNotificationReceived(let f): return "\(f.channel.rawValue):notification:\(f.notificationId)"
        case .paymentVerified(let f): return "\(f.channel.rawValue):tx:\(f.transactionId)"
        case .verificationFailed(let f): return "\(f.channel.rawValue):tx:\(f.transactionId)"
        case .transactionBound(let f): return "\(f.channel.rawValue):tx:\(f.transactionId)"
        case .refundRequested(let f), .refundDeclined(let f), .refundReversed(let f): return "\(f.channel.rawValue):tx:\(f.transactionId)"
        case .refunded(let f): return "\(f.channel.rawValue):tx:\(f.transactionId)"
        case .entitlementGranted(let f): return "user:\(f.userId)"
        case .entitlementRevoked(let f): return "user:\(f.userId)"
        case .coinsSpent(let f): return "user:\(f.userId)"
        case .subscriptionRenewed(let f): return "\(f.channel.rawValue):sub:\(f.originalTransactionId)"
        case .renewalFailed(let f): return "\(f.channel.rawValue):sub:\(f.originalTransactionId)"
        case .autoRenewChanged(let f): return "\(f.channel.rawValue):sub:\(f.originalTransactionId)"
        case .planChanged(let f): return "\(f.channel.rawValue):sub:\(f.originalTransactionId)"
        case .subscriptionExpired(let f): return "\(f.channel.rawValue):sub:\(f.originalTransactionId)"
        }
    }

    /// The natural business idempotency key of domain.md section 3, where one exists.
    public var idempotencyKey: String? {
        switch self {
        case .productDefined(let f), .productChanged(let f): return "product:\(f.channel.rawValue):\(f.storeProductId):\(f.version)"
        case .orderCreated(let f): return "order:\(f.orderId):created"
        case .paymentLaunched(let f): return "order:\(f.orderId):launched:\(f.attempt)"
        case .orderClosed(let f): return "order:\(f.orderId):closed"
        case .clientCallbackReceived(let f): return f.reportId.map { "client:\(f.channel.rawValue):report:\($0)" }
        case .storeNotificationReceived(let f): return "\(f.channel.rawValue):notification:\(f.notificationId)"
        case .paymentVerified(let f): return "\(f.channel.rawValue):tx:\(f.transactionId):verified"
        case .verificationFailed(let f): return "\(f.channel.rawValue):tx:\(f.transactionId):failed:\(f.attempt)"
        case .transactionBound(let f): return "\(f.channel.rawValue):tx:\(f.transactionId):bound"
        case .entitlementGranted(let f): return "grant:\(f.grantId)"
        case .entitlementRevoked(let f): return "revoke:\(f.channel?.rawValue ?? "any"):\(f.transactionId):\(f.reason.raw)"
        case .coinsSpent(let f): return "spend:\(f.spendId)"
        case .subscriptionRenewed(let f): return "\(f.channel.rawValue):tx:\(f.transactionId):renewed"
        case .renewalFailed(let f): return "\(f.channel.rawValue):notification:\(f.notificationId):renewal-failed"
        case .autoRenewChanged(let f): return "\(f.channel.rawValue):notification:\(f.notificationId):auto-renew"
        case .planChanged(let f): return "\(f.channel.rawValue):notification:\(f.notificationId):plan"
        case .subscriptionExpired(let f): return "\(f.channel.rawValue):notification:\(f.notificationId):expired"
        case .refundRequested(let f): return f.notificationId.map { "\(f.channel.rawValue):notification:\($0):refund-requested" }
        case .refundDeclined(let f): return f.notificationId.map { "\(f.channel.rawValue):notification:\($0):refund-declined" }
        case .refundReversed(let f): return f.notificationId.map { "\(f.channel.rawValue):notification:\($0):refund-reversed" }
        case .refunded(let f): return "\(f.channel.rawValue):tx:\(f.transactionId):refund:\(f.refundId)"
        }
    }

    /// A fact ready to append, in the current schema version.
    public func newEvent(occurredAt: Timestamp, eventId: UUID = UUID(), metadata: EventMetadata = EventMetadata()) -> NewEvent {
        NewEvent(eventId: eventId, stream: stream, type: typeName, schemaVersion: FactCatalogue.currentVersions[typeName] ?? 1,
                 payload: payload, metadata: metadata, occurredAt: occurredAt, idempotencyKey: idempotencyKey)
    }
}

/// The catalogue: decoding stored facts of every known type and schema version.
public enum FactCatalogue {
    /// The schema version new facts are written in. Older versions are upcast on read.
    public static let currentVersions: [String: Int32] = {
        var v: [String: Int32] = [:]
        for t in FactCatalog.knownTypes { v[t] = 1 }
        v["PaymentVerified"] = 2
        return v
    }()

    /// Every (type, version) that can be read.
    public static var readableVersions: [(type: String, version: Int32)] {
        currentVersions.keys.sorted().flatMap { t in (1...currentVersions[t]!).map { (type: t, version: $0) } }
    }

    /// Decodes a payload, upcasting older versions. Errors name the field.
    public static func decode(type: String, schemaVersion: Int32, payload: JSONValue) throws(FactError) -> Fact {
        guard let current = currentVersions[type] else {
            throw FactError(field: "type", message: "\"\(type)\" is not a purchase fact")
        }
        guard schemaVersion >= 1, schemaVersion <= current else {
            throw FactError(field: "schemaVersion", message: "\(type) has schema versions 1...\(current) (got \(schemaVersion))")
        }
        var r = try PayloadReader(payload)
        let fact: Fact
        switch type {
        case "ProductDefined": fact = .productDefined(try ProductDefinition(&r))
        case "ProductChanged": fact = .productChanged(try ProductDefinition(&r))
        case "OrderCreated": fact = .orderCreated(try OrderCreated(&r))
        case "PaymentLaunched": fact = .paymentLaunched(try PaymentLaunched(&r))
        case "ClientCallbackReceived": fact = .clientCallbackReceived(try ClientCallbackReceived(&r))
        case "StoreNotificationReceived": fact = .storeNotificationReceived(try StoreNotificationReceived(&r))
        case "PaymentVerified": fact = .paymentVerified(try PaymentVerified(&r, version: schemaVersion))
        case "VerificationFailed": fact = .verificationFailed(try VerificationFailed(&r))
        case "TransactionBound": fact = .transactionBound(try TransactionBound(&r))
        case "EntitlementGranted": fact = .entitlementGranted(try EntitlementGranted(&r))
        case "EntitlementRevoked": fact = .entitlementRevoked(try EntitlementRevoked(&r))
        case "CoinsSpent": fact = .coinsSpent(try CoinsSpent(&r))
        case "SubscriptionRenewed": fact = .subscriptionRenewed(try SubscriptionRenewed(&r))
        case "RenewalFailed": fact = .renewalFailed(try RenewalFailed(&r))
        case "AutoRenewChanged": fact = .autoRenewChanged(try AutoRenewChanged(&r))
        case "PlanChanged": fact = .planChanged(try PlanChanged(&r))
        case "SubscriptionExpired": fact = .subscriptionExpired(try SubscriptionExpired(&r))
        case "RefundRequested": fact = .refundRequested(try RefundNotice(&r))
        case "RefundDeclined": fact = .refundDeclined(try RefundNotice(&r))
        case "Refunded": fact = .refunded(try Refunded(&r))
        case "RefundReversed": fact = .refundReversed(try RefundNotice(&r))
        case "OrderClosed": fact = .orderClosed(try OrderClosed(&r))
        default: throw FactError(field: "type", message: "\"\(type)\" is not a purchase fact")
        }
        try r.finish()
        return fact
    }

    /// Decodes a stored event's payload text.
    public static func decode(_ event: RecordedEvent) throws(FactError) -> Fact {
        let value: JSONValue
        do { value = try JSONValue.parse(event.payloadText) } catch {
            throw FactError(field: "payload", message: "is not JSON: \(error)")
        }
        return try decode(type: event.type, schemaVersion: event.schemaVersion, payload: value)
    }

    /// Event validation that also checks each known fact's payload against its schema, so a bad
    /// fact is refused at append with its field named.
    public static func validation(maximumPayloadBytes: Int = EventValidation.defaultMaximumPayloadBytes,
                                  allowUnknownTypes: Bool = false) -> EventValidation {
        var v = EventValidation(maximumPayloadBytes: maximumPayloadBytes, allowUnknownTypes: allowUnknownTypes)
        v.payloadCheck = { event in
            guard currentVersions[event.type] != nil else { return nil }
            do throws(FactError) {
                _ = try decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.payload)
                return nil
            } catch {
                return EventInputError(field: error.field.isEmpty ? "payload" : "payload." + error.field,
                                       eventId: event.eventId.lowercased, message: error.message)
            }
        }
        return v
    }
}
