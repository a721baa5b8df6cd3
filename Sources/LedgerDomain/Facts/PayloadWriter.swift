import Foundation
import LedgerCore

/// Builds a payload object; nil values are left out.
public struct PayloadWriter {
    var members: [(String, JSONValue)] = []
    public init() {}
    public mutating func set(_ key: String, _ value: String?) { if let value { members.append((key, .string(value))) } }
    public mutating func set(_ key: String, _ value: Int64?) { if let value { members.append((key, .int(value))) } }
    public mutating func set(_ key: String, _ value: Int?) {
        if let value { members.append((key, .int(Int64(value)))) }
    }
    public mutating func set(_ key: String, _ value: Bool?) { if let value { members.append((key, .bool(value))) } }
    public mutating func set(_ key: String, _ value: Timestamp?) {
        if let value { members.append((key, .string(value.iso8601))) }
    }
    public mutating func set(_ key: String, _ value: UUID?) {
        if let value { members.append((key, .string(value.lowercased))) }
    }
    public mutating func set(_ key: String, _ value: JSONValue?) { if let value { members.append((key, value)) } }
    public mutating func set<E: OpenEnum>(_ key: String, _ value: E?) {
        if let value { members.append((key, .string(value.raw))) }
    }
    public mutating func set<E: RawRepresentable>(_ key: String, _ value: E?) where E.RawValue == String {
        if let value { members.append((key, .string(value.rawValue))) }
    }
    public var value: JSONValue { .makeObject(members) }
}
