import LedgerCore

/// How revenue is bucketed: by UTC day (`2026-03-02`) or month (`2026-03`).
public enum RevenueBucket: String, CaseIterable, Sendable, Hashable {
    case day, month

    func label(_ t: Timestamp) -> String { String(t.iso8601.prefix(self == .day ? 10 : 7)) }
}

/// Money and counts of one side (the ledger, or the statements) in one currency.
public struct RevenueTotals: Hashable, Sendable {
    public var sales: Int64 = 0
    /// What buyers paid (minor units).
    public var gross: Int64 = 0
    public var refunds: Int64 = 0
    /// What was returned (minor units).
    public var refunded: Int64 = 0
    /// The stores' fees (minor units); nil when no statement gave a fee.
    public var fees: Int64?
    /// What the store signed below whole minor units (inexact amounts), in millionths of a minor
    /// unit, beside `gross` and `refunded` (whole units carried into them): the exact totals are
    /// ``exactGross`` and ``exactRefunded``.
    public var grossFraction: Int64 = 0
    public var refundedFraction: Int64 = 0
    /// The fees' rest below a minor unit (WeChat prints fees to five decimals of a yuan), in
    /// millionths of a minor unit, from 0 up to a million: the exact total is ``exactFees``.
    public var feesFraction: Int64 = 0

    public init() {}

    public var net: Int64 { gross.subtractingSaturated(refunded) }

    /// `gross` with its fraction, exactly (whole minor units carried).
    public func exactGross(_ c: Currency) -> Money {
        Money(minorUnits: gross, fraction: grossFraction, currency: c) ?? Money(minorUnits: gross, currency: c)
    }
    public func exactRefunded(_ c: Currency) -> Money {
        Money(minorUnits: refunded, fraction: refundedFraction, currency: c) ?? Money(minorUnits: refunded, currency: c)
    }
    public func exactNet(_ c: Currency) -> Money {
        exactGross(c).adding(exactRefunded(c).negated) ?? Money(minorUnits: net, currency: c)
    }

    mutating func addGross(_ m: Money) { Self.add(m.minorUnits, Int64(m.fraction), to: &gross, &grossFraction) }

    mutating func addRefunded(_ m: Money) {
        Self.add(m.minorUnits, Int64(m.fraction), to: &refunded, &refundedFraction)
    }

    /// Adds whole minor units and millionths, carrying whole units out of the millionths, so that
    /// `whole` is always the exact total's whole minor units.
    static func add(_ units: Int64, _ millionths: Int64, to whole: inout Int64, _ rest: inout Int64) {
        whole = whole.addingSaturated(units)
        rest += millionths
        let carry = rest / 1_000_000
        whole = whole.addingSaturated(carry)
        rest -= carry * 1_000_000
    }

    /// Adds a fee exactly (`negative`: given back), its rest below a minor unit carried.
    mutating func addFee(_ m: Money, negative: Bool) {
        let units = negative ? -m.minorUnits : m.minorUnits, rest = negative ? -Int64(m.fraction) : Int64(m.fraction)
        var whole = fees ?? 0
        Self.add(units, rest, to: &whole, &feesFraction)
        if feesFraction < 0 {
            feesFraction += 1_000_000
            whole = whole.addingSaturated(-1)
        }
        fees = whole
    }

    /// `fees` with its fraction, exactly; nil when no statement gave a fee.
    public func exactFees(_ c: Currency) -> Money? {
        fees.map { Money(minorUnits: $0, fraction: feesFraction, currency: c) ?? Money(minorUnits: $0, currency: c) }
    }
}

/// One row of the revenue report: a period, a channel and a currency (never summed across
/// currencies), the ledger's own figures and the statements' beside them.
public struct RevenueRow: Hashable, Sendable, Comparable {
    public var period: String
    public var channel: Channel
    public var currency: Currency
    public var ledger = RevenueTotals()
    public var statements = RevenueTotals()

    public init(period: String, channel: Channel, currency: Currency) {
        self.period = period
        self.channel = channel
        self.currency = currency
    }

    /// Whether the ledger ties to the statements: the same sales, gross, refunds and refunded, exactly.
    public var ties: Bool {
        ledger.sales == statements.sales && ledger.exactGross(currency) == statements.exactGross(currency)
            && ledger.refunds == statements.refunds
            && ledger.exactRefunded(currency) == statements.exactRefunded(currency)
    }

    public static func < (a: RevenueRow, b: RevenueRow) -> Bool {
        (a.period, a.currency.code, a.channel.rawValue) < (b.period, b.currency.code, b.channel.rawValue)
    }
}

