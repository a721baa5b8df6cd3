import Foundation
import LedgerCore

// The views' own fields for the fold's snapshot (``BinaryFields``): each writes its stored
// properties in declaration order and reads them back in the same order. `SnapshotTests` checks
// every one against its `Codable` conformance (which lists every stored property by itself), so a
// property added to a view and forgotten here fails a test. Changing what is written means raising
// `Projections.snapshotVersion`.

extension BinaryWriter {
    func timestamp(_ t: Timestamp) { int(t.microseconds) }
    func timestamp(_ t: Timestamp?) { optional(t) { self.int($0.microseconds) } }
    func money(_ m: Money) {
        int(m.minorUnits)
        string(m.currency.code)
        int(Int64(m.currency.exponent))
        int(Int64(m.fraction))
    }
    func raw<E: RawRepresentable>(_ e: E) where E.RawValue == String { string(e.rawValue) }
    func open<E: OpenEnum>(_ e: E) { string(e.raw) }
    func string(_ s: String?) { optional(s) { self.string($0) } }
    func int(_ i: Int64?) { optional(i) { self.int($0) } }
    func ints(_ xs: [Int64]) { array(xs) { self.int($0) } }
    /// As ``array(_:_:)`` writes an array.
    func few<V>(_ xs: Few<V>, _ write: (V) -> Void) {
        count(xs.count)
        for x in xs { write(x) }
    }
    /// As ``ints(_:)`` writes an array of them.
    func positions(_ ps: PositionList) {
        count(ps.count)
        for p in ps { int(p) }
    }

    func entitlement(_ e: Entitlement) {
        switch e {
        case .coins(let n):
            int(0); int(n)
        case .feature(let f):
            int(1); string(f)
        case .subscription(let entitlement, let group, let periodDays, let rank):
            int(2); string(entitlement); string(group); int(periodDays); int(rank)
        case .period(let entitlement, let days):
            int(3); string(entitlement); int(days)
        }
    }
}

extension BinaryReader {
    func timestamp() throws -> Timestamp { Timestamp(microsecondsSince1970: try int()) }
    func optionalTimestamp() throws -> Timestamp? { try optional { try timestamp() } }
    func money() throws -> Money {
        let units = try int()
        let code = try string()
        let exponent = try int()
        guard let currency = Currency(code), Int64(currency.exponent) == exponent else { throw invalid("currency \(code.prefix(20)) with exponent \(exponent)") }
        let fraction = try int()
        guard fraction.magnitude < 1_000_000, let m = Money(minorUnits: units, fraction: fraction, currency: currency), m.fraction == fraction else {
            throw invalid("money \(units) with fraction \(fraction)")
        }
        return m
    }
    func raw<E: RawRepresentable>(_ type: E.Type = E.self) throws -> E where E.RawValue == String {
        let s = try string()
        guard let e = E(rawValue: s) else { throw invalid("\(E.self) \(s)") }
        return e
    }
    func open<E: OpenEnum>(_ type: E.Type = E.self) throws -> E { E(raw: try string()) }
    func optionalString() throws -> String? { try optional { try string() } }
    /// A UUID written as its text (as views kept it before they kept the UUID).
    func uuid() throws -> UUID {
        var text = try string()
        guard let u = text.withUTF8({ PayloadReader.uuid($0) }) else { throw invalid("UUID \(text.prefix(60))") }
        return u
    }
    func optionalInt() throws -> Int64? { try optional { try int() } }
    /// An optional integer or timestamp a view keeps compact (``CompactInt64``): `Int64.min`,
    /// which it cannot hold, is refused here rather than stop the fold.
    func compactInt() throws -> Int64? {
        let i = try optionalInt()
        guard i != .min else { throw invalid("Int64.min where a view keeps its optional values compact") }
        return i
    }
    func compactTimestamp() throws -> Timestamp? { try compactInt().map(Timestamp.init(microsecondsSince1970:)) }
    func ints() throws -> [Int64] { try array { try int() } }
    func few<V>(_ read: () throws -> V) throws -> Few<V> {
        var xs = Few<V>()
        for _ in 0..<(try count()) { xs.append(try read()) }
        return xs
    }
    func positions() throws -> PositionList {
        var ps = PositionList()
        for _ in 0..<(try count()) { ps.append(try int()) }
        return ps
    }

    func entitlement() throws -> Entitlement {
        switch try int() {
        case 0: return .coins(try int())
        case 1: return .feature(try string())
        case 2: return .subscription(entitlement: try string(), group: try string(), periodDays: try int(), rank: try int())
        case 3: return .period(entitlement: try string(), days: try int())
        case let tag: throw invalid("entitlement tag \(tag)")
        }
    }
}

extension OrderCreated: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(orderId: try r.string(), userId: try r.string(), channel: try r.raw(), productId: try r.string(),
                  price: try r.money(), accountToken: try r.optionalString(), app: try r.optionalString())
    }

    public func write(binary w: BinaryWriter) {
        w.string(orderId); w.string(userId); w.raw(channel); w.string(productId); w.money(price); w.string(accountToken); w.string(app)
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

extension TransferRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(fromUserId: try r.optionalString(), toUserId: try r.string(), orderId: try r.optionalString(),
                  method: try r.open(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(fromUserId); w.string(toUserId); w.string(orderId); w.open(method); w.int(position)
    }
}

extension BindingRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(orderId: try r.optionalString(), userId: try r.string(), method: try r.raw(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(orderId); w.string(userId); w.raw(method); w.int(position)
    }
}

extension RefundRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(refundId: try r.string(), amount: try r.money(), refundedAt: try r.timestamp(), position: try r.int(), loggedAt: try r.timestamp())
    }

    public func write(binary w: BinaryWriter) {
        w.string(refundId); w.money(amount); w.timestamp(refundedAt); w.int(position); w.timestamp(loggedAt)
    }
}

