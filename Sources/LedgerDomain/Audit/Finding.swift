import LedgerCore

/// The audit findings (docs/domain.md, the audit).
public enum FindingKind: String, CaseIterable, Sendable, Hashable, Comparable {
    case doubleGrant = "double-grant"
    case missingGrant = "missing-grant"
    case grantWithoutPayment = "grant-without-payment"
    case refundNotRevoked = "refund-not-revoked"
    case revokedWithoutRefund = "revoked-without-refund"
    case wrongUser = "wrong-user"
    case productMismatch = "product-mismatch"
    case orphanPayment = "orphan-payment"
    case receiptReused = "receipt-reused"
    case staleOrder = "stale-order"
    case subscriptionDrift = "subscription-drift"
    case negativeBalance = "negative-balance"
    case unacknowledgedPurchase = "unacknowledged-purchase"
    // Reconciliation with the stores' statements (`Statements/Reconciliation.swift`).
    case unrecordedSale = "unrecorded-sale"
    case unrecordedRefund = "unrecorded-refund"
    case unconfirmedPayment = "unconfirmed-payment"
    case amountMismatch = "amount-mismatch"
    case chainBroken = "chain-broken"
    /// A notice for operators, not a wrong: a verified notification kept without its facts.
    case untranslatedNotification = "untranslated-notification"

    public static func < (a: FindingKind, b: FindingKind) -> Bool { a.rawValue < b.rawValue }

    /// How bad a finding of this kind is, by default.
    public var defaultSeverity: Severity {
        switch self {
        case .doubleGrant, .grantWithoutPayment, .wrongUser, .chainBroken: return .critical
        case .missingGrant, .refundNotRevoked, .productMismatch, .receiptReused, .unacknowledgedPurchase: return .error
        case .unrecordedSale, .unrecordedRefund, .amountMismatch: return .error
        case .revokedWithoutRefund, .orphanPayment, .subscriptionDrift, .negativeBalance, .unconfirmedPayment:
            return .warning
        case .staleOrder, .untranslatedNotification: return .info
        }
    }
}

public enum Severity: String, CaseIterable, Sendable, Hashable, Comparable {
    case info, warning, error, critical

    var rank: Int { Severity.allCases.firstIndex(of: self)! }
    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// One finding, with the evidence that proves it.
public struct Finding: Hashable, Sendable, Comparable {
    public var kind: FindingKind
    public var severity: Severity
    public var channel: Channel?
    public var userId: String?
    public var orderId: String?
    public var transactionId: String?
    /// The transaction's app where another transaction had its id first (another app's, on the
    /// same channel or another): it tells their findings apart. Nil for the first, so that its
    /// findings keep their keys when the id is used again.
    public var app: String?
    /// Positions of the facts that prove it, ascending.
    public var positions: [Int64]
    /// The money at stake (the price of what was granted twice, paid for and not granted, refunded
    /// and not taken back...), when there is one.
    public var amountAtRisk: Money?
    /// One readable sentence: what is wrong and why.
    public var detail: String

    public init(
        kind: FindingKind, severity: Severity? = nil, channel: Channel? = nil, userId: String? = nil,
        orderId: String? = nil,
        transactionId: String? = nil, app: String? = nil, positions: [Int64], amountAtRisk: Money? = nil,
        detail: String
    ) {
        self.kind = kind
        self.severity = severity ?? kind.defaultSeverity
        self.channel = channel
        self.userId = userId
        self.orderId = orderId
        self.transactionId = transactionId
        self.app = app
        self.positions = positions.sorted()
        self.amountAtRisk = amountAtRisk
        self.detail = detail
    }

    /// Stable identity across re-runs: the kind and its subject (transaction, order or user), and
    /// ``app`` when there is one.
    public var key: String {
        "\(kind.rawValue)|\(channel?.rawValue ?? "")|\(transactionId ?? "")|\(orderId ?? "")|\(userId ?? "")"
            + (app.map { "|\($0)" } ?? "")
    }

    /// Report order: by kind, then subject, then first position.
    public static func < (a: Finding, b: Finding) -> Bool {
        (a.kind.rawValue, a.key, a.positions.first ?? 0) < (b.kind.rawValue, b.key, b.positions.first ?? 0)
    }
}

/// Windows are measured in log time: the `occurredAt` of the latest fact replayed.
public struct AuditOptions: Sendable, Hashable {
    /// A verified payment or renewal must be granted within this (default 10 minutes).
    public var missingGrantWindow: Duration
    /// A refund must be revoked within this (default 10 minutes).
    public var refundWindow: Duration
    /// A launched order must be paid or closed within this (default 24 hours).
    public var staleOrderWindow: Duration
    /// A Google purchase must be acknowledged within this (default 3 days, after which Google refunds it).
    public var acknowledgementWindow: Duration
    /// Statements arrive late: a store line the log lacks is a finding only this long after its
    /// time (default 25 hours: longer than WeChat Pay's last notification retry, 24 h 4 min after
    /// the first).
    public var statementWindow: Duration
    /// Clocks differ at a statement's edges: a payment is judged against a statement's period
    /// (read in the statement's own time zone) only when the period covers this much either side
    /// of its purchase time (default 5 minutes).
    public var statementClockSlack: Duration

    public init(
        missingGrantWindow: Duration = .seconds(600), refundWindow: Duration = .seconds(600),
        staleOrderWindow: Duration = .seconds(86_400), acknowledgementWindow: Duration = .seconds(3 * 86_400),
        statementWindow: Duration = .seconds(25 * 3600), statementClockSlack: Duration = .seconds(300)
    ) {
        self.missingGrantWindow = missingGrantWindow
        self.refundWindow = refundWindow
        self.staleOrderWindow = staleOrderWindow
        self.statementClockSlack = statementClockSlack
        self.acknowledgementWindow = acknowledgementWindow
        self.statementWindow = statementWindow
    }
}
