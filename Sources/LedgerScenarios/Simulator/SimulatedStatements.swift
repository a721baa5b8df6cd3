import LedgerCore
import LedgerDomain

/// What the stores would publish for a simulated history: every production sale and every
/// standing refund, per channel, as statement lines (WeChat Pay's daily trade bills, the App Store
/// transaction history, Google Play's earnings report and voided purchases), with reconciliation
/// faults injected into the statements and their ground truth.
///
/// Faults (rates from the ``FaultSpec``, drawn per production purchase with money, not refunded,
/// from a random stream of their own, so the history itself is the same with or without them):
/// - `unrecorded-sale`: the store lists a sale the log never heard of (its callback and every
///   notification were lost);
/// - `unrecorded-refund`: the store lists a refund only it knows (the refund notification was lost);
/// - `unconfirmed-payment`: the log verified a payment the store's statement lacks;
/// - `amount-mismatch`: the store lists the sale at another amount (one yuan more).
/// With no reconciliation fault, reconciliation must find nothing and revenue ties to the lines.
public struct SimulatedStatements: Sendable {
    /// Store lines per channel, in time order (digest and line numbers are filled in on import).
    public let lines: [Channel: [StatementLine]]
    /// The period the statements cover (from a day before the history to a day after the log's end, for
    /// a simulated history); WeChat Pay's daily bills cover the whole Beijing days that overlap it.
    public let from: Timestamp
    public let to: Timestamp
    public let truth: [ExpectedFinding]
    /// The faults injected, by kind.
    public var injected: [FindingKind: Int] { Dictionary(grouping: truth, by: \.kind).mapValues(\.count) }

    public static let bundleId = "com.sim.app"
    public static let packageName = "com.sim.android"
    public static let wechatAppId = "wx5f0e6a0b9c8d7e6f"
    public static let wechatMerchant = "1900000109"
    public static let kinds: [FindingKind] = [.unrecordedSale, .unrecordedRefund, .unconfirmedPayment, .amountMismatch]

    public init(_ sim: Simulator) {
        let p = sim.fold()
        let end = sim.facts.last?.at.microseconds ?? Simulator.start.microseconds
        self.init(
            p, seed: sim.seed, faults: sim.faults,
            from: Timestamp(microsecondsSince1970: Simulator.start.microseconds - Sim.day),
            to: Timestamp(microsecondsSince1970: end + Sim.day))
    }

