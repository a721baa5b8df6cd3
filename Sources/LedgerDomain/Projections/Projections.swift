import LedgerCore
import LedgerFoldStore

/// Where a fact sits in the log.
public struct FactContext: Hashable, Sendable {
    public var position: Int64
    public var occurredAt: Timestamp
    public init(position: Int64, occurredAt: Timestamp) {
        self.position = position
        self.occurredAt = occurredAt
    }
}

/// Every projection of the log as one pure, deterministic fold: `apply` each fact in log order.
///
/// Order status, subscriptions, user entitlements and owed-versus-granted per store transaction.
/// Nothing here depends on the wall clock or on arrival order beyond the log's own order; a fact
/// that cannot be applied as it stands becomes an ``Anomaly`` and never stops the fold.
public struct Projections: Sendable {
    public internal(set) var products: [String: [ProductDefinition]] = [:]
    public internal(set) var orders = ViewTable<OrderView>()
    /// By ``TransactionView/key``: the store's id, unless another channel or app uses it too.
    public internal(set) var transactions = ViewTable<TransactionView>()
    /// Transaction ids used by more than one channel or app (see `Payments/TransactionKeys.swift`).
    var shared = SharedTransactionIds()
    public internal(set) var subscriptions = ViewTable<SubscriptionView>()
    /// The owners over time of each subscription that moved to another user, by its key (few:
    /// only those a TransactionTransferred moved).
    public internal(set) var subscriptionOwners: [String: SubscriptionOwners] = [:]
    /// Subscriptions with a renewal logged before any verified purchase of theirs, whose terms
    /// (environment, ownership) it takes when one is verified (few: renewals usually come after).
    var termsPending: Set<String> = []
    /// Google purchase tokens canceled while their payment was pending (few): a notice of such a
    /// purchase awaiting its verification, logged after the cancellation, is complete on arrival.
    var canceledPending: Set<String> = []
    public internal(set) var users = ViewTable<UserView>()
    public internal(set) var anomalies: [Anomaly] = []
    /// Verified notifications recorded untranslated, until a later fact completes them
    /// (`Payments/Untranslated.swift`).
    public internal(set) var untranslated: [UntranslatedNotice] = []
    /// What completes the notices awaiting a fact (``awaitingKey(_:)``): an index of `untranslated`,
    /// so that a verification looks up one key instead of scanning the notices.
    var awaitingNotices: Set<String> = []
    /// Grants by policy (goodwill, compensation, promotion, migration), by grant id.
    public internal(set) var policyGrants: [String: PolicyGrant] = [:]
    /// The stores' imported statements (`Statements/StatementBook.swift`).
    public internal(set) var statements = StatementBook()
    /// The last position applied.
    public internal(set) var position: Int64 = 0
    /// The latest `occurredAt` applied: the log's clock.
    public internal(set) var logTime: Timestamp?

    /// When set, the keys of every view changed since ``takeChanges()``.
    public var tracksChanges = false
    /// When false (an audit), a user's view does not keep the positions of the facts behind it:
    /// the read models show them, no finding names them, and a user's list grows with every fact
    /// about them, for as long as the log runs (an order's or a transaction's stops growing when it
    /// is settled). Such a state is never written as a snapshot or as read models.
    public var keepsUserPositions = true
    public internal(set) var changes = Changes()
    /// Tables kept to a memory count again what their views in memory take at each position that is
    /// a multiple of `countingEvery` (``spillViews(to:memory:pageSize:countingEvery:)``): this is
    /// `countingEvery - 1`, a mask; `Int64.max`: never (positions start at 1).
    var viewsCountedAt: Int64 = .max

    /// Keys of the views changed since ``takeChanges()``. (Anomalies are append-only: a writer
    /// keeps how many it has written and takes the rest.)
    public struct Changes: Sendable {
        public var orders: Set<String> = []
        public var transactions: Set<String> = []
        public var subscriptions: Set<String> = []
        public var users: Set<String> = []
    }

    public init(tracksChanges: Bool = false) { self.tracksChanges = tracksChanges }

    public mutating func takeChanges() -> Changes {
        defer { changes = Changes() }
        return changes
    }

    // MARK: - apply

