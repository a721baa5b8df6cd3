import LedgerCore

extension Projections {
    /// Which declarations of the fold's state a snapshot was written with. Raise it whenever a
    /// view, the state or what a fold keeps in it changes: a snapshot of another version is never
    /// read (the projector folds the log instead). `SnapshotTests` pins the bytes the release
    /// scenarios give, so such a change fails a test until this is raised and the pin updated.
    public static let snapshotVersion = 1

    /// The fold's state as bytes (``BinaryCoding``): what ``init(snapshot:)`` reads back to go on
    /// folding after ``position`` as if it had folded the log up to there. Changes being tracked
    /// are not part of it. Equal states give equal bytes.
    public func snapshot() throws -> [UInt8] { try snapshot(fields: true) }

    /// With `fields` false, every view by its `Codable` conformance (the reference the views' own
    /// ``BinaryFields`` are tested against).
    func snapshot(fields: Bool) throws -> [UInt8] {
        try BinaryCoding.encode(State(self), fields: fields)
    }

    /// The state a ``snapshot()`` was taken of (written with ``snapshotVersion``).
    public init(snapshot bytes: [UInt8], tracksChanges: Bool = false) throws {
        try self.init(snapshot: bytes, fields: true, tracksChanges: tracksChanges)
    }

    init(snapshot bytes: [UInt8], fields: Bool, tracksChanges: Bool = false) throws {
        let s = try BinaryCoding.decode(State.self, from: bytes, fields: fields)
        self.init(tracksChanges: tracksChanges)
        products = s.products
        orders = s.orders
        transactions = s.transactions
        shared.keys = s.sharedKeys
        shared.ids = s.sharedIds
        subscriptions = s.subscriptions
        users = s.users
        anomalies = s.anomalies
        policyGrants = s.policyGrants
        statements = s.statements
        position = s.position
        logTime = s.logTime
    }

    /// Every stored property but the change tracking, in one declared order.
    private struct State: Codable {
        var products: [String: [ProductDefinition]]
        var orders: ViewTable<OrderView>
        var transactions: ViewTable<TransactionView>
        var sharedKeys: [String: [String]]
        var sharedIds: [String: String]
        var subscriptions: ViewTable<SubscriptionView>
        var users: ViewTable<UserView>
        var anomalies: [Anomaly]
        var policyGrants: [String: PolicyGrant]
        var statements: StatementBook
        var position: Int64
        var logTime: Timestamp?

        init(_ p: Projections) {
            products = p.products
            orders = p.orders
            transactions = p.transactions
            sharedKeys = p.shared.keys
            sharedIds = p.shared.ids
            subscriptions = p.subscriptions
            users = p.users
            anomalies = p.anomalies
            policyGrants = p.policyGrants
            statements = p.statements
            position = p.position
            logTime = p.logTime
        }
    }
}