public enum Revenue {
    /// Revenue per period, channel and currency from a fold of the log (as of its position).
    ///
    /// Ledger: each verified payment or renewal with revenue (production, not family-shared, with
    /// a price, and not free) counts in gross at its purchase date; each standing refund counts at its store
    /// date; a Google void with no refund counts its price (or its share by quantity) at the
    /// void. Statements: each sale and refund line naming a transaction (one per subject, however
    /// many statements list it), sandbox and family-shared lines and free sales left out; fees from the lines'
    /// fee and from fee lines. `from` and `to` bound the time, `[from, to)`. Sorted, deterministic.
    public static func compute(
        _ p: Projections, by bucket: RevenueBucket, from: Timestamp? = nil, to: Timestamp? = nil
    ) -> [RevenueRow] {
        var rows: [String: RevenueRow] = [:]
        func inRange(_ t: Timestamp) -> Bool { (from.map { t >= $0 } ?? true) && (to.map { t < $0 } ?? true) }
        func update(_ t: Timestamp, _ ch: Channel, _ cur: Currency, _ body: (inout RevenueRow) -> Void) {
            guard inRange(t) else { return }
            let label = bucket.label(t)
            let key = label + "|" + ch.rawValue + "|" + cur.code
            body(&rows[key, default: RevenueRow(period: label, channel: ch, currency: cur)])
        }
        for t in p.transactions.values {
            guard t.verified, let ch = t.channel, let price = t.revenue, let at = t.purchaseDate ?? t.verifiedAt else {
                continue
            }
            // A free trial moved no money: no statement lists it.
            if price.millionths != 0 {
                update(at, ch, price.currency) {
                    $0.ledger.sales += 1
                    $0.ledger.addGross(price)
                }
            }
            for r in t.standingRefunds {
                update(r.refundedAt, ch, r.amount.currency) {
                    $0.ledger.refunds += 1
                    $0.ledger.addRefunded(r.amount)
                }
            }
            guard t.refunds.isEmpty else { continue }
            // Voids at the store's own dates: a partial one's share on its day, and a whole one
            // after it the rest on its own.
            var voided: Money?
            if let at = t.voidedAtByStore ?? t.voidedAt, let q = t.voidedQuantity, t.quantity > 0 {
                let share = price.share(q, t.quantity)
                voided = share
                update(at, ch, price.currency) {
                    $0.ledger.refunds += 1
                    $0.ledger.addRefunded(share)
                }
            }
            if let at = t.revokedAtByStore ?? t.storeRevokedAt, t.storeRevokedPosition != nil, ch == .googleplay {
                let rest = voided.flatMap { price.adding($0.negated) } ?? price
                update(at, ch, price.currency) {
                    $0.ledger.refunds += 1
                    $0.ledger.addRefunded(rest)
                }
            }
        }
        for record in p.statements.lines.values {
            let l = record.line
            // A line of a kind the ledger does not know feeds no figure.
            guard l.isRevenue, l.kind != .other, let amount = l.amount else { continue }
            // A free trial (an App Store history lists it at 0) moved no money, as on the ledger's side.
            if l.kind == .sale, amount.millionths == 0, l.fee.map({ $0.millionths == 0 }) ?? true { continue }
            update(l.at, l.channel, amount.currency) { row in
                switch l.kind {
                case .sale:
                    row.statements.sales += 1
                    row.statements.addGross(amount)
                case .refund:
                    row.statements.refunds += 1
                    row.statements.addRefunded(amount)
                case .fee: row.statements.addFee(amount, negative: false)
                case .feeRefund: row.statements.addFee(amount, negative: true)
                case .other: break
                }
                if let fee = l.fee, fee.currency == amount.currency {
                    row.statements.addFee(fee, negative: l.kind == .refund)
                }
            }
        }
        return rows.values.sorted()
    }

    /// Totals per currency (and channel) over every period: what the report's summary shows.
    public static func totals(_ rows: [RevenueRow]) -> [RevenueRow] {
        var out: [String: RevenueRow] = [:]
        for r in rows {
            let key = r.currency.code + "|" + r.channel.rawValue
            var t = out[key] ?? RevenueRow(period: "total", channel: r.channel, currency: r.currency)
            t.ledger.add(r.ledger)
            t.statements.add(r.statements)
            out[key] = t
        }
        return out.values.sorted()
    }
}

extension RevenueTotals {
    mutating func add(_ o: RevenueTotals) {
        sales += o.sales
        refunds += o.refunds
        Self.add(o.gross, o.grossFraction, to: &gross, &grossFraction)
        Self.add(o.refunded, o.refundedFraction, to: &refunded, &refundedFraction)
        if let f = o.fees {
            var whole = fees ?? 0
            Self.add(f, o.feesFraction, to: &whole, &feesFraction)
            fees = whole
        }
    }
}
