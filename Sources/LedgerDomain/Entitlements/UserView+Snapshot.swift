import Foundation
import LedgerCore
import LedgerFoldStore

// The fields this area's views write into the fold's snapshot (``BinaryFields``), beside the views:
// each writes its stored properties in declaration order and reads them back in the same order
// (the helpers are in Projections/SnapshotFields.swift). `SnapshotTests` checks every one against its
// `Codable` conformance, so a property added to a view and forgotten here fails a test. Changing what
// is written means raising `Projections.snapshotVersion`.

extension GrantRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(
            grantId: try r.string(), userId: try r.string(), orderId: try r.optionalString(),
            entitlement: try r.entitlement(),
            quantity: try r.int(), position: try r.int(), at: try r.timestamp(), revokedAt: try r.compactInt(),
            revokedUnits: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(grantId)
        w.string(userId)
        w.string(orderId)
        w.entitlement(entitlement)
        w.int(quantity)
        w.int(position)
        w.timestamp(at)
        w.int(revokedAt)
        w.int(revokedUnits)
    }
}

extension UserView: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(userId: try r.string())
        coinsCredited = try r.int()
        coinsSpent = try r.int()
        coinsClawedBack = try r.int()
        let features = try r.array { (try r.string(), try r.int()) }
        self.features = Dictionary(features, uniquingKeysWith: { _, last in last })
        periodGrants = try r.array {
            PeriodGrant(
                entitlement: try r.string(), anchor: try r.timestamp(), days: try r.int(), grantId: try r.string())
        }
        negativeSince = try r.optionalInt()
        negativeCause = try r.optionalString()
        positions = try r.positions()
    }

    public func write(binary w: BinaryWriter) {
        w.string(userId)
        w.int(coinsCredited)
        w.int(coinsSpent)
        w.int(coinsClawedBack)
        w.array(features.sorted { $0.key < $1.key }) {
            w.string($0.key)
            w.int($0.value)
        }
        w.array(periodGrants) {
            w.string($0.entitlement)
            w.timestamp($0.anchor)
            w.int($0.days)
            w.string($0.grantId)
        }
        w.int(negativeSince)
        w.string(negativeCause)
        w.positions(positions)
    }
}
