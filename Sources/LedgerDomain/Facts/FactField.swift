import Foundation
import LedgerCore

/// One field of a payload object, declared once: its name, its published JSON Schema, how it is
/// read into the value and written back, and (for ids, numbers and enums) its text in stream and
/// key templates.
///
/// A fact's fields are a ``FieldTable``; the reader, the writer, the published schema
/// (``FactSchemas``) and the natural keys all come from it, so a field is never listed twice.
public struct FactField<Root>: Sendable {
    public let name: String
    public let isRequired: Bool
    /// The field's JSON Schema members (before its description), its description, and members
    /// that follow the description.
    let schema: FieldSchema
    let read: @Sendable (inout PayloadReader, inout Root) throws(FactError) -> Void
    let write: @Sendable (Root, inout PayloadWriter) -> Void
    /// The value as it appears in a stream name or an idempotency key; nil when absent.
    let text: (@Sendable (Root) -> String?)?
    /// Whether a read writes the value at the property's offset, or (a key path through a
    /// protocol's requirement, which has no fixed offset) through the key path, far slower.
    var setsAtOffset = true

    init(
        _ name: String, required: Bool, schema: FieldSchema,
        read: @escaping @Sendable (inout PayloadReader, inout Root) throws(FactError) -> Void,
        write: @escaping @Sendable (Root, inout PayloadWriter) -> Void,
        text: (@Sendable (Root) -> String?)? = nil
    ) {
        self.name = name
        self.isRequired = required
        self.schema = schema
        self.read = read
        self.write = write
        self.text = text
    }
}

/// The JSON Schema of one field, in the order the published files list its members.
struct FieldSchema: Sendable {
    var members: [(String, JSONValue)]
    var description: String? = nil
    var trailing: [(String, JSONValue)] = []

    static func ref(_ name: String, _ description: String? = nil) -> FieldSchema {
        FieldSchema(members: [("$ref", .string("common.schema.json#/$defs/\(name)"))], description: description)
    }

    static func integer(min: Int64?, max: Int64?, _ description: String?) -> FieldSchema {
        var m: [(String, JSONValue)] = [("type", .string("integer"))]
        if let min { m.append(("minimum", .int(min))) }
        if let max { m.append(("maximum", .int(max))) }
        return FieldSchema(members: m, description: description)
    }

    static func closed(_ values: [String], _ description: String?) -> FieldSchema {
        FieldSchema(
            members: [("type", .string("string")), ("enum", .array(values.map(JSONValue.string)))],
            description: description)
    }

    static func open(_ known: [String], _ description: String) -> FieldSchema {
        FieldSchema(
            members: [("$ref", .string("common.schema.json#/$defs/text"))],
            description:
                "\(description) Open enum: known values include \(known.joined(separator: ", ")); any other value "
                + "(1-200 characters) is accepted and kept raw, since stores add values without notice.",
            trailing: [("x-knownValues", .array(known.map(JSONValue.string)))])
    }

    /// The schema of a present value, description included.
    var value: JSONValue {
        .ordered(members + (description.map { [("description", .string($0))] } ?? []) + trailing)
    }

    /// As a property: required ones as they are; optional ones may also be null.
    func property(required: Bool) -> JSONValue {
        if required { return value }
        let nullable: JSONValue = .array([.ordered(members + trailing), .ordered([("type", .string("null"))])])
        return .ordered((description.map { [("description", .string($0))] } ?? []) + [("oneOf", nullable)])
    }
}

/// Key paths stored in field closures: sendable by construction (literals of stored properties).
public typealias FieldPath<Root, Value> = any WritableKeyPath<Root, Value> & Sendable

