import Foundation
import LedgerCore
import LedgerFoldStore

// The fields this area's views write into the fold's snapshot (``BinaryFields``), beside the views:
// each writes its stored properties in declaration order and reads them back in the same order
// (the helpers are in Projections/SnapshotFields.swift). `SnapshotTests` checks every one against its
// `Codable` conformance, so a property added to a view and forgotten here fails a test. Changing what
// is written means raising `Projections.snapshotVersion`.

extension SubscriptionView: BinaryFields {
    public init(binary r: BinaryReader) throws {
        let channel: Channel = try r.raw()
        self.init(channel: channel, originalTransactionId: try r.string())
        periods = try r.array {
            Period(
                transactionId: try r.string(), productId: try r.string(), purchaseDate: try r.timestamp(),
                expiresDate: try r.timestamp(),
                revoked: try r.bool(), upgraded: try r.bool(), upgradedAt: try r.optionalTimestamp())
        }
        productId = try r.optionalString()
        pendingProductId = try r.optionalString()
        autoRenew = try r.optional { try r.bool() }
        failure = try r.optional {
            Failure(at: try r.timestamp(), graceUntil: try r.optionalTimestamp(), billingRetry: try r.bool())
        }
        expiry = try r.optional { Expiry(at: try r.timestamp(), reason: try r.open()) }
        pausedAt = try r.optionalTimestamp()
        userId = try r.optionalString()
        resumedAt = try r.optionalTimestamp()
        upgrades = try r.array { Upgrade(at: try r.timestamp(), toProductId: try r.string()) }
        linkedFrom = try r.optionalString()
        superseded = try r.optional { Supersession(at: try r.timestamp(), by: try r.string()) }
        onHoldAt = try r.optionalTimestamp()
        revokedAt = try r.optionalTimestamp()
        priceConsent = try r.optional { try r.open() }
        newPrice = try r.optional { try r.money() }
        graces = try r.array { Grace(at: try r.timestamp(), until: try r.timestamp()) }
        positions = try r.positions()
    }

    public func write(binary w: BinaryWriter) {
        w.raw(channel)
        w.string(originalTransactionId)
        w.array(periods) { p in
            w.string(p.transactionId)
            w.string(p.productId)
            w.timestamp(p.purchaseDate)
            w.timestamp(p.expiresDate)
            w.bool(p.revoked)
            w.bool(p.upgraded)
            w.timestamp(p.upgradedAt)
        }
        w.string(productId)
        w.string(pendingProductId)
        w.optional(autoRenew) { w.bool($0) }
        w.optional(failure) {
            w.timestamp($0.at)
            w.timestamp($0.graceUntil)
            w.bool($0.billingRetry)
        }
        w.optional(expiry) {
            w.timestamp($0.at)
            w.open($0.reason)
        }
        w.timestamp(pausedAt)
        w.string(userId)
        w.timestamp(resumedAt)
        w.array(upgrades) {
            w.timestamp($0.at)
            w.string($0.toProductId)
        }
        w.string(linkedFrom)
        w.optional(superseded) {
            w.timestamp($0.at)
            w.string($0.by)
        }
        w.timestamp(onHoldAt)
        w.timestamp(revokedAt)
        w.optional(priceConsent) { w.open($0) }
        w.optional(newPrice) { w.money($0) }
        w.array(graces) {
            w.timestamp($0.at)
            w.timestamp($0.until)
        }
        w.positions(positions)
    }
}
