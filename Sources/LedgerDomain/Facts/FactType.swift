import LedgerCore

/// A fact's payload: a value whose fields are declared once, in ``fields``.
public protocol FactBody: Hashable, Sendable {
    static var fields: FieldTable<Self> { get }
}

/// The declarations of every fact type, one static per type, each in its domain area's folder
/// (`Orders/OrderFacts.swift` declares ``orderCreated``...). ``FactCatalogue/types`` lists them.
public enum FactTypes {}

/// One fact type, declared once: its name, what it means, the stream it belongs in and its
/// natural idempotency key (templates over its fields), its one-line summary, the ``Fact`` case
/// it becomes, and the older schema versions it upcasts from.
public struct FactType<Body: FactBody>: Sendable {
    public let name: String
    let about: String
    let stream: KeyTemplate<Body>
    /// The natural idempotency key: the first template whose fields are present.
    let keys: [KeyTemplate<Body>]
    let summary: @Sendable (Body) -> String
    let wrap: @Sendable (Body) -> Fact
    /// Versions 1, 2... before the current one: each read straight into the current shape.
    let older: [OlderVersion<Body>]

    /// - Parameters:
    ///   - stream: e.g. `"order:<orderId>"`; `<field>` is the field's text.
    ///   - key: e.g. `"order:<orderId>:created"`; an optional field that is absent makes no key,
    ///     unless a fallback is given (`<channel|any>`).
    init(
        _ name: String, _ about: String, stream: String, key: String?, orKeys: [String] = [],
        older: [OlderVersion<Body>] = [],
        wrap: @escaping @Sendable (Body) -> Fact, summary: @escaping @Sendable (Body) -> String
    ) {
        self.name = name
        self.about = about
        self.stream = KeyTemplate(stream)
        self.keys = (key.map { [$0] } ?? []).map { KeyTemplate($0) } + orKeys.map { KeyTemplate($0) }
        self.older = older
        self.wrap = wrap
        self.summary = summary
    }

    /// The schema version new facts of this type are written in.
    public var version: Int32 { Int32(older.count + 1) }

    func fields(version: Int32) -> FieldTable<Body> {
        version <= older.count ? older[Int(version) - 1].fields : Body.fields
    }
}

/// An older schema version of a fact type, read into the current shape (an upcast).
struct OlderVersion<Body: Sendable>: Sendable {
    let fields: FieldTable<Body>
    let about: String
}

extension OlderVersion where Body: FactBody {
    /// A version that had the current fields but for `added` ones (optional: absent reads as nil).
    static func without(_ added: Set<String>, _ about: String) -> OlderVersion {
        precondition(
            added.allSatisfy { name in Body.fields.fields.contains { $0.name == name && !$0.isRequired } },
            "\(Body.self): only optional fields can be new in a later version")
        return OlderVersion(fields: Body.fields.removing(added), about: about)
    }
}

/// A stream name or idempotency key built from a fact's fields: `"<channel>:tx:<transactionId>[@<app>]"`.
struct KeyTemplate<Body: FactBody>: Sendable {
    enum Part: Sendable {
        case literal(String)
        case field(name: String, text: @Sendable (Body) -> String?, fallback: String?, optional: Bool)
        case group([Part])
    }

    let parts: [Part]

    init(_ pattern: String) { self.parts = Self.parse(Substring(pattern), pattern) }