extension FactField {
    /// Sets the property `kp` names. A key path's setter runs through the runtime each time (about
    /// 6 % of the decoding thread's time in a replay); a stored property of a struct has a fixed
    /// offset, written through directly.
    static func setter<V>(_ kp: FieldPath<Root, V>) -> (set: @Sendable (inout Root, V) -> Void, atOffset: Bool) {
        guard let offset = MemoryLayout<Root>.offset(of: kp as PartialKeyPath<Root>) else {
            return ({ root, value in root[keyPath: kp] = value }, false)
        }
        return (
            { root, value in
                withUnsafeMutableBytes(of: &root) { bytes in
                    bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: V.self).pointee = value
                }
            }, true
        )
    }

    /// A required field read by `get` and written by `put`, published as `schema`.
    static func required<V>(
        _ name: String, _ kp: FieldPath<Root, V>, _ schema: FieldSchema,
        get: @escaping @Sendable (inout PayloadReader, String) throws(FactError) -> V,
        put: @escaping @Sendable (inout PayloadWriter, String, V) -> Void,
        text: (@Sendable (V) -> String)? = nil
    ) -> FactField {
        let (set, atOffset) = setter(kp)
        let read: @Sendable (inout PayloadReader, inout Root) throws(FactError) -> Void = { r, root throws(FactError) in
            set(&root, try get(&r, name))
        }
        let write: @Sendable (Root, inout PayloadWriter) -> Void = { root, w in put(&w, name, root[keyPath: kp]) }
        var rootText: (@Sendable (Root) -> String?)?
        if let text { rootText = { root in text(root[keyPath: kp]) } }
        var field = FactField(name, required: true, schema: schema, read: read, write: write, text: rootText)
        field.setsAtOffset = atOffset
        return field
    }

    /// An optional field: absent or null reads as nil, and nil is left out when written.
    static func optional<V>(
        _ name: String, _ kp: FieldPath<Root, V?>, _ schema: FieldSchema,
        get: @escaping @Sendable (inout PayloadReader, String) throws(FactError) -> V?,
        put: @escaping @Sendable (inout PayloadWriter, String, V) -> Void,
        text: (@Sendable (V) -> String)? = nil
    ) -> FactField {
        let (set, atOffset) = setter(kp)
        let read: @Sendable (inout PayloadReader, inout Root) throws(FactError) -> Void = { r, root throws(FactError) in
            set(&root, try get(&r, name))
        }
        let write: @Sendable (Root, inout PayloadWriter) -> Void = { root, w in
            if let v = root[keyPath: kp] { put(&w, name, v) }
        }
        var rootText: (@Sendable (Root) -> String?)?
        if let text { rootText = { root in root[keyPath: kp].map(text) } }
        var field = FactField(name, required: false, schema: schema, read: read, write: write, text: rootText)
        field.setsAtOffset = atOffset
        return field
    }

    /// A non-empty string of at most 200 characters, no control characters. Decoding a replay
    /// shares one string among the facts that repeat it (``SharedStrings``).
    public static func text(_ name: String, _ kp: FieldPath<Root, String>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, .ref("text", doc), get: { r, k throws(FactError) in try r.string(k) }, put: { $0.set($1, $2) },
            text: { $0 })
    }

    /// A text field an older version required and the current one makes optional: read as
    /// ``text(_:_:_:)`` into the optional property.
    public static func requiredText(_ name: String, _ kp: FieldPath<Root, String?>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, .ref("text", doc), get: { r, k throws(FactError) in try r.string(k) }, put: { $0.set($1, $2) })
    }

    public static func optionalText(_ name: String, _ kp: FieldPath<Root, String?>, _ doc: String? = nil) -> FactField {
        optional(
            name, kp, .ref("text", doc), get: { r, k throws(FactError) in try r.optionalString(k) },
            put: { $0.set($1, $2) }, text: { $0 })
    }

    public static func int(
        _ name: String, _ kp: FieldPath<Root, Int64>, min: Int64? = nil, max: Int64? = nil, _ doc: String? = nil
    ) -> FactField {
        required(
            name, kp, .integer(min: min, max: max, doc),
            get: { r, k throws(FactError) in try r.int(k, min: min ?? .min, max: max ?? .max) },
            put: { $0.set($1, $2) },
            text: { String($0) })
    }

    public static func optionalInt(
        _ name: String, _ kp: FieldPath<Root, Int64?>, min: Int64? = nil, max: Int64? = nil,
        _ doc: String? = nil
    ) -> FactField {
        optional(
            name, kp, .integer(min: min, max: max, doc),
            get: { r, k throws(FactError) in try r.optionalInt(k, min: min ?? .min, max: max ?? .max) },
            put: { $0.set($1, $2) },
            text: { String($0) })
    }

    public static func bool(_ name: String, _ kp: FieldPath<Root, Bool>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, FieldSchema(members: [("type", .string("boolean"))], description: doc),
            get: { r, k throws(FactError) in try r.bool(k) }, put: { $0.set($1, $2) })
    }

    public static func timestamp(_ name: String, _ kp: FieldPath<Root, Timestamp>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, .ref("timestamp", doc), get: { r, k throws(FactError) in try r.timestamp(k) },
            put: { $0.set($1, $2) })
    }

    public static func optionalTimestamp(
        _ name: String, _ kp: FieldPath<Root, Timestamp?>, _ doc: String? = nil
    ) -> FactField {
        optional(
            name, kp, .ref("timestamp", doc), get: { r, k throws(FactError) in try r.optionalTimestamp(k) },
            put: { $0.set($1, $2) })
    }

    public static func optionalUUID(_ name: String, _ kp: FieldPath<Root, UUID?>, _ doc: String? = nil) -> FactField {
        optional(
            name, kp, .ref("uuid", doc), get: { r, k throws(FactError) in try r.optionalUUID(k) },
            put: { $0.set($1, $2) })
    }

    public static func channel(_ name: String, _ kp: FieldPath<Root, Channel>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, .ref("channel", doc), get: { r, k throws(FactError) in try r.choice(k, Channel.self) },
            put: { $0.set($1, $2) }, text: { $0.rawValue })
    }

    public static func optionalChannel(
        _ name: String, _ kp: FieldPath<Root, Channel?>, _ doc: String? = nil
    ) -> FactField {
        optional(
            name, kp, .ref("channel", doc), get: { r, k throws(FactError) in try r.optionalChoice(k, Channel.self) },
            put: { $0.set($1, $2) }, text: { $0.rawValue })
    }

    public static func currency(_ name: String, _ kp: FieldPath<Root, Currency>, _ doc: String? = nil) -> FactField {
        required(
            name, kp, .ref("currency", doc), get: { r, k throws(FactError) in try r.currency(k) },
            put: { $0.set($1, $2.code) })
    }

    /// One of a closed set of values (`allowed`: a subset, for a version that knew fewer).
    public static func choice<E: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ kp: FieldPath<Root, E>, _ doc: String? = nil,
        allowed: [E]? = nil
    ) -> FactField
    where E.RawValue == String, E: Equatable {
        let values = allowed ?? Array(E.allCases)
        return required(
            name, kp, .closed(values.map(\.rawValue), doc),
            get: { r, k throws(FactError) in
                let e = try r.choice(k, E.self)
                guard values.contains(e) else {
                    throw r.fail(
                        k, "must be one of \(values.map(\.rawValue).joined(separator: ", ")) (got \"\(e.rawValue)\")")
                }
                return e
            },
            put: { $0.set($1, $2) }, text: { $0.rawValue })
    }

    /// One of a closed set of values, or absent.
    public static func optionalChoice<E: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, _ kp: FieldPath<Root, E?>, _ doc: String? = nil
    )
        -> FactField where E.RawValue == String
    {
        optional(
            name, kp, .closed(E.allCases.map(\.rawValue), doc),
            get: { r, k throws(FactError) in try r.optionalChoice(k, E.self) },
            put: { $0.set($1, $2) }, text: { $0.rawValue })
    }

    /// A store enum: unknown values are kept raw.
    public static func open<E: OpenEnum>(_ name: String, _ kp: FieldPath<Root, E>, _ doc: String) -> FactField {
        required(
            name, kp, .open(E.known.map(\.raw), doc), get: { r, k throws(FactError) in try r.open(k, E.self) },
            put: { $0.set($1, $2) }, text: { $0.raw })
    }

    public static func optionalOpen<E: OpenEnum>(_ name: String, _ kp: FieldPath<Root, E?>, _ doc: String) -> FactField
    {
        optional(
            name, kp, .open(E.known.map(\.raw), doc), get: { r, k throws(FactError) in try r.optionalOpen(k, E.self) },
            put: { $0.set($1, $2) }, text: { $0.raw })
    }

    /// A store enum that may be absent in older payloads, read as `absent` then (and always written).
    public static func open<E: OpenEnum>(
        _ name: String, _ kp: FieldPath<Root, E>, absent: E, _ doc: String
    ) -> FactField {
        FactField(
            name, required: false, schema: .open(E.known.map(\.raw), doc),
            read: { (r: inout PayloadReader, root: inout Root) throws(FactError) in
                root[keyPath: kp] = try r.optionalOpen(name, E.self) ?? absent
            },
            write: { root, w in w.set(name, root[keyPath: kp]) })
    }

    /// A nested object (money, an entitlement), published by reference to the shared definitions.
    public static func object<V: PayloadValue>(
        _ name: String, _ kp: FieldPath<Root, V>, _ doc: String? = nil
    ) -> FactField {
        required(
            name, kp, .ref(V.schemaName, doc),
            get: { r, k throws(FactError) in
                var o = try r.object(k)
                return try V.read(&o)
            },
            put: { $0.set($1, $2.json) })
    }

    public static func optionalObject<V: PayloadValue>(
        _ name: String, _ kp: FieldPath<Root, V?>, _ doc: String? = nil
    ) -> FactField {
        optional(
            name, kp, .ref(V.schemaName, doc),
            get: { r, k throws(FactError) in
                guard var o = try r.optionalObject(k) else { return nil }
                return try V.read(&o)
            },
            put: { $0.set($1, $2.json) })
    }
}

