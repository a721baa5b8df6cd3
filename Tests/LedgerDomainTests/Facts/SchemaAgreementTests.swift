import Foundation
import Testing
@testable import LedgerDomain
import LedgerCore

// The published JSON Schemas (schema/facts) and the Swift readers (FactCatalogue.decode) must agree:
// every valid sample is accepted by both, and every mutated variant of it is judged the same way by
// both, the Swift error naming the mutated field. Cross-field rules JSON Schema cannot express are
// listed explicitly at the end.

/// A fact type and schema version, as `FactCatalogue.readableVersions` lists them.
struct FactVersion: Sendable, Hashable, CustomTestStringConvertible {
    var type: String
    var version: Int32
    var name: String { "\(type).v\(version)" }
    var schemaFile: String { "\(name).schema.json" }
    var samplesFile: String { "\(name).valid.json" }
    var testDescription: String { name }
    var isCurrent: Bool { FactCatalogue.currentVersions[type] == version }
    var current: FactVersion { FactVersion(type: type, version: FactCatalogue.currentVersions[type] ?? version) }

    static var all: [FactVersion] {
        FactCatalogue.readableVersions.map { FactVersion(type: $0.type, version: $0.version) }
    }

    func decode(_ payload: JSONValue) -> Result<Fact, FactError> {
        do throws(FactError) {
            return .success(try FactCatalogue.decode(type: type, schemaVersion: version, payload: payload))
        } catch {
            return .failure(error)
        }
    }
}

struct FixtureError: Error, CustomStringConvertible { var description: String }

/// The checked-in schema folder, found from this file: four levels up is the package root.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let factsFolder = packageRoot.appendingPathComponent("schema").appendingPathComponent("facts")
    static let samplesFolder = factsFolder.appendingPathComponent("samples")
    static let commonFile = "common.schema.json"

    static let loadedValidator: Result<MiniSchemaValidator, any Error> = Result {
        try MiniSchemaValidator(folder: factsFolder)
    }
    static func validator() throws -> MiniSchemaValidator { try loadedValidator.get() }

    static func parse(_ url: URL) throws -> JSONValue {
        try JSONValue.parse(String(contentsOf: url, encoding: .utf8))
    }

    static func samples(_ fv: FactVersion) throws -> [JSONValue] {
        guard case .array(let items) = try parse(samplesFolder.appendingPathComponent(fv.samplesFile)), !items.isEmpty
        else {
            throw FixtureError(description: "\(fv.samplesFile) must be a non-empty JSON array")
        }
        return items
    }

    static func payload(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }
}

extension JSONValue {
    /// This value with the member at `path` replaced, or removed when `new` is nil.
    func setting(_ path: ArraySlice<String>, to new: JSONValue?) -> JSONValue {
        guard let key = path.first, case .object(let members) = self else { return new ?? self }
        var pairs = members.map { ($0.key, $0.value) }
        if path.count == 1 {
            pairs.removeAll { $0.0.utf8.elementsEqual(key.utf8) }
            if let new { pairs.append((key, new)) }
        } else {
            pairs = pairs.map {
                $0.0.utf8.elementsEqual(key.utf8) ? ($0.0, $0.1.setting(path.dropFirst(), to: new)) : $0
            }
        }
        return .makeObject(pairs)
    }

    var objectMembers: [JSONMember] {
        if case .object(let m) = self { return m }
        return []
    }
}

extension MiniSchemaValidator {
    /// The keywords that apply to a present, non-null value: `$ref` targets merged in (siblings
    /// win) and a nullable `oneOf: [X, {type: null}]` unwrapped to X.
    func effective(_ schema: JSONValue, document: String) throws -> [String: JSONValue] {
        var own: [String: JSONValue] = [:]
        for m in schema.objectMembers { own[m.key] = m.value }
        var result: [String: JSONValue] = [:]
        if case .string(let ref)? = own.removeValue(forKey: "$ref") {
            let (target, targetDocument) = try resolve(ref, from: document)
            result = try effective(target, document: targetDocument)
        }
        if case .array(let branches)? = own["oneOf"], branches.count == 2,
            let nonNull = branches.first(where: { $0 != .makeObject([("type", .string("null"))]) }),
            branches.contains(.makeObject([("type", .string("null"))]))
        {
            own.removeValue(forKey: "oneOf")
            result.merge(try effective(nonNull, document: document)) { _, new in new }
        }
        result.merge(own) { _, new in new }
        return result
    }

