import LedgerCore

/// What a store product gives, or what fulfilment granted.
public enum Entitlement: Hashable, Sendable, Codable {
    /// A consumable: this many coins per unit bought.
    case coins(Int64)
    /// A non-consumable feature owned forever (`no_ads`).
    case feature(String)
    /// An auto-renewable subscription: each paid period adds `periodDays` of `entitlement`.
    /// `rank` orders products within a group (higher is an upgrade). Out of line (`indirect`):
    /// products name it, grants nearly never do, and inline it made every grant 24 bytes larger.
    indirect case subscription(entitlement: String, group: String, periodDays: Int64, rank: Int64)
    /// A non-renewing period of `entitlement` (a VIP quarter).
    case period(entitlement: String, days: Int64)

    /// The entitlement name a period feeds (`vip`), nil for coins and features.
    public var periodEntitlement: String? {
        switch self {
        case .subscription(let e, _, _, _), .period(let e, _): return e
        default: return nil
        }
    }

    public var periodDays: Int64? {
        switch self {
        case .subscription(_, _, let d, _): return d
        case .period(_, let d): return d
        default: return nil
        }
    }
}

extension Entitlement: PayloadValue {
    public static let schemaName = "entitlement"

    /// One kind of entitlement: its fields, declared once, and how it maps to the enum.
    struct Variant: Sendable {
        let kind: String
        let about: String
        let read: @Sendable (inout PayloadReader) throws(FactError) -> Entitlement
        let write: @Sendable (Entitlement) -> JSONValue?
        let schema: JSONValue

        init<Shape: Sendable>(
            _ kind: String, _ about: String, _ blank: Shape, _ fields: [FactField<Shape>],
            make: @escaping @Sendable (Shape) -> Entitlement, shape: @escaping @Sendable (Entitlement) -> Shape?
        ) {
            let kindField = FactField<Shape>(
                "kind", required: true, schema: FieldSchema(members: [("const", .string(kind))]),
                read: { _, _ in }, write: { _, w in w.set("kind", kind) })
            let table = FieldTable(blank, [kindField] + fields)
            self.kind = kind
            self.about = about
            read = { (r: inout PayloadReader) throws(FactError) -> Entitlement in make(try table.read(&r)) }
            write = { e in shape(e).map(table.write) }
            schema = .ordered([("description", .string(about))] + table.schema)
        }
    }

    struct Coins { var amount: Int64 }
    struct Feature { var feature: String }
    struct Subscription {
        var entitlement: String
        var group: String
        var periodDays: Int64
        var rank: Int64?
    }
    struct Period {
        var entitlement: String
        var days: Int64
    }

    static let variants: [Variant] = [
        Variant(
            "coins", "A consumable: this many coins per unit bought.", Coins(amount: 0),
            [.int("amount", \.amount, min: 1, max: 1_000_000_000)],
            make: { .coins($0.amount) }, shape: { if case .coins(let n) = $0 { Coins(amount: n) } else { nil } }),
        Variant(
            "feature", "A non-consumable feature owned forever (no_ads).", Feature(feature: ""),
            [.text("feature", \.feature)],
            make: { .feature($0.feature) }, shape: { if case .feature(let f) = $0 { Feature(feature: f) } else { nil } }
        ),
        Variant(
            "subscription",
            "An auto-renewable subscription: each paid period adds periodDays of entitlement; rank orders products within a group (higher is an upgrade, default 0).",
            Subscription(entitlement: "", group: "", periodDays: 0, rank: nil),
            [
                .text("entitlement", \.entitlement), .text("group", \.group),
                .int("periodDays", \.periodDays, min: 1, max: 3660),
                .optionalInt("rank", \.rank, min: 0, max: 1000),
            ],
            make: {
                .subscription(
                    entitlement: $0.entitlement, group: $0.group, periodDays: $0.periodDays, rank: $0.rank ?? 0)
            },
            shape: {
                guard case .subscription(let e, let g, let d, let rank) = $0 else { return nil }
                return Subscription(entitlement: e, group: g, periodDays: d, rank: rank == 0 ? nil : rank)
            }),
        Variant(
            "period", "A non-renewing period of entitlement (a VIP quarter).", Period(entitlement: "", days: 0),
            [.text("entitlement", \.entitlement), .int("days", \.days, min: 1, max: 36600)],
            make: { .period(entitlement: $0.entitlement, days: $0.days) },
            shape: { if case .period(let e, let d) = $0 { Period(entitlement: e, days: d) } else { nil } }),
    ]

    public static func read(_ r: inout PayloadReader) throws(FactError) -> Entitlement {
        let kind = try r.string("kind")
        guard let v = variants.first(where: { $0.kind == kind }) else {
            throw r.fail("kind", "must be one of \(variants.map(\.kind).joined(separator: ", ")) (got \"\(kind)\")")
        }
        return try v.read(&r)
    }

    public var json: JSONValue {
        for v in Entitlement.variants { if let j = v.write(self) { return j } }
        preconditionFailure("no variant writes \(self)")
    }

    static var schema: JSONValue {
        .ordered([
            ("description", .string("What a product gives or fulfilment granted, by kind.")),
            ("oneOf", .array(variants.map(\.schema))),
        ])
    }
}

extension Entitlement: CustomStringConvertible {
    public var description: String {
        switch self {
        case .coins(let n): return "\(n) coins"
        case .feature(let f): return "feature \(f)"
        case .subscription(let e, let g, let d, _): return "\(e) subscription (\(g)) \(d) days"
        case .period(let e, let d): return "\(e) \(d) days"
        }
    }
}