    /// The statements of the sales of `p` purchased in `[from, to)` and their standing refunds (any
    /// history folded: the benchmark's generated log too).
    public init(_ p: Projections, seed: UInt64, faults: FaultSpec, from: Timestamp, to: Timestamp) {
        self.from = from
        self.to = to
        // WeChat Pay's daily bill lists every trade of its Beijing day: the bills cover the whole
        // days that overlap [from, to), so their sales are listed through the end of the last one.
        let wechatDays = (
            first: Self.beijingDay(from.microseconds), end: Self.beijingDay(to.microseconds - 1) + Sim.day
        )
        let txs = p.transactions.values.filter { t in
            guard t.verified, !t.isSandbox, let ch = t.channel, t.price != nil, let at = t.purchaseDate ?? t.verifiedAt
            else { return false }
            return ch == .wechat ? (wechatDays.first..<wechatDays.end).contains(at.microseconds) : at >= from && at < to
        }.sorted { ($0.verifiedPosition ?? 0, $0.transactionId) < ($1.verifiedPosition ?? 0, $1.transactionId) }
        var rng = SplitMix64(seed: seed ^ 0x5EC0_11C1_1A71_0000)
        var out: [Channel: [StatementLine]] = [:]
        var truth: [ExpectedFinding] = []
        var extra = 0
        var dropped: [StatementLine] = []
        for t in txs {
            let ch = t.channel!, price = t.price!
            var sale = Self.line(ch, .sale, t.transactionId, price, t.purchaseDate ?? t.verifiedAt ?? from, app: t.app)
            sale.productId = t.productId
            sale.quantity = t.quantity
            sale.ownership = ch == .appstore ? t.ownership : nil
            sale.environment = ch == .appstore ? .production : nil
            sale.fee = Self.fee(ch, price)
            // WeChat's bill names our order (商户订单号, the out_trade_no).
            if ch == .wechat { sale.orderId = t.orderId }
            let refunds = Self.refundLines(t, ch, price)
            // A fault only where the log has no refund at all (a reversed one still matches a refund line).
            let clean = refunds.isEmpty && t.refunds.isEmpty && t.storeRevokedPosition == nil && t.revenue != nil
            let fault = clean ? Self.draw(faults, &rng) : nil
            if fault == .unrecordedSale {
                extra += 1
                var ghost = sale
                ghost.transactionId = Self.ghostId(ch, seed, extra)
                ghost.orderId = ch == .wechat ? "o-lost-\(seed % 10_000)-\(extra)" : nil
                ghost.at = Timestamp(microsecondsSince1970: sale.at.microseconds + 7 * Sim.minute)
                out[ch, default: []].append(ghost)
                truth.append(
                    ExpectedFinding(
                        kind: .unrecordedSale, channel: ch, transactionId: ghost.transactionId, orderId: ghost.orderId,
                        userId: nil))
            } else if let f = fault {
                truth.append(
                    ExpectedFinding(
                        kind: f, channel: ch, transactionId: t.transactionId, orderId: t.orderId, userId: nil,
                        app: t.keyApp))
            }
            switch fault {
            case .unconfirmedPayment?: dropped.append(sale)
            case .amountMismatch?:
                sale.amount = Money(minorUnits: price.minorUnits + 100, currency: price.currency)
                out[ch, default: []].append(sale)
            case .unrecordedRefund?:
                out[ch, default: []].append(sale)
                var r = Self.line(
                    ch, .refund, t.transactionId, price,
                    Timestamp(microsecondsSince1970: sale.at.microseconds + 2 * Sim.day),
                    product: t.productId, app: t.app)
                r.refundId = ch == .wechat ? "50300000\(seed % 10_000)\(t.transactionId.suffix(12))" : nil
                r.fee = sale.fee
                out[ch, default: []].append(r)
            default:
                out[ch, default: []].append(sale)
                out[ch, default: []].append(contentsOf: refunds)
            }
        }
        // A WeChat line after those days (a refund, a ghost sale) would need a bill of its own day,
        // which would then have to list that day's every sale: it is left out, and so is its fault.
        if let wechat = out[.wechat] {
            let late = wechat.filter { $0.at.microseconds >= wechatDays.end }
            out[.wechat] = wechat.filter { $0.at.microseconds < wechatDays.end }
            for l in late {
                guard
                    let i = truth.firstIndex(where: {
                        $0.channel == .wechat && $0.transactionId == l.transactionId
                            && ($0.kind == .unrecordedSale || ($0.kind == .unrecordedRefund && l.kind == .refund))
                    })
                else { continue }
                truth.remove(at: i)
            }
        }
        // WeChat Pay publishes no bill for a day without trades, so a day without lines is not
        // covered: a dropped sale whose own Beijing day has no bill stays a clean sale. Elsewhere a
        // statement covers [from, to). Either way the audit allows clock slack at the edges: a sale
        // within that of an uncovered time is not judged.
        // An App Store history is one customer's: it lists no other customer's sale, so a sale it
        // lacks is never unconfirmed.
        let days = Set((out[.wechat] ?? []).map { Self.beijingDay($0.at.microseconds) })
        let slack = AuditOptions().statementClockSlack.microseconds
        for sale in dropped {
            let t = sale.at.microseconds
            let covered: Bool
            switch sale.channel {
            case .wechat:
                covered = days.contains(Self.beijingDay(t - slack)) && days.contains(Self.beijingDay(t + slack - 1))
            case .appstore: covered = false
            case .googleplay: covered = t - slack >= from.microseconds && t + slack <= to.microseconds
            }
            guard !covered else { continue }
            out[sale.channel, default: []].append(sale)
            truth.removeAll { $0.kind == .unconfirmedPayment && $0.transactionId == sale.transactionId }
        }
        lines = out.mapValues {
            $0.sorted { ($0.at, $0.transactionId ?? "", $0.kind) < ($1.at, $1.transactionId ?? "", $1.kind) }
        }
        self.truth = truth
    }

