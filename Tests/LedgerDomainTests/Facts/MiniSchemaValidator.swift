import Foundation
import LedgerCore

/// A minimal JSON Schema (draft 2020-12) validator for exactly the keywords `schema/facts` uses:
/// type, properties, required, additionalProperties (false), enum, const, minimum, maximum,
/// minLength, maxLength, pattern, format (date-time, uuid), $ref, $defs and oneOf. Annotations
/// (title, description, $schema, $id, x-...) are ignored; any other keyword is a schema problem, so
/// the published schemas cannot silently rely on something this validator does not check.
struct MiniSchemaValidator: Sendable {
    /// One reason an instance does not match, at a dotted instance path (`price.currency`).
    struct Failure: Hashable, Sendable, CustomStringConvertible {
        var path: String
        var message: String
        var description: String { path.isEmpty ? message : "\(path): \(message)" }
    }

    /// The schema itself is unusable: an unsupported keyword, a dangling `$ref`, a bad pattern.
    struct SchemaProblem: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static let applicators: Set<String> = [
        "type", "properties", "required", "additionalProperties", "enum", "const", "minimum", "maximum",
        "minLength", "maxLength", "pattern", "format", "$ref", "oneOf",
    ]
    static let annotations: Set<String> = ["$schema", "$id", "$defs", "title", "description"]

    /// Schema documents by file name (`common.schema.json`).
    let documents: [String: JSONValue]

    init(documents: [String: JSONValue]) { self.documents = documents }

    /// Loads every `*.schema.json` in `folder`.
    init(folder: URL) throws {
        var docs: [String: JSONValue] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasSuffix(".schema.json") {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            docs[name] = try JSONValue.parse(text)
        }
        self.documents = docs
    }

    /// Validates `instance` against the document `file`; an empty result means it is valid.
    func validate(_ instance: JSONValue, file: String) throws(SchemaProblem) -> [Failure] {
        guard let root = documents[file] else { throw SchemaProblem(message: "no schema document \(file)") }
        return try validate(instance, schema: root, document: file, path: "")
    }

