import Foundation
import LedgerCore
import LedgerFoldStore

// The fields this area's views write into the fold's snapshot (``BinaryFields``), beside the views:
// each writes its stored properties in declaration order and reads them back in the same order
// (the helpers are in Projections/SnapshotFields.swift). `SnapshotTests` checks every one against its
// `Codable` conformance, so a property added to a view and forgotten here fails a test. Changing what
// is written means raising `Projections.snapshotVersion`.

extension RefundRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(
            refundId: try r.string(), amount: try r.money(), refundedAt: try r.timestamp(), position: try r.int(),
            loggedAt: try r.timestamp())
    }

    public func write(binary w: BinaryWriter) {
        w.string(refundId)
        w.money(amount)
        w.timestamp(refundedAt)
        w.int(position)
        w.timestamp(loggedAt)
    }
}

extension ReversalRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(refundId: try r.optionalString(), at: try r.timestamp(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(refundId)
        w.timestamp(at)
        w.int(position)
    }
}

extension RevocationRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(userId: try r.string(), reason: try r.open(), position: try r.int(), grantsRevoked: Int(try r.int()))
    }

    public func write(binary w: BinaryWriter) {
        w.string(userId)
        w.open(reason)
        w.int(position)
        w.int(Int64(grantsRevoked))
    }
}
