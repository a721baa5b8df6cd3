import LedgerCore

// What the stores say they paid and refunded: an imported statement file and its lines.

/// The store file a statement came from.
public enum StatementSource: String, CaseIterable, Sendable, Hashable, Comparable, Codable {
    /// WeChat Pay's daily trade bill (bill_type ALL: payments and refunds), CSV with summary rows.
    case wechatTradeBill = "wechat-tradebill"
    /// WeChat Pay's daily refund bill (bill_type REFUND), CSV with summary rows.
    case wechatRefundBill = "wechat-refundbill"
    /// App Store Server API Get Transaction History, decoded (or its signedTransactions).
    case appstoreHistory = "appstore-history"
    /// App Store Connect financial report (tab-separated, aggregated by product, country and price).
    case appstoreFinance = "appstore-finance"
    /// Google Play Developer API voided purchases list (JSON).
    case googleplayVoided = "googleplay-voided"
    /// Google Play earnings report (CSV: charges, fees, refunds per order).
    case googleplayEarnings = "googleplay-earnings"

    public static func < (a: StatementSource, b: StatementSource) -> Bool { a.rawValue < b.rawValue }

    public var channel: Channel {
        switch self {
        case .wechatTradeBill, .wechatRefundBill: return .wechat
        case .appstoreHistory, .appstoreFinance: return .appstore
        case .googleplayVoided, .googleplayEarnings: return .googleplay
        }
    }

    /// The offset from UTC the store writes this statement's period in, at `t`: WeChat Pay's bills
    /// are Beijing days (UTC+8), Google Play's earnings reports Pacific months; the rest are UTC.
    public func periodOffsetSeconds(at t: Timestamp) -> Int64 {
        switch self {
        case .wechatTradeBill, .wechatRefundBill: 8 * 3600
        case .googleplayEarnings: t.pacificOffsetSeconds
        case .appstoreHistory, .appstoreFinance, .googleplayVoided: 0
        }
    }

    /// A period `[start, end)` as the store means it, in its own zone:
    /// `2026-03-31 00:00 to 2026-04-01 00:00 UTC+08:00`.
    public func period(_ start: Timestamp, _ end: Timestamp) -> String {
        let a = start.wallClock(offsetSeconds: periodOffsetSeconds(at: start))
        let b = end.wallClock(offsetSeconds: periodOffsetSeconds(at: end))
        // One zone named once.
        if let zone = a.split(separator: " ").last, b.hasSuffix(" " + zone) {
            return String(a.dropLast(zone.count + 1)) + " to " + b
        }
        return a + " to " + b
    }

    /// Whether the statement lists every sale of its period (so a verified payment it lacks is
    /// unconfirmed). Refund bills and voided lists list refunds only; the financial report is
    /// aggregated (no transaction ids); an App Store transaction history is one customer's (Apple's
    /// Get Transaction History answers for the customer of the transaction it is asked about).
    public var listsSales: Bool { self == .wechatTradeBill || self == .googleplayEarnings }
}

/// What one statement line says happened.
public enum StatementLineKind: String, CaseIterable, Sendable, Hashable, Comparable, Codable {
    case sale, refund, fee
    /// A fee given back (Google "Google fee refund").
    case feeRefund = "fee-refund"
    /// A line of a kind the ledger does not know (a new earnings report transaction type): kept with
    /// the store's own name for it (`storeKind`), judged by no rule, in no revenue figure.
    case other
    public static func < (a: StatementLineKind, b: StatementLineKind) -> Bool { a.rawValue < b.rawValue }
}

/// A statement file was imported: its source, the period it covers and the digest of its bytes.
/// A re-import of the same bytes, under any file name, is the same fact (keyed by the digest).
public struct StatementImported: StoreAppFact, Codable {
    public var source: StatementSource
    public var channel: Channel
    /// `sha256:<hex>` of the file's bytes: names the statement.
    public var digest: String
    /// The period it covers: `[periodStart, periodEnd)`.
    public var periodStart: Timestamp
    public var periodEnd: Timestamp
    /// Lines imported (data lines; summary rows are checked, not imported).
    public var lines: Int64
    public var fileName: String?
    public var app: String?
    public var merchant: String?

