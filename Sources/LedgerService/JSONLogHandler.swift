import Foundation
import LedgerCore
import Logging

/// One JSON object per line on standard error (`ledger serve --log-format json`), for a log
/// collector: `time` (UTC, milliseconds), `level`, `logger`, `message`, then the metadata, the
/// request's id as `requestId` on every line logged while a request is answered.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let write: @Sendable (String) -> Void

    public init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes a line to standard error in one call, so lines from several tasks never interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .stringConvertible(let c): .string(c.description)
        case .array(let a): .array(a.map(json))
        case .dictionary(let d): .makeObject(d.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) })
        }
    }

    /// Metadata keys as a log collector reads them (Hummingbird's request id as `requestId`).
    static func key(_ name: String) -> String { name == "hb.request.id" ? "requestId" : name }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        // time, level, logger and message first, in that order; then the metadata by name.
        var members: [(String, JSONValue)] = [
            ("time", .string(Self.time.format(Date()))), ("level", .string(event.level.rawValue)),
            ("logger", .string(label)), ("message", .string(event.message.description)),
        ]
        members += merged.sorted { $0.key < $1.key }.map { (Self.key($0.key), Self.json($0.value)) }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, (name, value)) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(JSONValue.string(name).compactText.utf8)
            out.append(UInt8(ascii: ":"))
            out += Array(value.compactText.utf8)
        }
        out += Array("}\n".utf8)
        write(String(decoding: out, as: UTF8.self))
    }

    static let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