    /// `<field>`, `<field|fallback>`, and `[...]`: a group written only when its fields are given
    /// (`<transactionId>[@<app>]`).
    private static func parse(_ pattern: Substring, _ whole: String) -> [Part] {
        var parts: [Part] = []
        var rest = pattern
        while let open = rest.firstIndex(where: { $0 == "<" || $0 == "[" }) {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            if rest[open] == "[" {
                guard let close = rest[open...].firstIndex(of: "]") else {
                    preconditionFailure("unclosed [ in \(whole)")
                }
                parts.append(.group(parse(rest[rest.index(after: open)..<close], whole)))
                rest = rest[rest.index(after: close)...]
                continue
            }
            guard let close = rest[open...].firstIndex(of: ">") else { preconditionFailure("unclosed < in \(whole)") }
            let spec = rest[rest.index(after: open)..<close].split(separator: "|", maxSplits: 1).map(String.init)
            guard let field = Body.fields.field(named: spec[0]), let text = field.text else {
                preconditionFailure("\(whole) names \(spec[0]), which is no text field of \(Body.self)")
            }
            parts.append(
                .field(name: spec[0], text: text, fallback: spec.count > 1 ? spec[1] : nil, optional: !field.isRequired)
            )
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        return parts
    }

    /// The text for `body`, or nil when a field it needs is absent and has no fallback.
    func render(_ body: Body) -> String? { Self.render(parts, body) }

    private static func render(_ parts: [Part], _ body: Body) -> String? {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let s): out += s
            case .field(_, let text, let fallback, _):
                guard let t = text(body) ?? fallback else { return nil }
                out += t
            case .group(let inner):
                out += render(inner, body) ?? ""
            }
        }
        return out
    }

    /// How the published schema describes it: `revoke:<channel or any>:<transactionId>`, with
    /// "when X is given" for a key that needs an optional field (", else none" when no other
    /// template follows).
    var description: String { describe(last: true) }

    func describe(last: Bool) -> String {
        var needs: [String] = []
        var out = Self.describe(parts, &needs)
        let grouped = parts.flatMap { part -> [String] in
            guard case .group(let inner) = part else { return [] }
            return inner.compactMap { if case .field(let name, _, _, _) = $0 { name } else { nil } }
        }
        if !grouped.isEmpty {
            out += " (the part in brackets only when \(grouped.joined(separator: " and ")) is given)"
        }
        guard !needs.isEmpty else { return out }
        return out + " when \(needs.joined(separator: " and ")) \(needs.count > 1 ? "are" : "is") given"
            + (last ? ", else none" : "")
    }

    private static func describe(_ parts: [Part], _ needs: inout [String]) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .literal(let s): out += s
            case .field(let name, _, let fallback, let optional):
                out += "<\(name)\(fallback.map { " or \($0)" } ?? "")>"
                if optional && fallback == nil { needs.append(name) }
            case .group(let inner):
                var ignored: [String] = []
                out += "[" + describe(inner, &ignored) + "]"
            }
        }
        return out
    }
}

/// A fact type without its body's type: what the catalogue reads and publishes by name.
public struct AnyFactType: Sendable {
    public let name: String
    /// The schema version new facts are written in; versions 1 to this one can be read.
    public let version: Int32
    let decode: @Sendable (inout PayloadReader, Int32) throws(FactError) -> Fact
    let schema: @Sendable (Int32) -> JSONValue
    /// Fields of any version a read sets through a key path instead of at an offset (see
    /// ``FactField/setsAtOffset``): none, as tested.
    let setThroughKeyPaths: [String]

    init<Body>(_ t: FactType<Body>) {
        name = t.name
        version = t.version
        // Each version's table made once, not copied out of the declaration at every decode.
        let tables = (1...t.version).map { t.fields(version: $0) }
        setThroughKeyPaths = tables.enumerated().flatMap { v, table in
            table.fields.filter { !$0.setsAtOffset }.map { "v\(v + 1).\($0.name)" }
        }
        let wrap = t.wrap
        decode = { (r: inout PayloadReader, version: Int32) throws(FactError) -> Fact in
            // In place: `tables[i]` would copy the table out, retaining what it holds.
            wrap(
                try tables.withUnsafeBufferPointer { (tables) throws(FactError) in
                    try tables.lend(Int(version) - 1) { (table) throws(FactError) in try table.read(&r) }
                })
        }
        schema = { version in FactSchemas.schema(of: t, version: version) }
    }
}

/// A fact's body with its type's declaration, so every question about a fact is answered by the
/// declaration (see ``Fact/declared``).
protocol DeclaredFact {
    var typeName: String { get }
    var schemaVersion: Int32 { get }
    var payload: JSONValue { get }
    var stream: String { get }
    var idempotencyKey: String? { get }
    var summary: String { get }
}

struct Declared<Body: FactBody>: DeclaredFact {
    let type: FactType<Body>
    let body: Body

    init(_ type: FactType<Body>, _ body: Body) {
        self.type = type
        self.body = body
    }

    var typeName: String { type.name }
    var schemaVersion: Int32 { type.version }
    var payload: JSONValue { Body.fields.write(body) }
    var stream: String {
        guard let s = type.stream.render(body) else {
            preconditionFailure("\(type.name)'s stream names an optional field")
        }
        return s
    }
    var idempotencyKey: String? {
        for k in type.keys { if let key = k.render(body) { return key } }
        return nil
    }
    var summary: String { type.summary(body) }
}