    /// Applies one fact: each domain area folds its own facts (`Orders/OrderFold.swift`,
    /// `Payments/PaymentFold.swift`, `Subscriptions/SubscriptionFold.swift`, `Refunds/RefundFold.swift`,
    /// `Entitlements/EntitlementFold.swift`, `Catalogue/CatalogueFold.swift`).
    ///
    /// The fact is taken (`consuming`): a caller that keeps no copy of it gives it whole, and each
    /// area reads its payload without copying it out (every id retained, then released) first.
    public mutating func apply(_ fact: consuming Fact, _ ctx: FactContext) {
        position = ctx.position
        if ctx.position & viewsCountedAt == 0 { keepViewsToMemory() }
        if logTime.map({ ctx.occurredAt > $0 }) ?? true { logTime = ctx.occurredAt }
        switch consume fact {
        case .productDefined(let f), .productChanged(let f): apply(f, ctx)
        case .orderCreated(let f): apply(f, ctx)
        case .paymentLaunched(let f): apply(f, ctx)
        case .orderClosed(let f): apply(f, ctx)
        case .clientCallbackReceived(let f): apply(f, ctx)
        case .storeNotificationReceived(let f): apply(f, ctx)
        case .paymentVerified(let f): apply(f, ctx)
        case .verificationFailed(let f): apply(f, ctx)
        case .transactionBound(let f): apply(f, ctx)
        case .entitlementGranted(let f): apply(f, ctx)
        case .entitlementRevoked(let f): apply(f, ctx)
        case .coinsSpent(let f): apply(f, ctx)
        case .subscriptionRenewed(let f): apply(f, ctx)
        case .renewalFailed(let f): apply(f, ctx)
        case .autoRenewChanged(let f): apply(f, ctx)
        case .planChanged(let f): apply(f, ctx)
        case .subscriptionExpired(let f): apply(f, ctx)
        case .subscriptionStateChanged(let f): apply(f, ctx)
        case .storeRevoked(let f): apply(f, ctx)
        case .refundRequested(let f): refundNotice(f, ctx.position, state: .requested)
        case .refundDeclined(let f): refundNotice(f, ctx.position, state: .declined)
        case .refunded(let f): apply(f, ctx)
        case .refundReversed(let f): reverseRefund(f, ctx)
        case .transactionTransferred(let f): apply(f, ctx)
        case .purchaseAcknowledged(let f): apply(f, ctx)
        case .purchaseVoided(let f): apply(f, ctx)
        case .statementImported(let f): statements.apply(f, ctx)
        case .statementSignatures(let f): statements.apply(f)
        case .statementLine(let f):
            statements.apply(f, ctx)
            voidedQuantity(f, ctx)
        }
    }

    /// A stored fact that does not decode (an unknown type stored on purpose, or a payload an older
    /// build accepted): recorded as an anomaly, and the fold goes on.
    public mutating func skip(_ ctx: FactContext, type: String, reason: String) {
        position = ctx.position
        anomaly(ctx.position, "undecodable-fact", "\(type): \(reason)")
    }

    // MARK: - view updates shared by every area

    mutating func anomaly(_ p: Int64, _ kind: String, _ detail: String) {
        anomalies.append(Anomaly(position: p, kind: kind, detail: detail))
    }

    mutating func updateOrder(_ id: String, _ p: Int64, _ body: (inout OrderView) -> Void) {
        // Mutated in place (one lookup, no copy): the closures never touch `self`.
        orders.modify(id, default: OrderView(orderId: id)) { Self.touch(&$0, p, body) }
        if tracksChanges { changes.orders.insert(id) }
    }

    /// `key`: from ``txKey(_:_:_:)``.
    mutating func updateTransaction(_ key: String, _ p: Int64, _ body: (inout TransactionView) -> Void) {
        let id = storeTransactionId(key: key)
        transactions.modify(key, default: TransactionView(transactionId: id, key: key)) { Self.touch(&$0, p, body) }
        if tracksChanges { changes.transactions.insert(key) }
    }

    mutating func updateSubscription(_ c: Channel, _ orig: String, _ p: Int64, _ body: (inout SubscriptionView) -> Void)
    {
        let key = Self.subscriptionKey(c, orig)
        subscriptions.modify(key, default: SubscriptionView(channel: c, originalTransactionId: orig)) {
            Self.touch(&$0, p, body)
        }
        if tracksChanges { changes.subscriptions.insert(key) }
    }

    mutating func updateUser(_ id: String, _ p: Int64, _ body: (inout UserView) -> Void) {
        if keepsUserPositions {
            users.modify(id, default: UserView(userId: id)) { Self.touch(&$0, p, body) }
        } else {
            users.modify(id, default: UserView(userId: id), body)
        }
        if tracksChanges { changes.users.insert(id) }
    }

    mutating func touchUser(_ id: String, _ p: Int64) { updateUser(id, p) { _ in } }

    @inline(__always)
    static func touch<V: PositionedView>(_ v: inout V, _ p: Int64, _ body: (inout V) -> Void) {
        body(&v)
        if v.positions.last != p { v.positions.append(p) }
    }
}