extension ReversalRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(refundId: try r.optionalString(), at: try r.timestamp(), position: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(refundId); w.timestamp(at); w.int(position)
    }
}

extension GrantRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(grantId: try r.string(), userId: try r.string(), orderId: try r.optionalString(), entitlement: try r.entitlement(),
                  quantity: try r.int(), position: try r.int(), at: try r.timestamp(), revokedAt: try r.compactInt(), revokedUnits: try r.int())
    }

    public func write(binary w: BinaryWriter) {
        w.string(grantId); w.string(userId); w.string(orderId); w.entitlement(entitlement)
        w.int(quantity); w.int(position); w.timestamp(at); w.int(revokedAt); w.int(revokedUnits)
    }
}

extension RevocationRecord: BinaryFields {
    public init(binary r: BinaryReader) throws {
        self.init(userId: try r.string(), reason: try r.open(), position: try r.int(), grantsRevoked: Int(try r.int()))
    }

    public func write(binary w: BinaryWriter) {
        w.string(userId); w.open(reason); w.int(position); w.int(Int64(grantsRevoked))
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
        appAccountToken = try r.optional { try r.uuid() }
        verifiedPosition = try r.compactInt()
        verifiedAt = try r.compactTimestamp()
        isRenewal = try r.bool()
        bindings = try r.few { try r.fields(BindingRecord.self) }
        reports = try r.few { Report(userId: try r.optionalString(), orderId: try r.optionalString(), position: try r.int()) }
        noticeState = try r.raw()
        acknowledgedAt = try r.compactTimestamp()
        environment = try r.open()
        ownership = try r.open()
        grants = try r.few { try r.fields(GrantRecord.self) }
        upgraded = try r.bool()
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
        w.string(appAccountToken?.lowercased)
        w.int(verifiedPosition)
        w.timestamp(verifiedAt)
        w.bool(isRenewal)
        w.few(bindings) { w.fields($0) }
        w.few(reports) { w.string($0.userId); w.string($0.orderId); w.int($0.position) }
        w.raw(noticeState)
        w.timestamp(acknowledgedAt)
        w.open(environment)
        w.open(ownership)
        w.few(grants) { w.fields($0) }
        w.bool(upgraded)
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
    }

    func write(binary w: BinaryWriter) {
        w.array(failedVerifications) { w.int($0.code); w.bool($0.retryable); w.int($0.position) }
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
    }
}

extension SubscriptionView: BinaryFields {
    public init(binary r: BinaryReader) throws {
        let channel: Channel = try r.raw()
        self.init(channel: channel, originalTransactionId: try r.string())
        periods = try r.array {
            Period(transactionId: try r.string(), productId: try r.string(), purchaseDate: try r.timestamp(), expiresDate: try r.timestamp(),
                   revoked: try r.bool(), upgraded: try r.bool(), upgradedAt: try r.optionalTimestamp())
        }
        productId = try r.optionalString()
        pendingProductId = try r.optionalString()
        autoRenew = try r.optional { try r.bool() }
        failure = try r.optional { Failure(at: try r.timestamp(), graceUntil: try r.optionalTimestamp(), billingRetry: try r.bool()) }
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
        positions = try r.positions()
    }

    public func write(binary w: BinaryWriter) {
        w.raw(channel)
        w.string(originalTransactionId)
        w.array(periods) { p in
            w.string(p.transactionId); w.string(p.productId); w.timestamp(p.purchaseDate); w.timestamp(p.expiresDate)
            w.bool(p.revoked); w.bool(p.upgraded); w.timestamp(p.upgradedAt)
        }
        w.string(productId)
        w.string(pendingProductId)
        w.optional(autoRenew) { w.bool($0) }
        w.optional(failure) { w.timestamp($0.at); w.timestamp($0.graceUntil); w.bool($0.billingRetry) }
        w.optional(expiry) { w.timestamp($0.at); w.open($0.reason) }
        w.timestamp(pausedAt)
        w.string(userId)
        w.timestamp(resumedAt)
        w.array(upgrades) { w.timestamp($0.at); w.string($0.toProductId) }
        w.string(linkedFrom)
        w.optional(superseded) { w.timestamp($0.at); w.string($0.by) }
        w.timestamp(onHoldAt)
        w.timestamp(revokedAt)
        w.optional(priceConsent) { w.open($0) }
        w.optional(newPrice) { w.money($0) }
        w.positions(positions)
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
        periodGrants = try r.array { PeriodGrant(entitlement: try r.string(), anchor: try r.timestamp(), days: try r.int(), grantId: try r.string()) }
        negativeSince = try r.optionalInt()
        negativeCause = try r.optionalString()
        positions = try r.positions()
    }

    public func write(binary w: BinaryWriter) {
        w.string(userId)
        w.int(coinsCredited)
        w.int(coinsSpent)
        w.int(coinsClawedBack)
        w.array(features.sorted { $0.key < $1.key }) { w.string($0.key); w.int($0.value) }
        w.array(periodGrants) { w.string($0.entitlement); w.timestamp($0.anchor); w.int($0.days); w.string($0.grantId) }
        w.int(negativeSince)
        w.string(negativeCause)
        w.positions(positions)
    }
}
