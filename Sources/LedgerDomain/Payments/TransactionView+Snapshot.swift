import Foundation
import LedgerCore
import LedgerFoldStore

// The fields this area's views write into the fold's snapshot (``BinaryFields``), beside the views:
// each writes its stored properties in declaration order and reads them back in the same order
// (the helpers are in Projections/SnapshotFields.swift). `SnapshotTests` checks every one against its
// `Codable` conformance, so a property added to a view and forgotten here fails a test. Changing what
// is written means raising `Projections.snapshotVersion`.

extension TransferRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(
            fromUserId: try r.optionalString(), toUserId: try r.string(), orderId: try r.optionalString(),
            method: try r.open(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(fromUserId)
        w.string(toUserId)
        w.string(orderId)
        w.open(method)
        w.int(position)
    }
}

extension BindingRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(orderId: try r.optionalString(), userId: try r.string(), method: try r.raw(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(orderId)
        w.string(userId)
        w.raw(method)
        w.int(position)
    }
}

extension TransactionView: BinaryFields {
    public init(binary r: BinaryReader) throws {
        let transactionId = try r.string()
        self.init(transactionId: transactionId, key: try r.string())
        channel = try r.optional { try r.raw(Channel.self) }
        app = try r.optionalString()
        originalTransactionId = try r.optionalString()
        productId = try r.optionalString()
        quantity = try r.int()
        purchaseDate = try r.compactTimestamp()
        expiresDate = try r.compactTimestamp()
        price = try r.optional { try r.money() }
        accountToken = try r.optionalString()
        verifiedPosition = try r.compactInt()
        verifiedAt = try r.compactTimestamp()
        isRenewal = try r.bool()
        bindings = try r.few { try r.fields(BindingRecord.self) }
        reports = try r.few {
            Report(userId: try r.optionalString(), orderId: try r.optionalString(), position: try r.int())
        }
        noticeState = try r.raw()
        acknowledgedAt = try r.compactTimestamp()
        environment = try r.open()
        ownership = try r.open()
        grants = try r.few { try r.fields(GrantRecord.self) }
        upgraded = try r.bool()
        termsFromSubscription = try r.bool()
        positions = try r.positions()
        subscriptionUserId = try r.optionalString()
        extras = try r.array { try r.fields(Extras.self) }
    }

    public func write(binary w: BinaryWriter) {
        w.string(transactionId)
        w.string(key)
        w.optional(channel) { w.raw($0) }
        w.string(app)
        w.string(originalTransactionId)
        w.string(productId)
        w.int(quantity)
        w.timestamp(purchaseDate)
        w.timestamp(expiresDate)
        w.optional(price) { w.money($0) }
        w.string(accountToken)
        w.int(verifiedPosition)
        w.timestamp(verifiedAt)
        w.bool(isRenewal)
        w.few(bindings) { w.fields($0) }
        w.few(reports) {
            w.string($0.userId)
            w.string($0.orderId)
            w.int($0.position)
        }
        w.raw(noticeState)
        w.timestamp(acknowledgedAt)
        w.open(environment)
        w.open(ownership)
        w.few(grants) { w.fields($0) }
        w.bool(upgraded)
        w.bool(termsFromSubscription)
        w.positions(positions)
        w.string(subscriptionUserId)
        w.array(extras) { w.fields($0) }
    }
}

extension TransactionView.Extras: BinaryFields {
    init(binary r: BinaryReader) throws {
        failedVerifications = try r.array { .init(code: try r.int(), retryable: try r.bool(), position: try r.int()) }
        refunds = try r.array { try r.fields(RefundRecord.self) }
        reversals = try r.array { try r.fields(ReversalRecord.self) }
        refundPositions = try r.ints()
        storeRevokedPosition = try r.optionalInt()
        storeRevokedAt = try r.optionalTimestamp()
        voidedQuantity = try r.optionalInt()
        voidedPosition = try r.optionalInt()
        voidedAt = try r.optionalTimestamp()
        transfers = try r.array { try r.fields(TransferRecord.self) }
        revocations = try r.array { try r.fields(RevocationRecord.self) }
        upgradedAt = try r.optionalTimestamp()
        revokedAtByStore = try r.optionalTimestamp()
        voidedAtByStore = try r.optionalTimestamp()
    }

    func write(binary w: BinaryWriter) {
        w.array(failedVerifications) {
            w.int($0.code)
            w.bool($0.retryable)
            w.int($0.position)
        }
        w.array(refunds) { w.fields($0) }
        w.array(reversals) { w.fields($0) }
        w.ints(refundPositions)
        w.int(storeRevokedPosition)
        w.timestamp(storeRevokedAt)
        w.int(voidedQuantity)
        w.int(voidedPosition)
        w.timestamp(voidedAt)
        w.array(transfers) { w.fields($0) }
        w.array(revocations) { w.fields($0) }
        w.timestamp(upgradedAt)
        w.timestamp(revokedAtByStore)
        w.timestamp(voidedAtByStore)
    }
}