    /// For `oneOf` by `kind` const (the entitlement), the branch whose const matches the instance.
    func branch(
        of keywords: [String: JSONValue], for instance: JSONValue, document: String
    ) throws -> [String: JSONValue]? {
        guard case .array(let branches)? = keywords["oneOf"] else { return keywords }
        for b in branches {
            let e = try effective(b, document: document)
            if let kind = e["properties"]?["kind"]?["const"], instance["kind"] == kind { return e }
        }
        return nil
    }
}

/// One mutated payload and what both judges must say about it.
struct Mutation: CustomStringConvertible {
    enum Expect { case reject, accept }
    var path: [String]
    var label: String
    var payload: JSONValue
    var expect: Expect
    var field: String { path.joined(separator: ".") }
    var description: String { "\(field) \(label) (expect \(expect))" }
}

/// Derives mutations of a valid sample from its schema: removal, null, wrong JSON types, values
/// outside enums and integer bounds, string length and character violations, bad formats, unknown
/// open-enum values (accepted), and an unknown extra member; recursing into money and entitlements.
struct Mutator {
    let validator: MiniSchemaValidator
    let root: JSONValue
    var mutations: [Mutation] = []

    static let wrongTypes: [JSONValue] = [.int(7), .string("x"), .bool(true), .array([]), .object([])]
    static let badDateTimes = [
        "2026-02-30T00:00:00Z", "2026-03-31 08:15:00Z", "2026-03-31T08:15:00+08", "2026-03-31T08:15:00+0800",
        "2026-03-31T08:15:60Z", "2026-03-31T08:15:00.1234567Z", "2026-03-31T24:00:00Z", "2026-03-31T08:15:00",
        "2026-03-31", "31/03/2026 08:15", "2026-13-01T00:00:00Z", "2026-03-31T08:15:00+24:00",
    ]
    static let badUUIDs = [
        " d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11", "+d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11",
        "0x1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11",
        "7d1c1e8a-+f9b-4a51-9a55-2b8f0c6b8e11", "7d1c1e8a3f9b4a519a552b8f0c6b8e11",
        "{7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e1}",
        "7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e1g", "7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e111",
    ]

    static func mutations(of sample: JSONValue, schemaFile: String, validator: MiniSchemaValidator) throws -> [Mutation]
    {
        var m = Mutator(validator: validator, root: sample)
        let top = try validator.effective(validator.documents[schemaFile] ?? .null, document: schemaFile)
        try m.walk(sample, schema: top, document: schemaFile, path: [])
        return m.mutations
    }

    mutating func add(_ path: [String], _ label: String, _ value: JSONValue?, _ expect: Mutation.Expect) {
        mutations.append(
            Mutation(path: path, label: label, payload: root.setting(path[...], to: value), expect: expect))
    }