    public init(
        source: StatementSource, digest: String, periodStart: Timestamp, periodEnd: Timestamp, lines: Int64,
        fileName: String? = nil, app: String? = nil, merchant: String? = nil
    ) {
        self.source = source
        self.channel = source.channel
        self.digest = digest
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.lines = lines
        self.fileName = fileName
        self.app = app
        self.merchant = merchant
    }

    public static let fields = FieldTable(
        StatementImported(source: .wechatTradeBill, digest: "", periodStart: .blank, periodEnd: .blank, lines: 0),
        [
            .choice("source", \.source, "The store file it came from."),
            .channel("channel", \.channel),
            .text("digest", \.digest, "sha256:<hex> of the file's bytes; names the statement."),
            .timestamp("periodStart", \.periodStart, "Start of the period covered (inclusive)."),
            .timestamp("periodEnd", \.periodEnd, "End of the period covered (exclusive); after periodStart."),
            .int(
                "lines", \.lines, min: 0, max: 100_000_000,
                "Data lines imported (summary rows are checked, not imported)."),
            .optionalText(
                "fileName", \.fileName,
                "The file's name as first imported (no folder); no longer written: a statement is identified by its bytes, the same bytes under another name being the same statement."
            ),
        ] + appFields(\.app, \.merchant),
        check: { s in
            if s.channel != s.source.channel {
                return FactError(
                    field: "channel",
                    message:
                        "\(s.source.rawValue) is a \(s.source.channel.rawValue) statement (got \(s.channel.rawValue))")
            }
            guard s.periodEnd > s.periodStart else {
                return FactError(
                    field: "periodEnd",
                    message: "\(s.periodEnd.iso8601) is not after periodStart \(s.periodStart.iso8601)")
            }
            return nil
        })
}

/// Whether the signatures of a statement's signed entries (the App Store history's
/// `signedTransactions`, each a JWS) were verified when it was imported: to the App Store root the
/// import was configured with (`root`), or not at all (no root configured: the record says so).
/// Keyed by the digest and the root, so a statement imported unverified and later verified keeps
/// both facts, and the later one is what the report shows.
public struct StatementSignatures: StoreAppFact, Codable {
    public var source: StatementSource
    public var channel: Channel
    /// The statement's digest (StatementImported.digest).
    public var digest: String
    /// How many signed entries the statement holds.
    public var signed: Int64
    /// `sha256:<hex>` of the root certificate (DER) every entry's chain led to; absent: not verified.
    public var root: String?
    public var app: String?
    public var merchant: String?

    public init(
        source: StatementSource, digest: String, signed: Int64, root: String?, app: String? = nil,
        merchant: String? = nil
    ) {
        self.source = source
        self.channel = source.channel
        self.digest = digest
        self.signed = signed
        self.root = root
        self.app = app
        self.merchant = merchant
    }

    public var verified: Bool { root != nil }

    public static let fields = FieldTable(
        StatementSignatures(source: .appstoreHistory, digest: "", signed: 1, root: nil),
        [
            .choice("source", \.source, "The store file it came from."),
            .channel("channel", \.channel),
            .text("digest", \.digest, "The statement's digest (StatementImported.digest)."),
            .int("signed", \.signed, min: 1, max: 100_000_000, "How many signed entries (JWS) the statement holds."),
            .optionalText(
                "root", \.root,
                "sha256:<hex> of the root certificate (DER) every entry's signature chain led to; absent: the signatures were not verified (no root was configured)."
            ),
        ] + appFields(\.app, \.merchant),
        check: { s in
            s.channel == s.source.channel
                ? nil
                : FactError(
                    field: "channel",
                    message:
                        "\(s.source.rawValue) is a \(s.source.channel.rawValue) statement (got \(s.channel.rawValue))")
        })
}

