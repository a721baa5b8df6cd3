import LedgerCore

/// How to reach the log.
public struct LedgerConfiguration: Sendable {
    /// A libpq URL or keyword string.
    public var connectionString: String
    /// The PostgreSQL schema holding the log (one ledger per schema).
    public var schema: String
    /// Checks applied to every appended event.
    public var validation: EventValidation
    /// Connections lent to readers.
    public var readConnections: Int
    /// At most this many events are committed together by one group commit.
    public var maximumGroupEvents: Int
    /// How long an append keeps trying to reconnect after the server went away.
    public var reconnectTimeout: Duration
    /// Who seals the events of appends answered at commit: the writers (the default), or a sealer
    /// elected among the stores (``Sealing``).
    public var sealing: Sealing

    /// `validation` has no default: the log knows no facts; the purchase domain's
    /// `FactCatalogue.validation()` checks every payload against its fact's schema.
    public init(
        connectionString: String, schema: String = "ledger", validation: EventValidation,
        readConnections: Int = 4, maximumGroupEvents: Int = 10_000, reconnectTimeout: Duration = .seconds(30),
        sealing: Sealing = .writers
    ) {
        self.connectionString = connectionString
        self.schema = schema
        self.validation = validation
        self.readConnections = readConnections
        self.maximumGroupEvents = maximumGroupEvents
        self.reconnectTimeout = reconnectTimeout
        self.sealing = sealing
    }

    /// The NOTIFY channel appends signal on.
    public var channel: String { "ledger_events_" + schema }
}