    mutating func walk(_ object: JSONValue, schema: [String: JSONValue], document: String, path: [String]) throws {
        var required = Set<String>()
        if case .array(let names)? = schema["required"] { required = Set(names.compactMap(\.stringValue)) }
        for member in object.objectMembers {
            let p = path + [member.key]
            let isRequired = required.contains(member.key)
            guard let propertySchema = schema["properties"]?[member.key] else {
                throw FixtureError(description: "sample member \(p.joined(separator: ".")) is not in the schema")
            }
            let f = try validator.effective(propertySchema, document: document)
            add(p, "removed", nil, isRequired ? .reject : .accept)
            // An explicit null in a sample reads as absent: nothing more to vary about it.
            if member.value.isNull { continue }
            add(p, "null", .null, isRequired ? .reject : .accept)
            for wrong in Self.wrongTypes where wrong.typeName != member.value.typeName {
                add(p, "as \(wrong.typeName)", wrong, .reject)
            }
            if f["enum"] != nil { add(p, "outside the enum", .string("NOT-IN-SET"), .reject) }
            if f["const"] != nil { add(p, "not the const", .string("not-a-kind"), .reject) }
            if case .int(let min)? = f["minimum"], min > .min { add(p, "below minimum", .int(min - 1), .reject) }
            if case .int(let max)? = f["maximum"], max < .max { add(p, "above maximum", .int(max + 1), .reject) }
            if case .string = member.value {
                add(p, "empty", .string(""), .reject)
                add(p, "with a control character", .string("bad\u{7}value"), .reject)
                add(p, "with DEL", .string("bad\u{7F}"), .reject)
                add(p, "with a newline", .string("two\nlines"), .reject)
                if case .int(let max)? = f["maxLength"] {
                    add(p, "too long", .string(String(repeating: "a", count: Int(max) + 1)), .reject)
                    // 2 scalars per grapheme: too long in Unicode scalars, short in Characters.
                    add(
                        p, "too long in scalars", .string(String(repeating: "e\u{301}", count: Int(max) / 2 + 1)),
                        .reject)
                }
                let isPlainText = f["enum"] == nil && f["const"] == nil && f["format"] == nil
                if isPlainText, case .int(let max)? = f["maxLength"] {
                    add(p, "at maxLength (astral)", .string(String(repeating: "😀", count: Int(max))), .accept)
                    add(p, "at maxLength (accented)", .string(String(repeating: "é", count: Int(max))), .accept)
                }
                if f["x-knownValues"] != nil {
                    add(p, "an unknown open-enum value", .string("FUTURE_VALUE_2031"), .accept)
                }
                switch f["format"]?.stringValue {
                case "date-time": for s in Self.badDateTimes { add(p, "bad date-time \(s)", .string(s), .reject) }
                case "uuid":
                    for s in Self.badUUIDs { add(p, "bad uuid \(s)", .string(s), .reject) }
                    if case .string(let s) = member.value { add(p, "uppercase uuid", .string(s.uppercased()), .accept) }
                default: break
                }
            }
            if case .object = member.value {
                guard let nested = try validator.branch(of: f, for: member.value, document: document) else {
                    throw FixtureError(description: "no schema branch for \(p.joined(separator: "."))")
                }
                try walk(member.value, schema: nested, document: document, path: p)
            }
        }
        add(path + ["unexpectedField"], "added", .int(1), .reject)
    }
}

/// Is `ancestor` the dotted path `path` or one of its parents?
func isAncestorOrSelf(_ ancestor: String, of path: String) -> Bool {
    ancestor.isEmpty || ancestor == path || path.hasPrefix(ancestor + ".")
}

@Suite("JSON Schemas agree with the Swift fact readers")
struct SchemaAgreementTests {
    @Test("the checked-in schemas are exactly what the fact declarations make (ledger schemas)")
    func schemasAreGenerated() throws {
        let files = FactSchemas.files()
        #expect(files.count == FactVersion.all.count + 1)
        for file in files {
            let url = Fixtures.factsFolder.appendingPathComponent(file.name)
            let stored = try String(contentsOf: url, encoding: .utf8)
            #expect(stored == file.text, "\(file.name) is stale: run `ledger schemas --output schema/facts`")
        }
    }

    @Test("every readable (type, version) has a schema and samples, and no stray files exist")
    func filesMatchTheCatalogue() throws {
        let fm = FileManager.default
        let expected = Set(FactVersion.all.map(\.name))
        #expect(expected.count == 55)
        let schemaFiles = Set(try fm.contentsOfDirectory(atPath: Fixtures.factsFolder.path)).subtracting([
            "samples", "README.md",
        ])
        #expect(schemaFiles == Set(expected.map { "\($0).schema.json" }).union([Fixtures.commonFile]))
        let sampleFiles = Set(try fm.contentsOfDirectory(atPath: Fixtures.samplesFolder.path))
        #expect(sampleFiles == Set(expected.map { "\($0).valid.json" }))
        #expect(fm.fileExists(atPath: Fixtures.factsFolder.appendingPathComponent("README.md").path))
    }

