import LedgerCore
import LedgerLog
import LedgerDomain
import LedgerPostgres

/// The read models in PostgreSQL: which tables each projection owns and how a view becomes a row.
public enum ReadModel: String, CaseIterable, Sendable, Comparable {
    case orders, transactions, subscriptions, entitlements, anomalies

    public static func < (a: ReadModel, b: ReadModel) -> Bool { a.rawValue < b.rawValue }

    /// The tables holding this projection, with their key columns.
    public var tables: [(name: String, key: [String])] {
        switch self {
        case .orders: return [("rm_orders", ["order_id"])]
        case .transactions: return [("rm_transactions", ["transaction_key"])]
        case .subscriptions: return [("rm_subscriptions", ["subscription_id"])]
        case .entitlements: return [("rm_users", ["user_id"]), ("rm_entitlement_periods", ["user_id", "entitlement"])]
        case .anomalies: return [("rm_anomalies", ["position", "kind", "detail"])]
        }
    }

    public var summary: String {
        switch self {
        case .orders: return "order status, binding method, product mismatch"
        case .transactions: return "owed versus granted per store transaction"
        case .subscriptions: return "subscription status and expiry"
        case .entitlements: return "coin balances, non-consumables, entitlement periods"
        case .anomalies: return "facts the projections could not apply"
        }
    }
}

/// Writes views as rows of `COPY ... FROM STDIN` (text format).
struct RowWriter {
    var out: [UInt8] = []
    var first = true

    @inline(__always)
    mutating func separate() {
        if !first { out.append(0x09) }
        first = false
    }

    mutating func null() {
        separate()
        CopyText.appendNull(into: &out)
    }

    mutating func field(_ s: String?) {
        guard let s else { return null() }
        separate()
        CopyText.appendEscaped(s, into: &out)
    }

    /// Decimal digits, written straight into the row (no String in between).
    mutating func digits(_ value: Int64) { DecimalText.append(value, to: &out) }

    mutating func field(_ i: Int64?) {
        guard let i else { return null() }
        separate()
        digits(i)
    }
    mutating func field(_ b: Bool?) {
        guard let b else { return null() }
        separate()
        out.append(b ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }
    mutating func field(_ t: Timestamp?) { field(t?.iso8601) }

    /// A bigint[] literal: `{1,2,3}`.
    mutating func positions<Positions: Sequence<Int64>>(_ p: Positions) {
        separate()
        out.append(UInt8(ascii: "{"))
        for (k, v) in p.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            digits(v)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A text[] literal with every element quoted (`{"a","b\"c"}`), then escaped for COPY text:
    /// a backslash in the value becomes `\\` in the literal and `\\\\` in the row.
    mutating func texts(_ values: [String]) {
        separate()
        out.append(UInt8(ascii: "{"))
        for (k, v) in values.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for b in v.utf8 {
                switch b {
                // A backslash and a quote are escaped in the array literal, then again for COPY.
                case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C, 0x5C, 0x5C])
                case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x5C, UInt8(ascii: "\"")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                default: out.append(b)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
    }

    mutating func endRow() {
        out.append(0x0A)
        first = true
    }
}

extension Projections {
    func orderRow(_ o: OrderView, into w: inout RowWriter) {
        w.field(o.orderId)
        w.field(o.userId)
        w.field(o.channel?.rawValue)
        w.field(o.productId)
        w.field(o.price?.minorUnits)
        w.field(o.price?.currency.code)
        w.field(o.status.rawValue)
        w.field(o.launchAttempts)
        w.field(o.lastCallbackState?.raw)
        w.field(o.transactionId.map(storeTransactionId(key:)))
        w.field(o.bindingMethod?.rawValue)
        w.field(o.verifiedProductId)
        w.field(o.productMismatch)
        w.field(o.refunded?.minorUnits)
        w.field(o.closeReason?.raw)
        w.field(o.closedAfterPayment)
        w.field(o.positions.last ?? 0)
        w.positions(o.positions)
        w.endRow()
    }

    func transactionRow(_ t: TransactionView, into w: inout RowWriter) {
        let og = owedGranted(t)
        w.field(t.transactionId)
        w.field(t.channel?.rawValue)
        w.field(t.originalTransactionId)
        w.field(t.userId)
        w.field(t.orderId)
        w.field(t.productId)
        w.field(t.quantity)
        w.field(t.purchaseDate)
        w.field(t.expiresDate)
        w.field(t.price?.minorUnits)
        w.field(t.price?.currency.code)
        w.field(t.verifiedPosition)
        w.field(Int64(t.failedVerifications.count))
        w.field(t.isRenewal)
        w.field(t.bindings.first?.method.rawValue)
        w.texts(t.bindings.map(\.userId))
        w.texts(t.reports.compactMap(\.userId))
        w.field(t.refundState.rawValue)
        w.field(t.refundedAmount?.minorUnits)
        w.field(t.upgraded)
        w.field(og.unit)
        w.field(og.owedUnits)
        w.field(og.grantedUnits)
        w.field(og.revokedUnits)
        w.field(og.status.rawValue)
        w.field(t.positions.last ?? 0)
        w.positions(t.positions)
        w.field(t.app)
        w.field(t.key)
        w.endRow()
    }

    func subscriptionRow(_ s: SubscriptionView, into w: inout RowWriter) {
        w.field(s.key)
        w.field(s.channel.rawValue)
        w.field(s.originalTransactionId)
        w.field(s.userId)
        w.field(s.productId)
        w.field(s.pendingProductId)
        w.field(s.status.description)
        w.field(s.expiresAt)
        w.field(s.autoRenew)
        w.field(s.status == .grace ? s.failure?.graceUntil : nil)
        w.field(Int64(s.periods.count))
        w.field(s.positions.last ?? 0)
        w.positions(s.positions)
        w.field(s.accessUntil)
        w.field(s.priceConsent?.raw)
        w.endRow()
    }

    func userRow(_ u: UserView, into w: inout RowWriter) {
        precondition(keepsUserPositions, "a fold without users' positions (an audit's) has no read models")
        w.field(u.userId)
        w.field(u.coinsCredited)
        w.field(u.coinsSpent)
        w.field(u.coinsClawedBack)
        w.field(u.coinBalance)
        w.field(u.negativeSince)
        w.texts(u.ownedFeatures)
        w.field(u.positions.last ?? 0)
        w.positions(u.positions)
        w.endRow()
    }

    func periodRows(_ u: UserView, into w: inout RowWriter) {
        for p in u.periods {
            w.field(u.userId)
            w.field(p.entitlement)
            w.field(p.totalDays)
            w.field(p.startsAt)
            w.field(p.endsAt)
            w.endRow()
        }
    }

    static func anomalyRow(_ a: Anomaly, into w: inout RowWriter) {
        w.field(a.position)
        w.field(a.kind)
        w.field(a.detail)
        w.endRow()
    }
}