    /// A line of `ch`'s statement; an App Store line names its app (`app`, else the main app's): each
    /// app has its own transaction history.
    static func line(
        _ ch: Channel, _ kind: StatementLineKind, _ tx: String, _ amount: Money?, _ at: Timestamp,
        product: String? = nil, app: String? = nil
    ) -> StatementLine {
        let source: StatementSource =
            ch == .wechat ? .wechatTradeBill : ch == .appstore ? .appstoreHistory : .googleplayEarnings
        var l = StatementLine(
            digest: "sim", line: 1, source: source, kind: kind, transactionId: tx, amount: amount, at: at)
        l.productId = product
        switch ch {
        case .wechat:
            l.app = wechatAppId
            l.merchant = wechatMerchant
        case .appstore: l.app = app ?? bundleId
        case .googleplay: break
        }
        return l
    }

    /// WeChat Pay charges 0.6%, printed to five decimals of a yuan (kept exactly), Google 15%; Apple's
    /// fee is in the financial report, not the history.
    static func fee(_ ch: Channel, _ m: Money) -> Money? {
        switch ch {
        case .wechat:
            // 0.6 % exactly: CNY 30.00 is 0.18, 68.00 is 0.408.
            return m.share(6, 1000)
        case .googleplay: return Money(minorUnits: m.minorUnits * 15 / 100, currency: m.currency)
        case .appstore: return nil
        }
    }

    /// The standing refunds as the store lists them (a Google void with no refund: its price, or its share).
    static func refundLines(_ t: TransactionView, _ ch: Channel, _ price: Money) -> [StatementLine] {
        var out: [StatementLine] = []
        for r in t.standingRefunds.sorted(by: { ($0.refundedAt, $0.refundId) < ($1.refundedAt, $1.refundId) }) {
            var l = line(ch, .refund, t.transactionId, r.amount, r.refundedAt, product: t.productId, app: t.app)
            l.refundId = ch == .wechat ? r.refundId : nil
            if ch == .googleplay { l.fee = fee(ch, r.amount) }
            out.append(l)
        }
        guard t.refunds.isEmpty, ch == .googleplay else { return out }
        if let at = t.storeRevokedAt, t.storeRevokedPosition != nil {
            var l = line(ch, .refund, t.transactionId, price, at, product: t.productId)
            l.fee = fee(ch, price)
            out.append(l)
        } else if let at = t.voidedAt, let q = t.voidedQuantity, t.quantity > 0 {
            out.append(
                line(
                    ch, .refund, t.transactionId, price.share(q, t.quantity), at,
                    product: t.productId))
        }
        return out
    }

    static func draw(_ faults: FaultSpec, _ rng: inout SplitMix64) -> FindingKind? {
        guard kinds.contains(where: { faults.rate($0) > 0 }) else { return nil }
        var u = Double(rng.next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
        for k in kinds {
            let r = faults.rate(k)
            if u < r { return k }
            u -= r
        }
        return nil
    }

    /// A transaction id of the channel's shape that no simulated purchase has.
    static func ghostId(_ ch: Channel, _ seed: UInt64, _ n: Int) -> String {
        switch ch {
        case .appstore: return "3000" + Script.pad(Int(seed % 1000), 3) + Script.pad(n, 9)
        case .googleplay:
            return "GPA.3399-" + Script.pad(Int(seed % 10000), 4) + "-" + Script.pad(n / 100_000, 4) + "-"
                + Script.pad(n % 100_000, 5)
        case .wechat: return "42000099" + Script.pad(Int(seed % 100_000_000), 8) + "2026" + Script.pad(n, 8)
        }
    }

    /// The start (UTC microseconds) of the Beijing day (UTC+8) holding `us`.
    static func beijingDay(_ us: Int64) -> Int64 {
        let offset: Int64 = 8 * 3600 * 1_000_000
        return (us + offset) / Sim.day * Sim.day - offset
    }

    /// The WeChat lines by Beijing day: one daily bill per day with trades (WeChat Pay publishes
    /// none for a day without).
    public var wechatDays: [(day: Timestamp, lines: [StatementLine])] {
        var byDay: [Int64: [StatementLine]] = [:]
        for l in lines[.wechat] ?? [] { byDay[Self.beijingDay(l.at.microseconds), default: []].append(l) }
        return byDay.keys.sorted().map { (Timestamp(microsecondsSince1970: $0), byDay[$0]!) }
    }
}