    func validate(
        _ value: JSONValue, schema: JSONValue, document: String, path: String
    ) throws(SchemaProblem) -> [Failure] {
        if case .bool(let b) = schema { return b ? [] : [Failure(path: path, message: "false schema")] }
        guard case .object(let keywords) = schema else {
            throw SchemaProblem(message: "\(document): a schema must be an object (got \(schema.typeName))")
        }
        var failures: [Failure] = []
        func fail(_ message: String, at p: String? = nil) {
            failures.append(Failure(path: p ?? path, message: message))
        }
        func child(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

        for keyword in keywords {
            let k = keyword.key, arg = keyword.value
            if k.hasPrefix("x-") || Self.annotations.contains(k) { continue }
            guard Self.applicators.contains(k) else {
                throw SchemaProblem(message: "\(document): unsupported keyword \(k)")
            }
            switch k {
            case "$ref":
                guard case .string(let ref) = arg else {
                    throw SchemaProblem(message: "\(document): $ref must be a string")
                }
                let (target, targetDocument) = try resolve(ref, from: document)
                failures += try validate(value, schema: target, document: targetDocument, path: path)
            case "type":
                let names: [String]
                switch arg {
                case .string(let s): names = [s]
                case .array(let items): names = items.compactMap(\.stringValue)
                default: throw SchemaProblem(message: "\(document): type must be a string or an array")
                }
                if !names.contains(where: { Self.has(value, type: $0) }) {
                    fail("must be of type \(names.joined(separator: " or ")) (got \(value.typeName))")
                }
            case "enum":
                guard case .array(let options) = arg else {
                    throw SchemaProblem(message: "\(document): enum must be an array")
                }
                if !options.contains(value) {
                    fail("must be one of the enumerated values (got \(value.canonicalText.prefix(40)))")
                }
            case "const":
                if value != arg { fail("must be \(arg.canonicalText)") }
            case "minimum", "maximum":
                guard case .int(let bound) = arg else {
                    throw SchemaProblem(message: "\(document): \(k) must be an integer")
                }
                if case .int(let i) = value {
                    if k == "minimum", i < bound { fail("must be at least \(bound)") }
                    if k == "maximum", i > bound { fail("must be at most \(bound)") }
                }
            case "minLength", "maxLength":
                guard case .int(let bound) = arg else {
                    throw SchemaProblem(message: "\(document): \(k) must be an integer")
                }
                if case .string(let s) = value {
                    // JSON Schema counts characters as Unicode code points.
                    let n = Int64(s.unicodeScalars.count)
                    if k == "minLength", n < bound { fail("must be at least \(bound) characters") }
                    if k == "maxLength", n > bound { fail("must be at most \(bound) characters") }
                }
            case "pattern":
                guard case .string(let pattern) = arg else {
                    throw SchemaProblem(message: "\(document): pattern must be a string")
                }
                if case .string(let s) = value {
                    let regex: NSRegularExpression
                    do { regex = try NSRegularExpression(pattern: pattern) } catch {
                        throw SchemaProblem(message: "\(document): bad pattern \(pattern): \(error)")
                    }
                    // Unanchored search, as ECMA-262 `test` does; the published patterns anchor themselves.
                    if regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
                        fail("must match \(pattern)")
                    }
                }
            case "format":
                guard case .string(let format) = arg else {
                    throw SchemaProblem(message: "\(document): format must be a string")
                }
                if case .string(let s) = value {
                    switch format {
                    case "date-time": if !Self.isDateTime(s) { fail("must be an RFC 3339 date-time") }
                    case "uuid": if !Self.isUUID(s) { fail("must be a UUID") }
                    default: throw SchemaProblem(message: "\(document): unsupported format \(format)")
                    }
                }
            case "properties":
                guard case .object(let properties) = arg else {
                    throw SchemaProblem(message: "\(document): properties must be an object")
                }
                if case .object(let members) = value {
                    for m in members {
                        if let p = properties.first(where: { $0.key.utf8.elementsEqual(m.key.utf8) }) {
                            failures += try validate(m.value, schema: p.value, document: document, path: child(m.key))
                        }
                    }
                }
            case "required":
                guard case .array(let names) = arg else {
                    throw SchemaProblem(message: "\(document): required must be an array")
                }
                if case .object(let members) = value {
                    for case .string(let name) in names
                    where !members.contains(where: { $0.key.utf8.elementsEqual(name.utf8) }) {
                        fail("is required", at: child(name))
                    }
                }
            case "additionalProperties":
                guard case .bool(false) = arg else {
                    throw SchemaProblem(message: "\(document): only additionalProperties: false is supported")
                }
                if case .object(let members) = value {
                    let known = Set(Self.keys(schema["properties"]).map { Array($0.utf8) })
                    for m in members where !known.contains(Array(m.key.utf8)) {
                        fail("is not an allowed property", at: child(m.key))
                    }
                }
            case "oneOf":
                guard case .array(let branches) = arg, !branches.isEmpty else {
                    throw SchemaProblem(message: "\(document): oneOf must be a non-empty array")
                }
                var matching = 0
                for branch in branches {
                    if try validate(value, schema: branch, document: document, path: path).isEmpty { matching += 1 }
                }
                if matching != 1 { fail("must match exactly one oneOf branch (matches \(matching))") }
            default:
                throw SchemaProblem(message: "\(document): unsupported keyword \(k)")
            }
        }
        return failures
    }

    /// Resolves `file#/json/pointer` or `#/json/pointer` relative to `document`.
    func resolve(_ ref: String, from document: String) throws(SchemaProblem) -> (JSONValue, String) {
        let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let file = parts[0].isEmpty ? document : parts[0]
        guard var node = documents[file] else {
            throw SchemaProblem(message: "\(document): $ref \(ref) names no loaded document")
        }
        let pointer = parts.count > 1 ? parts[1] : ""
        for token in pointer.split(separator: "/", omittingEmptySubsequences: true) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard let next = node[key] else {
                throw SchemaProblem(message: "\(document): $ref \(ref) does not resolve")
            }
            node = next
        }
        return (node, file)
    }

    static func keys(_ value: JSONValue?) -> [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.key)
    }

    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("integer", .int), ("number", .int), ("string", .string),
            ("array", .array), ("object", .object):
            return true
        default: return false
        }
    }

    /// RFC 3339 `date-time`: full-date "T" full-time, with calendar ranges (leap years) checked.
    static func isDateTime(_ s: String) -> Bool {
        let pattern =
            #"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let m = regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s))
        else { return false }
        func group(_ i: Int) -> Int? {
            guard let r = Range(m.range(at: i), in: s) else { return nil }
            return Int(s[r])
        }
        guard let y = group(1), let mo = group(2), let d = group(3), let h = group(4), let mi = group(5),
            let sec = group(6)
        else { return false }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(mo), d >= 1, d <= days[mo - 1], h <= 23, mi <= 59, sec <= 60 else { return false }
        if let oh = group(9), let om = group(10) { return oh <= 23 && om <= 59 }
        return true
    }

    /// RFC 4122 text form: 8-4-4-4-12 hexadecimal digits, either case.
    static func isUUID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                if c != UInt8(ascii: "-") { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)) {
                return false
            }
        }
        return true
    }
}