/// A value nested in payloads (money, an entitlement), with its shared schema definition.
public protocol PayloadValue: Sendable {
    /// Its name among the shared definitions of `common.schema.json`.
    static var schemaName: String { get }
    /// Reads it from its object, refusing fields it does not know.
    static func read(_ r: inout PayloadReader) throws(FactError) -> Self
    var json: JSONValue { get }
}

/// The fields of one payload object, in the order they are read, written and published, with
/// the value they are read into and an optional check across fields.
public struct FieldTable<Root: Sendable>: Sendable {
    let blank: Root
    public let fields: [FactField<Root>]
    /// The fields' names, for the message refusing a field the table does not name.
    let names: [String]
    /// A rule across fields (an expiry after the purchase), run after every field was read.
    let check: (@Sendable (inout Root) -> FactError?)?

    /// - Parameter check: a rule across fields, run after they are read; it may also complete the
    ///   value (an upcast converting an old field).
    public init(_ blank: Root, _ fields: [FactField<Root>], check: (@Sendable (inout Root) -> FactError?)? = nil) {
        self.blank = blank
        self.fields = fields
        self.names = fields.map(\.name)
        self.check = check
    }

    /// Reads every field, runs the check, and refuses fields the table does not name.
    public func read(_ r: inout PayloadReader) throws(FactError) -> Root {
        var root = blank
        // In place: `fields[i]` would copy the field out (its name, schema and closures retained
        // and released) for each field of each fact.
        try fields.withUnsafeBufferPointer { (fields) throws(FactError) in
            for i in fields.indices { try fields.lend(i) { (field) throws(FactError) in try field.read(&r, &root) } }
        }
        if let check, let e = check(&root) { throw FactError(field: r.name(e.field), message: e.message) }
        try r.finish(fields: names)
        return root
    }

    public func write(_ root: Root) -> JSONValue {
        var w = PayloadWriter()
        for f in fields { f.write(root, &w) }
        return w.value
    }

    public func field(named name: String) -> FactField<Root>? { fields.first { $0.name == name } }

    /// The same table without some fields (an older version, before they were added).
    func removing(_ names: Set<String>) -> FieldTable {
        FieldTable(blank, fields.filter { !names.contains($0.name) }, check: check)
    }

    /// The JSON Schema of the object: properties, required ones, and no others.
    var schema: [(String, JSONValue)] {
        [
            ("type", .string("object")),
            ("properties", .ordered(fields.map { ($0.name, $0.schema.property(required: $0.isRequired)) })),
            ("required", .array(fields.filter(\.isRequired).map { .string($0.name) })),
            ("additionalProperties", .bool(false)),
        ]
    }
}

extension JSONValue {
    /// An object whose members keep the order given (for published documents, not for payloads,
    /// which are canonical).
    static func ordered(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(members.map { JSONMember(key: $0.0, value: $0.1) })
    }
}

extension Timestamp {
    /// The value a reader starts from before a date field is read (never written).
    static let blank = Timestamp(microsecondsSince1970: 0)
}