/// One line of an imported statement: a sale, a refund or a fee as the store recorded it.
public struct StatementLine: StoreAppFact, Codable {
    /// The statement it belongs to (its digest) and its line in the file (1-based).
    public var digest: String
    public var line: Int64
    public var source: StatementSource
    public var channel: Channel
    public var kind: StatementLineKind
    /// The store's transaction id (Apple transactionId, Google order id, WeChat transaction_id);
    /// absent on aggregated lines (the App Store financial report).
    public var transactionId: String?
    /// Our order, where the store names it: WeChat out_trade_no, or the Apple appAccountToken minted for it.
    public var orderId: String?
    /// The store's refund id (WeChat refund_id), for a refund.
    public var refundId: String?
    public var productId: String?
    public var quantity: Int64?
    /// Sale: what the buyer paid; refund: what was returned; fee: the fee. Absent where the store
    /// gives no amount (Google's voided purchases list).
    public var amount: Money?
    /// The store's fee on this line, where it gives one.
    public var fee: Money?
    /// What the merchant receives for this line, where the store gives it (Apple partner share).
    public var net: Money?
    /// The store's time of the sale or refund.
    public var at: Timestamp
    /// Apple environment / ownership, where given (sandbox and family-shared lines carry no revenue).
    public var environment: StoreEnvironment?
    public var ownership: Ownership?
    public var app: String?
    public var merchant: String?
    /// Google's voided purchases: the purchase token, and why the purchase was voided
    /// (`voidedReason`: `chargeback`, `remorse`, `fraud`... and `voidedSource`: `user`, `developer`,
    /// `google`): a chargeback is told apart from a refund.
    public var purchaseToken: String?
    public var voidedReason: String?
    public var voidedSource: String?
    /// The store's own name for the line's kind, when the ledger does not know it (kind `other`).
    public var storeKind: String?

    /// Whether the store says the money was taken back by the buyer's bank (a chargeback).
    public var isChargeback: Bool { voidedReason == "chargeback" }

    public init(
        digest: String, line: Int64, source: StatementSource, kind: StatementLineKind, transactionId: String?,
        orderId: String? = nil,
        refundId: String? = nil, productId: String? = nil, quantity: Int64? = nil, amount: Money?, fee: Money? = nil,
        net: Money? = nil,
        at: Timestamp, environment: StoreEnvironment? = nil, ownership: Ownership? = nil, app: String? = nil,
        merchant: String? = nil
    ) {
        self.digest = digest
        self.line = line
        self.source = source
        self.channel = source.channel
        self.kind = kind
        self.transactionId = transactionId
        self.orderId = orderId
        self.refundId = refundId
        self.productId = productId
        self.quantity = quantity
        self.amount = amount
        self.fee = fee
        self.net = net
        self.at = at
        self.environment = environment
        self.ownership = ownership
        self.app = app
        self.merchant = merchant
    }

    /// Whether the line carries revenue: not sandbox, not a family-shared copy.
    public var isRevenue: Bool {
        (environment.map { $0 == .production } ?? true) && ownership != .familyShared
    }

