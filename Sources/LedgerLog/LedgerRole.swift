import LedgerPostgres

/// The database roles the application connects as (created by migration 0004). The role that
/// owns the schema is used only to migrate (and for maintenance: rebuild, benchmarks).
public enum LedgerRole: String, Sendable, CaseIterable {
    /// Appends: SELECT and INSERT on `events`, SELECT on `log_head`.
    case writer
    /// Reads the log, writes the read models and their checkpoints.
    case projector
    /// Reads the log and the read models.
    case reader
    /// Reads the log and the read models (audit, verify-chain, anchor).
    case auditor

    /// The PostgreSQL role name (cluster-wide, shared by every ledger schema of the cluster).
    public var roleName: String { "ledger_" + rawValue }

    /// The environment variable that may give this role its own connection string
    /// (`LEDGER_WRITER_DATABASE_URL`, ...), for servers that need a password per role.
    public var environmentVariable: String { "LEDGER_\(rawValue.uppercased())_DATABASE_URL" }
}

extension LedgerConfiguration {
    /// This configuration logging in as `role`: the same server and options, the role's user (the
    /// server must let it in without a password, as the embedded cluster's socket does, or a
    /// `.pgpass`/`PGPASSFILE` entry must give it one).
    public func connecting(as role: LedgerRole) -> LedgerConfiguration {
        var copy = self
        copy.connectionString = ConnectionString.settingUser(role.roleName, in: connectionString)
        return copy
    }
}
