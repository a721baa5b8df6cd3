import Foundation
import Testing
@testable import LedgerDomain
import LedgerCore

private func decode(_ type: String, _ version: Int32 = 1, _ payload: String) throws -> Fact {
    try FactCatalogue.decode(type: type, schemaVersion: version, payload: try JSONValue.parse(payload))
}

/// The FactError a payload is refused with, or nil when it decodes.
private func refusal(_ type: String, _ version: Int32 = 1, _ payload: String) throws -> FactError? {
    let value = try JSONValue.parse(payload)
    do throws(FactError) {
        _ = try FactCatalogue.decode(type: type, schemaVersion: version, payload: value)
        return nil
    } catch {
        return error
    }
}

private func v1Price(_ milli: Int64, _ currency: String) -> String {
    """
    {"channel":"appstore","transactionId":"1000000987654321","productId":"com.example.coins100","quantity":1,
     "purchaseDate":"2024-11-02T10:00:00Z","environment":"Production","priceMilliunits":\(milli),"currency":"\(currency)"}
    """
}

private func v2(price: String = #"{"amount":600,"currency":"CNY"}"#, extra: String = "") -> String {
    """
    {"channel":"appstore","transactionId":"2000000123456789","productId":"com.example.coins100","quantity":1,
     "purchaseDate":"2026-03-31T08:15:40Z","environment":"Production","ownership":"PURCHASED","price":\(price)\(extra)}
    """
}

