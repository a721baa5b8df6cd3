import LedgerCore

/// The published JSON Schemas (draft 2020-12) of the fact payloads, made from the same field
/// declarations the readers use: `common.schema.json` and one `<Type>.v<N>.schema.json` per type
/// and schema version. `ledger schemas --output schema/facts` writes them; a test proves the
/// checked-in files are these.
public enum FactSchemas {
    static let base = "https://example.invalid/purchase-ledger/facts/"
    static let common = "common.schema.json"

    /// Every file: name and text (two-space indented JSON, members in declaration order).
    public static func files() -> [(name: String, text: String)] {
        var out = [(name: common, text: pretty(commonSchema))]
        for t in FactCatalogue.types.sorted(by: { $0.name < $1.name }) {
            for v in 1...t.version { out.append(("\(t.name).v\(v).schema.json", pretty(t.schema(v)))) }
        }
        return out
    }

    static func schema<Body>(of t: FactType<Body>, version: Int32) -> JSONValue {
        let about = version < t.version ? t.older[Int(version) - 1].about : t.about
        let key =
            t.keys.isEmpty
            ? "none"
            : t.keys.enumerated().map { $1.describe(last: $0 == t.keys.count - 1) }.joined(separator: "; otherwise ")
        return .ordered(
            [
                ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
                ("$id", .string("\(base)\(t.name).v\(version).schema.json")),
                ("title", .string("\(t.name) payload, schema version \(version)")),
                (
                    "description",
                    .string(
                        "\(about) Stream: \(t.stream.description). Natural idempotency key: \(key). "
                            + "An optional field may be absent or null (null reads as absent; writers leave it out).")
                ),
                ("x-schemaVersion", .int(Int64(version))),
            ] + t.fields(version: version).schema)
    }

    static var commonSchema: JSONValue {
        .ordered([
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("$id", .string(base + common)),
            ("title", .string("Shared definitions of the purchase fact payloads")),
            ("description", .string("Referenced by the per-fact schemas in this folder.")),
            (
                "$defs",
                .ordered([
                    (
                        "text",
                        .ordered([
                            (
                                "description",
                                .string(
                                    "A non-empty string of at most 200 characters (Unicode scalars), without control characters (U+0000-U+001F, U+007F)."
                                )
                            ),
                            ("type", .string("string")), ("minLength", .int(1)), ("maxLength", .int(200)),
                            ("pattern", .string("^[^\\u0000-\\u001F\\u007F]*$")),
                        ])
                    ),
                    (
                        "timestamp",
                        .ordered([
                            (
                                "description",
                                .string(
                                    "An RFC 3339 date-time with a zone (Z or +-HH:MM) and at most 6 fractional digits, e.g. 2026-03-31T08:15:00Z. Leap seconds (:60) are refused."
                                )
                            ),
                            ("type", .string("string")), ("format", .string("date-time")),
                            (
                                "pattern",
                                .string(
                                    "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-5][0-9](\\.[0-9]{1,6})?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
                                )
                            ),
                        ])
                    ),
                    (
                        "uuid",
                        .ordered([
                            (
                                "description",
                                .string(
                                    "A UUID in 8-4-4-4-12 hex form (either case), e.g. 7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11; written back lowercase."
                                )
                            ),
                            ("type", .string("string")), ("format", .string("uuid")),
                        ])
                    ),
                    (
                        "channel",
                        .ordered([
                            ("description", .string("The store: App Store, Google Play or WeChat Pay.")),
                            ("type", .string("string")),
                            ("enum", .array(Channel.allCases.map { .string($0.rawValue) })),
                        ])
                    ),
                    (
                        "currency",
                        .ordered([
                            (
                                "description",
                                .string("An active ISO 4217 code (the list below; minor units per ISO 4217).")
                            ),
                            ("type", .string("string")),
                            ("enum", .array(Currency.exponents.keys.sorted().map(JSONValue.string))),
                        ])
                    ),
                    ("money", .ordered([("description", .string(Money.about))] + Money.fields.schema)),
                    ("entitlement", Entitlement.schema),
                ])
            ),
        ])
    }

    /// JSON with two-space indents, `": "` between key and value, non-ASCII kept as it is.
    static func pretty(_ v: JSONValue) -> String {
        var out: [UInt8] = []
        write(v, indent: 0, into: &out)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ v: JSONValue, indent: Int, into out: inout [UInt8]) {
        func newline(_ n: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: n * 2))
        }
        switch v {
        case .array(let items) where !items.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(item, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .object(let members) where !members.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                JSONValue.string(m.key).writeCanonical(into: &out)
                out.append(contentsOf: [UInt8(ascii: ":"), 0x20])
                write(m.value, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        default:
            v.writeCanonical(into: &out)
        }
    }
}