    public static let fields = FieldTable(
        StatementLine(
            digest: "", line: 0, source: .wechatTradeBill, kind: .sale, transactionId: nil, amount: nil, at: .blank),
        [
            .text("digest", \.digest, "The statement's digest (StatementImported.digest)."),
            .int("line", \.line, min: 1, max: 1_000_000_000, "The line in the file (1-based)."),
            .choice("source", \.source, "The store file it came from."),
            .channel("channel", \.channel),
            .choice("kind", \.kind, "What the store says happened."),
            .optionalText("transactionId", \.transactionId, "The store's transaction id; absent on aggregated lines."),
            .optionalText(
                "orderId", \.orderId,
                "Our order, where the store names it: WeChat out_trade_no, or the Apple appAccountToken minted for it."),
            .optionalText("refundId", \.refundId, "The store's refund id, for a refund."),
            .optionalText("productId", \.productId),
            .optionalInt(
                "quantity", \.quantity, min: -1_000_000, max: 1_000_000,
                "Units (the financial report aggregates; returns are negative)."),
            .optionalObject(
                "amount", \.amount,
                "Sale: paid; refund: returned; fee: the fee; absent where the store gives none (Google voided purchases)."
            ),
            .optionalObject("fee", \.fee, "The store's fee on this line, where it gives one."),
            .optionalObject("net", \.net, "What the merchant receives for this line, where the store gives it."),
            .timestamp("at", \.at, "The store's time of the sale or refund."),
            .optionalOpen("environment", \.environment, "The store environment, where the statement gives it."),
            .optionalOpen("ownership", \.ownership, "Apple inAppOwnershipType, where given."),
        ] + appFields(\.app, \.merchant) + [
            .optionalText("purchaseToken", \.purchaseToken, "Google's purchase token of a voided purchase."),
            .optionalText(
                "voidedReason", \.voidedReason,
                "Why Google voided it: other, remorse, not-received, defective, accidental-purchase, fraud, friendly-fraud, chargeback, unacknowledged-purchase (or the code Google sent)."
            ),
            .optionalText(
                "voidedSource", \.voidedSource, "Who voided it: user, developer, google (or the code Google sent)."),
            .optionalText(
                "storeKind", \.storeKind,
                "The store's own name for a line of a kind the ledger does not know (kind other)."),
        ],
        check: { l in
            l.channel == l.source.channel
                ? nil
                : FactError(
                    field: "channel",
                    message:
                        "\(l.source.rawValue) is a \(l.source.channel.rawValue) statement (got \(l.channel.rawValue))")
        })

    /// The identity of what the line is about, across statements: the same sale in two files is one sale
    /// (a transaction id is unique per channel and app: two apps' sales with one id are two).
    /// A refund without a store refund id is told apart by its amount and time (two partial refunds
    /// of one order are two refunds; the same refund in two files is one).
    public var subject: String {
        let which =
            refundId
            ?? (kind == .sale
                ? "" : "\(amount.map { "\($0.minorUnits) \($0.currency.code)" } ?? "?")@\(at.microseconds)")
        return "\(channel.rawValue)|\(app ?? "")|\(transactionId ?? "")|\(kind.rawValue)|\(which)"
    }
}

extension FactTypes {
    public static let statementImported = FactType<StatementImported>(
        "StatementImported",
        "A store statement file was imported (WeChat Pay bill, App Store history or financial report, Google Play voided purchases or earnings).",
        stream: "statement:<digest>", key: "statement:<digest>",
        wrap: Fact.statementImported,
        summary: {
            "imported \($0.source.rawValue) statement \($0.digest.prefix(19)) (\($0.lines) lines, \($0.periodStart.iso8601) to \($0.periodEnd.iso8601))"
        })

    public static let statementSignatures = FactType<StatementSignatures>(
        "StatementSignatures",
        "Whether an imported statement's signed entries (App Store history signedTransactions) were verified, and to which root.",
        stream: "statement:<digest>", key: "statement:<digest>:signatures:<root|unverified>",
        wrap: Fact.statementSignatures,
        summary: { s in
            "\(s.source.rawValue) statement \(s.digest.prefix(19)): \(s.signed) signatures "
                + (s.root.map { "verified to root \($0.prefix(19))" } ?? "not verified")
        })

    public static let statementLine = FactType<StatementLine>(
        "StatementLine", "One line of an imported store statement: a sale, refund or fee as the store recorded it.",
        stream: "statement:<digest>", key: "statement:<digest>:line:<line>:<kind>",
        older: [
            .without(
                ["purchaseToken", "voidedReason", "voidedSource", "storeKind"],
                "One line of an imported store statement: a sale, refund or fee as the store recorded it.")
        ],
        wrap: Fact.statementLine,
        summary: { l in
            "\(l.source.rawValue) line \(l.line): \(l.kind.rawValue)" + (l.amount.map { " \($0)" } ?? "")
                + (l.transactionId.map { " tx \($0)" } ?? "")
        })
}