/// The fold's state, without the change tracking: what a snapshot holds (`Snapshot.swift`).
extension Projections: Codable {
    private enum CodingKeys: CodingKey {
        case products, orders, transactions, shared, subscriptions, subscriptionOwners, termsPending, canceledPending,
            users, anomalies,
            untranslated, awaitingNotices, policyGrants, statements, position, logTime
    }
}

/// A view that keeps the positions of the facts behind it.
protocol PositionedView { var positions: PositionList { get set } }
extension OrderView: PositionedView {}
extension TransactionView: PositionedView {}
extension SubscriptionView: PositionedView {}
extension UserView: PositionedView {}

/// A fact the projections could not apply as it stands; kept for the audit, never dropped.
public struct Anomaly: Hashable, Sendable, Codable {
    public var position: Int64
    public var kind: String
    public var detail: String
}

extension Projections {
    /// From now on, the four view tables keep about `memory` bytes of views between them and
    /// spill the rest to `store` (see ``ViewTable``). Results are the same as in memory; what it
    /// costs is the time to write views out and read them back. Told before the first fact.
    ///
    /// Users get three quarters of it: a fact about any user may come at any time, so a user
    /// spilled is soon read back, and their number grows with the app's audience, not with its log.
    /// Transactions get an eighth, orders and subscriptions a sixteenth each: they are busy when
    /// new and rarely needed later (a refund, a late notification), and the audit's rules and the
    /// read models go through them in order, a page at a time. Of each share, three quarters keep
    /// the newest pages and a quarter the spilled views read back. (With half for users and a
    /// quarter for transactions, a rebuild of the 10-million-fact benchmark log kept to 64 MiB read
    /// 498,000 views back and took 65 s, against 56 s unlimited; with these shares, 34,000 and
    /// 54-56 s.) Each table counts what its views take from its first full page and from every
    /// page it spills (``ViewTable/spill(to:pageSize:residentPages:recallCapacity:memory:)``), so
    /// the shares hold whatever the ids' length (docs/benchmarks.md, "Ids as long as the stores'").
    ///
    /// Views grow after they are counted (a user's positions, in a rebuild or a projector), so
    /// every `countingEvery` facts (a power of two) each table counts again what its views in memory
    /// take, and spills what no longer fits (``ViewTable/keepToMemoryAsViewsGrow()``).
    public mutating func spillViews(
        to store: any SpillStore, memory: Int, pageSize: Int = ViewTable<OrderView>.defaultPageSize,
        countingEvery: Int64 = 1 << 17
    ) {
        precondition(
            countingEvery > 0 && countingEvery & (countingEvery - 1) == 0, "not a power of two: \(countingEvery)")
        viewsCountedAt = countingEvery - 1
        func spill<V: BinaryFields>(_ table: inout ViewTable<V>, _ share: Int) {
            // Until a page is spilled and measured: a view's own bytes plus what it keeps out of
            // line (ids, positions, arrays of two or more) as short ids make it.
            let perView = MemoryLayout<V>.stride + 96
            table.spill(
                to: store, pageSize: pageSize, residentPages: max(1, share * 3 / 4 / (pageSize * perView)),
                recallCapacity: max(1, share / 4 / perView), memory: share)
        }
        spill(&users, memory * 3 / 4)
        spill(&transactions, memory / 8)
        spill(&orders, memory / 16)
        spill(&subscriptions, memory / 16)
    }

    /// Each table kept to a memory counts again what its views in memory take, and spills what no
    /// longer fits.
    mutating func keepViewsToMemory() {
        users.keepToMemoryAsViewsGrow()
        transactions.keepToMemoryAsViewsGrow()
        orders.keepToMemoryAsViewsGrow()
        subscriptions.keepToMemoryAsViewsGrow()
    }

    /// The bytes of the store the tables spill to (one for all four; nil when they do not
    /// spill). A view changed after it was spilled is appended again, and its old bytes stay: the
    /// store grows beyond what the views need (see ``FoldMemory``'s compaction in the projector).
    public var spillStoreSize: Int64? { users.spillStore?.size }

    /// The bytes the newest versions of the spilled views take in that store.
    public var spilledBytes: Int64 {
        orders.spilledBytes + transactions.spilledBytes + subscriptions.spilledBytes + users.spilledBytes
    }

    /// How many views are spilled now, of all the tables.
    public var spilledViews: Int {
        orders.spilled.views + transactions.spilled.views + subscriptions.spilled.views + users.spilled.views
    }
}
