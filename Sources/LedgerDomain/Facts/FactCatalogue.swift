import LedgerCore

/// The catalogue: every fact type, decoding stored facts of every known type and schema version.
public enum FactCatalogue {
    /// Every fact type, by the declaration in its area's folder.
    public static let types: [AnyFactType] = [
        AnyFactType(FactTypes.productDefined), AnyFactType(FactTypes.productChanged),
        AnyFactType(FactTypes.orderCreated), AnyFactType(FactTypes.paymentLaunched), AnyFactType(FactTypes.orderClosed),
        AnyFactType(FactTypes.clientCallbackReceived), AnyFactType(FactTypes.storeNotificationReceived),
        AnyFactType(FactTypes.paymentVerified), AnyFactType(FactTypes.verificationFailed),
        AnyFactType(FactTypes.transactionBound),
        AnyFactType(FactTypes.transactionTransferred), AnyFactType(FactTypes.purchaseAcknowledged),
        AnyFactType(FactTypes.entitlementGranted), AnyFactType(FactTypes.coinsSpent),
        AnyFactType(FactTypes.subscriptionRenewed), AnyFactType(FactTypes.renewalFailed),
        AnyFactType(FactTypes.autoRenewChanged),
        AnyFactType(FactTypes.planChanged), AnyFactType(FactTypes.subscriptionExpired),
        AnyFactType(FactTypes.subscriptionStateChanged), AnyFactType(FactTypes.storeRevoked),
        AnyFactType(FactTypes.refundRequested), AnyFactType(FactTypes.refundDeclined), AnyFactType(FactTypes.refunded),
        AnyFactType(FactTypes.refundReversed), AnyFactType(FactTypes.entitlementRevoked),
        AnyFactType(FactTypes.purchaseVoided),
        AnyFactType(FactTypes.statementImported), AnyFactType(FactTypes.statementLine),
        AnyFactType(FactTypes.statementSignatures),
    ]

    static let byName: [String: AnyFactType] = Dictionary(uniqueKeysWithValues: types.map { ($0.name, $0) })

    /// The names of every fact type: the event log refuses others unless told to accept them, so a
    /// typo (`PaymentVerifed`) never becomes a fact no projection reads.
    public static let typeNames: Set<String> = Set(types.map(\.name))

    /// The schema version new facts are written in. Older versions are upcast on read.
    public static let currentVersions: [String: Int32] = byName.mapValues(\.version)

    /// Every (type, version) that can be read.
    public static var readableVersions: [(type: String, version: Int32)] {
        currentVersions.keys.sorted().flatMap { t in (1...currentVersions[t]!).map { (type: t, version: $0) } }
    }

    /// Decodes a payload, upcasting older versions. Errors name the field.
    public static func decode(type: String, schemaVersion: Int32, payload: JSONValue) throws(FactError) -> Fact {
        let t = try declaration(type: type, schemaVersion: schemaVersion)
        var r = try PayloadReader(payload)
        return try t.decode(&r, schemaVersion)
    }

    /// Decodes a payload's JSON text (`range` of `json`, all of it when nil) straight from its bytes;
    /// the strings many facts repeat are shared through `shared`, when given.
    public static func decode(
        type: String, schemaVersion: Int32, json: [UInt8], range: Range<Int>? = nil,
        shared: SharedStrings? = nil
    ) throws(FactError) -> Fact {
        // Only the decoder: a copy of the whole declaration retained and released each of its
        // references per fact.
        guard let decoder = decoders[type], schemaVersion >= 1, schemaVersion <= decoder.version else {
            _ = try declaration(type: type, schemaVersion: schemaVersion)  // throws the error that names the problem
            preconditionFailure("a declaration without a decoder")
        }
        var r = try PayloadReader(json: json, range: range, shared: shared)
        return try decoder.decode(&r, schemaVersion)
    }

    /// Each type's decoder and newest version, by name.
    private static let decoders:
        [String: (version: Int32, decode: @Sendable (inout PayloadReader, Int32) throws(FactError) -> Fact)] =
            byName.mapValues { (version: $0.version, decode: $0.decode) }

    static func declaration(type: String, schemaVersion: Int32) throws(FactError) -> AnyFactType {
        guard let t = byName[type] else {
            throw FactError(field: "type", message: "\"\(type)\" is not a purchase fact")
        }
        guard schemaVersion >= 1, schemaVersion <= t.version else {
            throw FactError(
                field: "schemaVersion", message: "\(type) has schema versions 1...\(t.version) (got \(schemaVersion))")
        }
        return t
    }

    /// Decodes a stored event's payload text.
    public static func decode(_ event: RecordedEvent) throws(FactError) -> Fact {
        try decode(type: event.type, schemaVersion: event.schemaVersion, json: Array(event.payloadText.utf8))
    }

    /// Event validation that knows the fact types and checks each known fact's payload against its
    /// schema, so a bad fact is refused at append with its field named.
    public static func validation(
        maximumPayloadBytes: Int = EventValidation.defaultMaximumPayloadBytes,
        allowUnknownTypes: Bool = false
    ) -> EventValidation {
        var v = EventValidation(
            maximumPayloadBytes: maximumPayloadBytes, knownTypes: typeNames, allowUnknownTypes: allowUnknownTypes)
        v.payloadCheck = { event in
            guard byName[event.type] != nil else { return nil }
            do throws(FactError) {
                _ = try decode(type: event.type, schemaVersion: event.schemaVersion, payload: event.payload)
                return nil
            } catch {
                return EventInputError(
                    field: error.field.isEmpty ? "payload" : "payload." + error.field,
                    eventId: event.eventId.lowercased, message: error.message)
            }
        }
        return v
    }
}