    @Test("each schema is titled, versioned and closed", arguments: FactVersion.all)
    func schemaHeader(_ fv: FactVersion) throws {
        let v = try Fixtures.validator()
        let schema = try #require(v.documents[fv.schemaFile])
        #expect(schema["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(schema["x-schemaVersion"] == .int(Int64(fv.version)))
        #expect(schema["title"]?.stringValue?.hasPrefix(fv.type) == true)
        #expect(schema["description"]?.stringValue?.contains("idempotency key") == true)
        #expect(schema["type"] == .string("object"))
        #expect(schema["additionalProperties"] == .bool(false))
        // Validating a non-object fails at the top.
        #expect(try !v.validate(.array([]), file: fv.schemaFile).isEmpty)
    }

    @Test("the currency enum is exactly Currency.exponents")
    func currencyEnum() throws {
        let v = try Fixtures.validator()
        let e = try v.effective(
            .makeObject([("$ref", .string("common.schema.json#/$defs/currency"))]), document: Fixtures.commonFile)
        guard case .array(let codes)? = e["enum"] else {
            Issue.record("no currency enum")
            return
        }
        #expect(Set(codes.compactMap(\.stringValue)) == Set(Currency.exponents.keys))
        #expect(codes.count == Currency.exponents.count)
    }

    @Test("every valid sample is accepted by the Swift reader and by the schema", arguments: FactVersion.all)
    func validSamples(_ fv: FactVersion) throws {
        let v = try Fixtures.validator()
        for (i, sample) in try Fixtures.samples(fv).enumerated() {
            let failures = try v.validate(sample, file: fv.schemaFile)
            #expect(failures.isEmpty, "\(fv.name) sample \(i): schema says \(failures)")
            switch fv.decode(sample) {
            case .success(let fact):
                #expect(fact.typeName == fv.type)
                // What Swift writes back is valid under the current version's schema.
                let written = try v.validate(fact.payload, file: fv.current.schemaFile)
                #expect(written.isEmpty, "\(fv.name) sample \(i) re-encoded: \(written)")
            case .failure(let error):
                Issue.record("\(fv.name) sample \(i): Swift refused it: \(error)")
            }
        }
    }

    @Test(
        "the samples exercise every property of the schema, every entitlement kind included", arguments: FactVersion.all
    )
    func samplesCoverTheSchema(_ fv: FactVersion) throws {
        let v = try Fixtures.validator()
        let top = try v.effective(try #require(v.documents[fv.schemaFile]), document: fv.schemaFile)
        var declared = Set<String>(), covered = Set<String>()
        func collectDeclared(_ schema: [String: JSONValue], _ prefix: String) throws {
            if case .array(let branches)? = schema["oneOf"] {
                for b in branches {
                    let e = try v.effective(b, document: fv.schemaFile)
                    try collectDeclared(e, prefix + "<\(e["properties"]?["kind"]?["const"]?.stringValue ?? "?")>")
                }
                return
            }
            for m in schema["properties"]?.objectMembers ?? [] {
                declared.insert(prefix + "." + m.key)
                let e = try v.effective(m.value, document: fv.schemaFile)
                if e["properties"] != nil || e["oneOf"] != nil { try collectDeclared(e, prefix + "." + m.key) }
            }
        }
        func collectCovered(_ instance: JSONValue, _ schema: [String: JSONValue], _ prefix: String) throws {
            var schema = schema
            var prefix = prefix
            if schema["oneOf"] != nil, let b = try v.branch(of: schema, for: instance, document: fv.schemaFile) {
                prefix += "<\(instance["kind"]?.stringValue ?? "?")>"
                schema = b
            }
            for m in instance.objectMembers {
                covered.insert(prefix + "." + m.key)
                if case .object = m.value, let s = schema["properties"]?[m.key] {
                    try collectCovered(m.value, try v.effective(s, document: fv.schemaFile), prefix + "." + m.key)
                }
            }
        }
        try collectDeclared(top, "")
        for sample in try Fixtures.samples(fv) { try collectCovered(sample, top, "") }
        #expect(
            declared.subtracting(covered).isEmpty, "\(fv.name): no sample has \(declared.subtracting(covered).sorted())"
        )
        #expect(covered.subtracting(declared).isEmpty)
    }

