import Foundation
import LedgerCore
import LedgerFoldStore

// The fields this area's views write into the fold's snapshot (``BinaryFields``), beside the views:
// each writes its stored properties in declaration order and reads them back in the same order
// (the helpers are in Projections/SnapshotFields.swift). `SnapshotTests` checks every one against its
// `Codable` conformance, so a property added to a view and forgotten here fails a test. Changing what
// is written means raising `Projections.snapshotVersion`.

extension OrderCreated: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(
            orderId: try r.string(), userId: try r.string(), channel: try r.raw(), productId: try r.string(),
            price: try r.money(), accountToken: try r.optionalString(), app: try r.optionalString())
    }

    public func write(binary w: BinaryWriter) {
        w.string(orderId)
        w.string(userId)
        w.raw(channel)
        w.string(productId)
        w.money(price)
        w.string(accountToken)
        w.string(app)
    }
}

extension OrderView: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(orderId: try r.string())
        created = try r.optional { try r.fields(OrderCreated.self) }
        launchAttempts = try r.int()
        lastCallbackState = try r.optional { try r.open(CallbackState.self) }
        transactionId = try r.optionalString()
        bindingMethod = try r.optional { try r.raw(BindingMethod.self) }
        verifiedProductId = try r.optionalString()
        paid = try r.bool()
        netGrants = try r.int()
        launchedAt = try r.compactTimestamp()
        positions = try r.positions()
        extras = try r.array { try r.fields(Extras.self) }
    }

    public func write(binary w: BinaryWriter) {
        w.string(orderId)
        w.optional(created) { w.fields($0) }
        w.int(launchAttempts)
        w.optional(lastCallbackState) { w.open($0) }
        w.string(transactionId)
        w.optional(bindingMethod) { w.raw($0) }
        w.string(verifiedProductId)
        w.bool(paid)
        w.int(netGrants)
        w.timestamp(launchedAt)
        w.positions(positions)
        w.array(extras) { w.fields($0) }
    }
}

extension OrderView.Extras: BinaryFields {
    init(binary r: BinaryReader) throws {
        refunded = try r.optional { try r.money() }
        closeReason = try r.optional { try r.open(CloseReason.self) }
        closedAfterPayment = try r.bool()
    }

    func write(binary w: BinaryWriter) {
        w.optional(refunded) { w.money($0) }
        w.optional(closeReason) { w.open($0) }
        w.bool(closedAfterPayment)
    }
}
