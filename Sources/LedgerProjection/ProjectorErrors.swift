import LedgerLog

/// Why a projector or rebuild could not start.
public struct ProjectorBusy: LedgerCodedError, CustomStringConvertible {
    public var code: LedgerError.Code { .projectorBusy }
    public var holderPID: Int32?
    public var description: String {
        "another projector or rebuild is running on this ledger"
            + (holderPID.map { " (PostgreSQL backend pid \($0))" } ?? "")
            + "; only one may write the read models at a time. Stop it, or wait for it to finish."
    }
}

/// A projector whose batch failed to commit cannot go on: start a new one.
public struct ProjectorFailed: LedgerCodedError, CustomStringConvertible {
    public var code: LedgerError.Code { .projectorFailed }
    public var description: String
}

/// A rebuild that was asked something it cannot do.
public struct RebuildRefused: LedgerCodedError, CustomStringConvertible {
    public var code: LedgerError.Code { .rebuildRefused }
    public var description: String
}

/// A verification of read models that stand at different positions: not a wrong request, a state
/// that `ledger project` ends.
public struct ReadModelsApart: LedgerCodedError, CustomStringConvertible {
    public var code: LedgerError.Code { .readModelsApart }
    public var description: String
}

extension LedgerError.Code {
    /// Another projector or rebuild holds the read models; try again later.
    public static let projectorBusy = LedgerError.Code("projector-busy")
    /// A projector's batch failed to commit; start a new projector.
    public static let projectorFailed = LedgerError.Code("projector-failed")
    /// A rebuild was asked something it cannot do (options that contradict each other or the tables).
    public static let rebuildRefused = LedgerError.Code("rebuild-refused")
    /// The read models to verify stand at different positions; project them, then verify again.
    public static let readModelsApart = LedgerError.Code("read-models-apart")
}