    @Test(
        "mutated samples are judged alike by both, the Swift error naming the mutated field", arguments: FactVersion.all
    )
    func mutatedSamples(_ fv: FactVersion) throws {
        let v = try Fixtures.validator()
        var rejected = 0, accepted = 0
        for (i, sample) in try Fixtures.samples(fv).enumerated() {
            let mutations = try Mutator.mutations(of: sample, schemaFile: fv.schemaFile, validator: v)
            for m in mutations {
                let schemaFailures = try v.validate(m.payload, file: fv.schemaFile)
                let swift = fv.decode(m.payload)
                let what = "\(fv.name) sample \(i): \(m)"
                switch m.expect {
                case .reject:
                    rejected += 1
                    #expect(!schemaFailures.isEmpty, "\(what): the schema accepted it")
                    #expect(
                        schemaFailures.contains { isAncestorOrSelf($0.path, of: m.field) },
                        "\(what): the schema complained elsewhere: \(schemaFailures)")
                    switch swift {
                    case .success: Issue.record("\(what): Swift accepted it")
                    case .failure(let error): #expect(error.field == m.field, "\(what): Swift named \(error)")
                    }
                case .accept:
                    accepted += 1
                    #expect(schemaFailures.isEmpty, "\(what): the schema refused it: \(schemaFailures)")
                    if case .failure(let error) = swift { Issue.record("\(what): Swift refused it: \(error)") }
                }
            }
        }
        #expect(rejected > 10)
        #expect(accepted > 0)
    }

    @Test("the validator itself: refs, oneOf, formats, patterns, unsupported keywords")
    func validatorSelfCheck() throws {
        let v = try Fixtures.validator()
        func check(_ schema: String, _ instance: String) throws -> [MiniSchemaValidator.Failure] {
            let mini = MiniSchemaValidator(
                documents: v.documents.merging(["t.json": try Fixtures.payload(schema)]) { a, _ in a })
            return try mini.validate(try Fixtures.payload(instance), file: "t.json")
        }
        #expect(
            try check(#"{"$ref": "common.schema.json#/$defs/money"}"#, #"{"amount": 1, "currency": "USD"}"#).isEmpty)
        #expect(
            try check(#"{"$ref": "common.schema.json#/$defs/money"}"#, #"{"amount": 1, "currency": "usd"}"#).map(\.path)
                == ["currency"])
        #expect(
            try check(#"{"$ref": "common.schema.json#/$defs/entitlement"}"#, #"{"kind": "coins", "amount": 5}"#).isEmpty
        )
        #expect(
            try !check(#"{"$ref": "common.schema.json#/$defs/entitlement"}"#, #"{"kind": "coins", "feature": "x"}"#)
                .isEmpty)
        #expect(
            try check(#"{"$ref": "common.schema.json#/$defs/timestamp"}"#, #""2024-02-29T23:59:59.999999-05:30""#)
                .isEmpty)
        #expect(try !check(#"{"$ref": "common.schema.json#/$defs/timestamp"}"#, #""2023-02-29T00:00:00Z""#).isEmpty)
        #expect(try check(#"{"$ref": "common.schema.json#/$defs/text"}"#, #""多语言 ✓ text""#).isEmpty)
        #expect(try !check(#"{"$ref": "common.schema.json#/$defs/text"}"#, #""tab\there""#).isEmpty)
        #expect(try check(#"{"type": ["string", "null"]}"#, "null").isEmpty)
        #expect(throws: MiniSchemaValidator.SchemaProblem.self) { try check(#"{"anyOf": []}"#, "1") }
        #expect(throws: MiniSchemaValidator.SchemaProblem.self) { try check(##"{"$ref": "#/$defs/missing"}"##, "1") }
    }

    // MARK: - Cross-field rules only the Swift reader enforces (listed in schema/facts/README.md)

    struct CrossField: Sendable, CustomTestStringConvertible {
        var fact: FactVersion
        var payload: String
        var field: String
        var testDescription: String
    }

    static let crossField: [CrossField] = [
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 5),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"coins","quantity":1,"purchaseDate":"2026-03-31T08:00:00Z",
                 "environment":"Production","ownership":"PURCHASED","price":{"amount":1800,"currency":"CNY"},"purchaseToken":"tok"}
                """, field: "purchaseToken",
            testDescription: "PaymentVerified v5: a purchase token on an App Store purchase"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 2),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"vip","quantity":1,"purchaseDate":"2026-03-31T08:00:00Z",
                 "expiresDate":"2026-03-31T08:00:00Z","environment":"Production","ownership":"PURCHASED","price":{"amount":1800,"currency":"CNY"}}
                """, field: "expiresDate", testDescription: "PaymentVerified v2: expiresDate equal to purchaseDate"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 2),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"vip","quantity":1,"purchaseDate":"2026-03-31T16:00:00+08:00",
                 "expiresDate":"2026-03-31T07:59:59Z","environment":"Production","ownership":"PURCHASED","price":{"amount":1800,"currency":"CNY"}}
                """, field: "expiresDate",
            testDescription: "PaymentVerified v2: expiresDate before purchaseDate (other zone)"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 1),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"vip","quantity":1,"purchaseDate":"2024-11-02T10:00:00Z",
                 "expiresDate":"2024-11-01T10:00:00Z","environment":"Production","priceMilliunits":990,"currency":"USD"}
                """, field: "expiresDate", testDescription: "PaymentVerified v1: expiresDate before purchaseDate"),
        CrossField(
            fact: FactVersion(type: "SubscriptionRenewed", version: 1),
            payload: """
                {"channel":"appstore","originalTransactionId":"o1","transactionId":"t2","productId":"vip",
                 "purchaseDate":"2026-04-30T08:00:00Z","expiresDate":"2026-04-30T08:00:00Z"}
                """, field: "expiresDate", testDescription: "SubscriptionRenewed: expiresDate equal to purchaseDate"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 2),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"coins","quantity":1,"purchaseDate":"2026-03-31T08:00:00Z",
                 "environment":"Production","ownership":"PURCHASED","price":{"amount":600,"currency":"CNY","storeMilliunits":7000}}
                """, field: "price.storeMilliunits", testDescription: "storeMilliunits disagreeing with amount"),
        CrossField(
            fact: FactVersion(type: "Refunded", version: 1),
            payload: """
                {"channel":"appstore","transactionId":"t1","refundId":"r1","refundedAt":"2026-04-02T11:00:00Z",
                 "amount":{"amount":801,"currency":"JPY","storeMilliunits":800500}}
                """, field: "amount.storeMilliunits",
            testDescription: "storeMilliunits of 800.5 yen beside an amount of 801"),
        CrossField(
            fact: FactVersion(type: "ProductDefined", version: 1),
            payload: """
                {"channel":"appstore","storeProductId":"p","entitlement":{"kind":"coins","amount":1},"version":1,
                 "validFrom":"2026-01-01T00:00:00Z","price":{"amount":99,"currency":"KWD","storeMilliunits":990}}
                """, field: "price.storeMilliunits",
            testDescription: "storeMilliunits in the wrong exponent (KWD has 3 decimals)"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 1),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"coins","quantity":1,"purchaseDate":"2024-11-02T10:00:00Z",
                 "environment":"Production","priceMilliunits":1234,"currency":"JPY"}
                """, field: "priceMilliunits", testDescription: "v1 priceMilliunits not a whole number of yen"),
        CrossField(
            fact: FactVersion(type: "PaymentVerified", version: 1),
            payload: """
                {"channel":"appstore","transactionId":"t1","productId":"coins","quantity":1,"purchaseDate":"2024-11-02T10:00:00Z",
                 "environment":"Production","priceMilliunits":10000000000000000,"currency":"JPY"}
                """, field: "priceMilliunits",
            testDescription: "v1 priceMilliunits upcasting beyond the v2 amount limit"),
    ]

    @Test("cross-field rules: the schema accepts, the Swift reader refuses naming the field", arguments: crossField)
    func crossFieldRules(_ c: CrossField) throws {
        let v = try Fixtures.validator()
        let payload = try Fixtures.payload(c.payload)
        #expect(try v.validate(payload, file: c.fact.schemaFile).isEmpty)
        switch c.fact.decode(payload) {
        case .success: Issue.record("Swift accepted \(c.testDescription)")
        case .failure(let error): #expect(error.field == c.field, "\(error)")
        }
    }
}