private func currency(_ code: String) throws -> Currency { try #require(Currency(code)) }

@Suite("FactCatalogue")
struct FactCatalogueTests {
    @Test("round trip: decode, write the payload, decode again gives the same fact", arguments: FactVersion.all)
    func roundTrip(_ fv: FactVersion) throws {
        for sample in try Fixtures.samples(fv) {
            let fact = try FactCatalogue.decode(type: fv.type, schemaVersion: fv.version, payload: sample)
            let current = try #require(FactCatalogue.currentVersions[fv.type])
            let again = try FactCatalogue.decode(type: fact.typeName, schemaVersion: current, payload: fact.payload)
            #expect(again == fact)
            #expect(again.payload == fact.payload)
            #expect(again.stream == fact.stream)
            #expect(again.idempotencyKey == fact.idempotencyKey)
        }
    }

    @Test(
        "catalogue: 30 types; PaymentVerified at version 5 (Google's purchase token of a one-time purchase), grants, revocations and StoreNotificationReceived at 3 (the app), 16 others at version 2 (the app, the rules of real store traffic, Google's void reasons on statement lines), the rest at 1"
    )
    func catalogue() {
        #expect(Set(FactCatalogue.currentVersions.keys) == FactCatalogue.typeNames)
        #expect(FactCatalogue.currentVersions["PaymentVerified"] == 5)
        #expect(FactCatalogue.currentVersions["StoreNotificationReceived"] == 3)
        #expect(
            FactCatalogue.currentVersions["EntitlementGranted"] == 3
                && FactCatalogue.currentVersions["EntitlementRevoked"] == 3)
        #expect(
            FactCatalogue.currentVersions["OrderCreated"] == 2
                && FactCatalogue.currentVersions["PurchaseAcknowledged"] == 2)
        #expect(FactCatalogue.currentVersions.filter { $0.value != 1 }.count == 19)
        #expect(FactCatalogue.readableVersions.count == 55)
    }

    @Test("catalogue type names are all valid type names")
    func catalogueTypeNames() {
        #expect(FactCatalogue.typeNames.count == 30)
        for type in FactCatalogue.typeNames { #expect(EventValidation.isValidTypeName(type), "\(type)") }
    }

    @Test("every catalogued fact type is accepted", arguments: FactCatalogue.typeNames.sorted())
    func knownTypes(type: String) throws {
        let line = #"{"stream":"s","type":"\#(type)","payload":{},"occurredAt":"2026-03-31T08:15:00Z"}"#
        var validation = FactCatalogue.validation()
        validation.payloadCheck = nil
        #expect(try EventLineDecoder(validation: validation).decode(line, lineNumber: 1).type == type)
    }

    @Test("unknown type and unreadable versions are refused")
    func unknownTypeOrVersion() throws {
        #expect(try refusal("PaymentVerifed", 1, "{}")?.field == "type")
        #expect(try refusal("PaymentVerified", 6, v2())?.field == "schemaVersion")
        #expect(try refusal("OrderClosed", 0, #"{"orderId":"o","reason":"timeout"}"#)?.field == "schemaVersion")
        #expect(try refusal("OrderClosed", 1, "[]")?.field == "")
    }

    // MARK: PaymentVerified version 1 upcast

    @Test("v1 6000 CNY milliunits upcast to 600 fen, written as the current version")
    func upcastCNY() throws {
        let fact = try decode("PaymentVerified", 1, v1Price(6000, "CNY"))
        guard case .paymentVerified(let pv) = fact else {
            Issue.record("not PaymentVerified")
            return
        }
        #expect(pv.price == Money(minorUnits: 600, currency: try currency("CNY")))
        #expect(pv.ownership == .purchased)
        #expect(pv.price.description == "6.00 CNY")
        #expect(fact.payload["price"] == .makeObject([("amount", .int(600)), ("currency", .string("CNY"))]))
        #expect(fact.payload["priceMilliunits"] == nil)
        #expect(fact.newEvent(occurredAt: Timestamp("2026-03-31T08:15:41Z")!).schemaVersion == 5)
        #expect(try decode("PaymentVerified", 2, fact.payload.canonicalText) == fact)
        #expect(try decode("PaymentVerified", 3, fact.payload.canonicalText) == fact)
        #expect(try decode("PaymentVerified", 4, fact.payload.canonicalText) == fact)
        #expect(try decode("PaymentVerified", 5, fact.payload.canonicalText) == fact)
    }

    @Test("v1 1234 JPY milliunits is not a whole yen: refused naming priceMilliunits")
    func upcastJPYInexact() throws {
        let error = try #require(try refusal("PaymentVerified", 1, v1Price(1234, "JPY")))
        #expect(error.field == "priceMilliunits")
        #expect(error.message.contains("JPY"))
        guard case .paymentVerified(let pv) = try decode("PaymentVerified", 1, v1Price(800_000, "JPY")) else {
            Issue.record()
            return
        }
        #expect(pv.price.minorUnits == 800)
    }

    @Test("v1 990 USD milliunits is 99 cents; KWD keeps 3 decimals")
    func upcastUSDAndKWD() throws {
        guard case .paymentVerified(let usd) = try decode("PaymentVerified", 1, v1Price(990, "USD")) else {
            Issue.record()
            return
        }
        #expect(usd.price == Money(minorUnits: 99, currency: try currency("USD")))
        #expect(usd.price.description == "0.99 USD")
        guard case .paymentVerified(let kwd) = try decode("PaymentVerified", 1, v1Price(1234, "KWD")) else {
            Issue.record()
            return
        }
        #expect(kwd.price == Money(minorUnits: 1234, currency: try currency("KWD")))
        #expect(kwd.price.description == "1.234 KWD")
        #expect(try refusal("PaymentVerified", 1, v1Price(995, "USD"))?.field == "priceMilliunits")
    }

    @Test("v1 with a family-shared ownership keeps it; v2 requires ownership")
    func ownership() throws {
        let text = v1Price(990, "USD").replacingOccurrences(
            of: #""environment""#, with: #""ownership":"FAMILY_SHARED","environment""#)
        guard case .paymentVerified(let pv) = try decode("PaymentVerified", 1, text) else {
            Issue.record()
            return
        }
        #expect(pv.ownership == .familyShared)
        let noOwnership = v2().replacingOccurrences(of: #""ownership":"PURCHASED","#, with: "")
        #expect(try refusal("PaymentVerified", 2, noOwnership)?.field == "ownership")
    }

    // MARK: Money

    @Test("Money(milliunits:) converts exactly or not at all")
    func milliunits() throws {
        let cny = try currency("CNY"), jpy = try currency("JPY"), kwd = try currency("KWD"), clf = try currency("CLF")
        #expect(Money(milliunits: 6000, currency: cny)?.minorUnits == 600)
        #expect(Money(milliunits: 6001, currency: cny) == nil)
        #expect(Money(milliunits: 0, currency: cny)?.minorUnits == 0)
        #expect(Money(milliunits: 800_000, currency: jpy)?.minorUnits == 800)
        #expect(Money(milliunits: 1234, currency: jpy) == nil)
        #expect(Money(milliunits: 1234, currency: kwd)?.minorUnits == 1234)
        #expect(Money(milliunits: 1234, currency: clf)?.minorUnits == 12340)
        #expect(Money(milliunits: .max, currency: clf) == nil)
        #expect(Money(minorUnits: 12340, currency: clf).milliunits == 1234)
        #expect(Money(minorUnits: 12345, currency: clf).milliunits == nil)
        #expect(Money(minorUnits: 99, currency: try currency("USD")).milliunits == 990)
        #expect(Money(minorUnits: .max, currency: jpy).milliunits == nil)
    }

    @Test("Money.description is exact decimal text")
    func moneyDescription() throws {
        #expect(Money(minorUnits: 1800, currency: try currency("CNY")).description == "18.00 CNY")
        #expect(Money(minorUnits: 5, currency: try currency("CNY")).description == "0.05 CNY")
        #expect(Money(minorUnits: 600, currency: try currency("JPY")).description == "600 JPY")
        #expect(Money(minorUnits: -1250, currency: try currency("KWD")).description == "-1.250 KWD")
        #expect(Money(minorUnits: -5, currency: try currency("USD")).description == "-0.05 USD")
        #expect(Money(minorUnits: 1, currency: try currency("CLF")).description == "0.0001 CLF")
        #expect(Money(minorUnits: .min, currency: try currency("USD")).description == "-92233720368547758.08 USD")
    }

    // MARK: Refusals and open enums

    @Test("an unknown ownership value is kept raw and written back unchanged")
    func openEnumKeptRaw() throws {
        let text = v2().replacingOccurrences(of: "PURCHASED", with: "FUTURE_TYPE")
        let fact = try decode("PaymentVerified", 2, text)
        guard case .paymentVerified(let pv) = fact else {
            Issue.record()
            return
        }
        #expect(pv.ownership.raw == "FUTURE_TYPE")
        #expect(pv.ownership != .purchased && pv.ownership != .familyShared)
        #expect(fact.payload["ownership"] == .string("FUTURE_TYPE"))
        #expect(try decode("PaymentVerified", 2, fact.payload.canonicalText) == fact)
        let closed = try decode("OrderClosed", 1, #"{"orderId":"o1","reason":"merchant-closed-2031"}"#)
        #expect(closed.payload["reason"] == .string("merchant-closed-2031"))
    }

    @Test("closed enums refuse unknown values")
    func closedEnums() throws {
        #expect(
            try refusal("PaymentLaunched", 1, #"{"orderId":"o","channel":"alipay","attempt":1}"#)?.field == "channel")
        #expect(
            try refusal(
                "PlanChanged", 1,
                #"{"channel":"appstore","originalTransactionId":"o","notificationId":"n","toProductId":"p","effective":"later"}"#
            )?.field == "effective")
        #expect(
            try refusal(
                "TransactionBound", 1, #"{"channel":"appstore","transactionId":"t","userId":"u","method":"guess"}"#)?
                .field == "method")
    }

    @Test("an unknown currency is refused naming price.currency")
    func unknownCurrency() throws {
        let error = try #require(try refusal("PaymentVerified", 2, v2(price: #"{"amount":600,"currency":"XYZ"}"#)))
        #expect(error.field == "price.currency")
        #expect(error.description.hasPrefix("price.currency: "))
        #expect(
            try refusal(
                "OrderCreated", 1,
                #"{"orderId":"o","userId":"u","channel":"wechat","productId":"p","amount":1,"currency":"cny"}"#)?.field
                == "currency")
    }

    @Test("a negative price is refused")
    func negativePrice() throws {
        #expect(
            try refusal("PaymentVerified", 2, v2(price: #"{"amount":-600,"currency":"CNY"}"#))?.field == "price.amount")
        #expect(try refusal("PaymentVerified", 1, v1Price(-6000, "CNY"))?.field == "priceMilliunits")
        #expect(
            try refusal(
                "OrderCreated", 1,
                #"{"orderId":"o","userId":"u","channel":"wechat","productId":"p","amount":-1,"currency":"CNY"}"#)?.field
                == "amount")
        #expect(
            try refusal("PaymentVerified", 2, v2(price: #"{"amount":600,"currency":"CNY","storeMilliunits":-6000}"#))?
                .field == "price.storeMilliunits")
    }

    @Test(
        "a malformed appAccountToken is refused",
        arguments: [
            "not-a-uuid", "7d1c1e8a3f9b4a519a552b8f0c6b8e11", " d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11",
            "0x1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11",
            "7d1c1e8a-+f9b-4a51-9a55-2b8f0c6b8e11", "7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e1z",
        ])
    func malformedUUID(_ token: String) throws {
        let error = try #require(try refusal("PaymentVerified", 2, v2(extra: #","appAccountToken":"\#(token)""#)))
        #expect(error.field == "appAccountToken")
    }

    @Test("a well-formed appAccountToken is read in either case and written lowercase")
    func uuidCase() throws {
        let fact = try decode(
            "PaymentVerified", 2, v2(extra: #","appAccountToken":"7D1C1E8A-3F9B-4A51-9A55-2B8F0C6B8E11""#))
        #expect(fact.payload["appAccountToken"] == .string("7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11"))
    }

    @Test("timestamps must be RFC 3339 proper, not PostgreSQL's text form")
    func timestamps() throws {
        for bad in [
            "2026-03-31 08:15:40+00", "2026-03-31T08:15:40+08", "2026-03-31T08:15:40", "2026-03-31T08:15:40.1234567Z",
        ] {
            let text = v2().replacingOccurrences(of: "2026-03-31T08:15:40Z", with: bad)
            #expect(try refusal("PaymentVerified", 2, text)?.field == "purchaseDate", "\(bad)")
        }
        let zoned = v2().replacingOccurrences(of: "2026-03-31T08:15:40Z", with: "2026-03-31t16:15:40.5+08:00")
        guard case .paymentVerified(let pv) = try decode("PaymentVerified", 2, zoned) else {
            Issue.record()
            return
        }
        #expect(pv.purchaseDate.iso8601 == "2026-03-31T08:15:40.500Z")
    }

    @Test("string lengths count Unicode scalars, as JSON Schema does")
    func stringLength() throws {
        let ok = String(repeating: "é", count: 200)
        #expect(try refusal("CoinsSpent", 1, #"{"spendId":"s","userId":"u","amount":1,"item":"\#(ok)"}"#) == nil)
        let combining = String(repeating: "e\u{301}", count: 101)  // 101 Characters, 202 scalars
        #expect(
            try refusal("CoinsSpent", 1, #"{"spendId":"s","userId":"u","amount":1,"item":"\#(combining)"}"#)?.field
                == "item")
    }

    @Test("explicit null reads as absent for optional fields and as missing for required ones")
    func nulls() throws {
        let fact = try decode("CoinsSpent", 1, #"{"spendId":"s","userId":"u","amount":1,"item":null}"#)
        #expect(fact.payload["item"] == nil)
        let error = try #require(try refusal("CoinsSpent", 1, #"{"spendId":"s","userId":null,"amount":1}"#))
        #expect(error.field == "userId")
        #expect(error.message == "is required")
    }

    @Test("unknown fields are refused, nested ones with their path")
    func unknownFields() throws {
        #expect(try refusal("PaymentVerified", 2, v2(extra: #","priceMilliunits":6000"#))?.field == "priceMilliunits")
        #expect(
            try refusal("PaymentVerified", 2, v2(price: #"{"amount":600,"currency":"CNY","amountMinor":600}"#))?.field
                == "price.amountMinor")
        #expect(
            try refusal(
                "EntitlementGranted", 1,
                #"{"grantId":"g","userId":"u","transactionId":"t","entitlement":{"kind":"coins","amount":5,"days":3},"quantity":1}"#
            )?.field == "entitlement.days")
        #expect(
            try refusal(
                "EntitlementGranted", 1,
                #"{"grantId":"g","userId":"u","transactionId":"t","entitlement":{"kind":"gems","amount":5},"quantity":1}"#
            )?.field == "entitlement.kind")
        // The message names every field the object may have: the table's, and the kind read before it.
        let nested = try #require(
            try refusal(
                "EntitlementGranted", 1,
                #"{"grantId":"g","userId":"u","transactionId":"t","entitlement":{"kind":"coins","amount":5,"days":3},"quantity":1}"#
            ))
        #expect(nested.message == "is not a field of this fact (known: amount, kind)")
        let top = try #require(try refusal("CoinsSpent", 1, #"{"spendId":"s","userId":"u","amount":1,"colour":"red"}"#))
        #expect(
            top.field == "colour" && top.message == "is not a field of this fact (known: amount, item, spendId, userId)"
        )
    }

    // MARK: Append-time validation

    @Test("FactCatalogue.validation() refuses a bad fact naming payload.<field>")
    func validation() throws {
        let occurredAt = try #require(Timestamp("2026-03-31T08:15:41Z"))
        let validation = FactCatalogue.validation()
        let good = try decode("PaymentVerified", 2, v2()).newEvent(occurredAt: occurredAt)
        try validation.validate(good)

        func problem(_ payload: String, type: String = "PaymentVerified", version: Int32 = 2) throws -> EventInputError?
        {
            let event = NewEvent(
                stream: "appstore:tx:2000000123456789", type: type, schemaVersion: version,
                payload: try JSONValue.parse(payload), occurredAt: occurredAt)
            do throws(EventInputError) {
                try validation.validate(event)
                return nil
            } catch {
                return error
            }
        }
        let currency = try #require(try problem(v2(price: #"{"amount":600,"currency":"XYZ"}"#)))
        #expect(currency.field == "payload.price.currency")
        #expect(currency.eventId != nil)
        #expect(
            try problem(v2().replacingOccurrences(of: #""quantity":1"#, with: #""quantity":0"#))?.field
                == "payload.quantity")
        #expect(try problem(v1Price(6000, "CNY"), version: 1) == nil)
        #expect(try problem(v1Price(1234, "JPY"), version: 1)?.field == "payload.priceMilliunits")
        #expect(try problem(v2(), version: 6)?.field == "payload.schemaVersion")
        // Unknown types are left to allowUnknownTypes, not to the payload check.
        var open = FactCatalogue.validation(allowUnknownTypes: true)
        #expect(open.allowUnknownTypes)
        let unknown = NewEvent(
            stream: "x:1", type: "SomethingNew", payload: .makeObject([("anything", .int(1))]), occurredAt: occurredAt)
        try open.validate(unknown)
        open.allowUnknownTypes = false
        #expect(throws: EventInputError.self) { try open.validate(unknown) }
    }
}

@Suite("schema/examples/purchase-facts.jsonl")
struct ExampleFactsTests {
    static let file = Fixtures.packageRoot.appendingPathComponent("schema/examples/purchase-facts.jsonl")

    @Test("every line is a valid fact in the current catalogue, on its own stream and key")
    func everyLineDecodes() throws {
        let lines = try String(contentsOf: Self.file, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let decoder = EventLineDecoder(validation: FactCatalogue.validation())
        let v = try Fixtures.validator()
        var events: [NewEvent] = []
        for (i, line) in lines.enumerated() where !line.isEmpty {
            let event = try decoder.decode(String(line), lineNumber: i + 1)
            let fact = try FactCatalogue.decode(
                type: event.type, schemaVersion: event.schemaVersion, payload: event.payload)
            #expect(event.schemaVersion == FactCatalogue.currentVersions[event.type], "line \(i + 1)")
            #expect(event.stream == fact.stream, "line \(i + 1)")
            #expect(event.idempotencyKey == fact.idempotencyKey, "line \(i + 1)")
            let failures = try v.validate(event.payload, file: "\(event.type).v\(event.schemaVersion).schema.json")
            #expect(failures.isEmpty, "line \(i + 1): \(failures)")
            events.append(event)
        }
        // The story: an App Store coins purchase bound by appAccountToken, a WeChat VIP order, a coin spend.
        #expect(
            events.map { $0.eventId.uuidString.lowercased().suffix(2) } == [
                "01", "02", "03", "04", "05", "06", "07", "08", "09", "0a",
            ])
        #expect(
            events.map(\.type) == [
                "ProductDefined", "OrderCreated", "PaymentLaunched", "PaymentVerified", "TransactionBound",
                "EntitlementGranted",
                "OrderCreated", "StoreNotificationReceived", "PaymentVerified", "CoinsSpent",
            ])
        #expect(events[3].payload["appAccountToken"] == events[1].payload["accountToken"])
    }

    /// Every field of every version is read into its property at the property's offset. A key
    /// path through a protocol's requirement (`\.app` written in a protocol extension) has none,
    /// and setting through it took a sixth of the decoding thread's time in a replay.
    @Test func everyFieldIsSetAtItsOffset() {
        for t in FactCatalogue.types {
            #expect(t.setThroughKeyPaths.isEmpty, "\(t.name): \(t.setThroughKeyPaths)")
        }
        #expect(FactCatalogue.types.count > 20)
    }

}
