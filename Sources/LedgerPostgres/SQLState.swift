/// A five-character SQLSTATE code sent by PostgreSQL (appendix A of its manual).
///
/// Compare with the named constants, or match them in a `switch` (`case .uniqueViolation:`); match a
/// whole class with ``SQLState/Class`` (`case SQLState.Class.connectionException:`).
public struct SQLState: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The code as PostgreSQL sends it, e.g. `23505`.
    public let code: String

    /// A state from its five-character code.
    public init(_ code: String) { self.code = code }
    public init(stringLiteral code: String) { self.code = code }

    /// The first two characters: the class (`23` integrity constraint violation, `08` connection...).
    public var `class`: Class { Class(String(code.prefix(2))) }

    public var description: String { code }

    /// A class of SQLSTATEs (their first two characters); matches every state of the class in a `switch`.
    public struct Class: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The two-character class code.
        public let code: String
        /// A class from its two-character code.
        public init(_ code: String) { self.code = code }
        public init(stringLiteral code: String) { self.code = code }
        public var description: String { code }

        /// 08: the connection failed or broke.
        public static let connectionException: Class = "08"
        /// 23: a constraint refused the row (its DETAIL quotes row values).
        public static let integrityConstraintViolation: Class = "23"
        /// 40: the transaction was rolled back (serialization failure, deadlock).
        public static let transactionRollback: Class = "40"
        /// 42: syntax error or access rule violation.
        public static let syntaxErrorOrAccessRuleViolation: Class = "42"
        /// 57: operator intervention (cancel, shutdown).
        public static let operatorIntervention: Class = "57"

        /// True when `state` belongs to `pattern`.
        public static func ~= (pattern: Class, state: SQLState) -> Bool { state.class == pattern }
    }

    // Class 08: connection exception.
    /// 08000: connection exception.
    public static let connectionException: SQLState = "08000"
    /// 08003: the connection does not exist.
    public static let connectionDoesNotExist: SQLState = "08003"
    /// 08006: the connection failed.
    public static let connectionFailure: SQLState = "08006"
    /// 08001: the client could not connect.
    public static let sqlClientUnableToEstablishSQLConnection: SQLState = "08001"
    /// 08004: the server refused the connection.
    public static let sqlServerRejectedEstablishmentOfSQLConnection: SQLState = "08004"
    /// 08P01: the wire protocol was violated.
    public static let protocolViolation: SQLState = "08P01"
    /// 22023: e.g. pg_xact_status of a transaction id the server has not handed out (after a crash).
    public static let invalidParameterValue: SQLState = "22023"

    // Class 23: integrity constraint violation.
    /// 23502: a NOT NULL column got NULL.
    public static let notNullViolation: SQLState = "23502"
    /// 23503: a foreign key found no row (here: a position gap or a version hole).
    public static let foreignKeyViolation: SQLState = "23503"
    /// 23505: a unique constraint fired (here: an event id or idempotency key already stored).
    public static let uniqueViolation: SQLState = "23505"
    /// 23514: a CHECK constraint refused the row.
    public static let checkViolation: SQLState = "23514"
    /// 23P01: an exclusion constraint fired.
    public static let exclusionViolation: SQLState = "23P01"

    // Class 40: transaction rollback.
    /// 40001: the transaction could not be serialized; run it again.
    public static let serializationFailure: SQLState = "40001"
    /// 40P01: the transaction was chosen as a deadlock victim; run it again.
    public static let deadlockDetected: SQLState = "40P01"

    // Class 42: syntax error or access rule violation.
    /// 42501: the role may not do this (here: UPDATE or DELETE on the log).
    public static let insufficientPrivilege: SQLState = "42501"
    /// 42P01: the table does not exist (a schema not migrated).
    public static let undefinedTable: SQLState = "42P01"
    /// 42P04: the database exists already.
    public static let duplicateDatabase: SQLState = "42P04"

    // Class 3F: invalid schema name.
    /// 3F000: the schema does not exist.
    public static let invalidSchemaName: SQLState = "3F000"

    // Class 55 and 57: object state, operator intervention.
    /// 55P03: a lock could not be taken (lock_timeout, NOWAIT).
    public static let lockNotAvailable: SQLState = "55P03"
    /// 57014: the statement was cancelled (statement_timeout, a cancel request).
    public static let queryCanceled: SQLState = "57014"
    /// 57P01: the server is shutting down (or an administrator ended the session).
    public static let adminShutdown: SQLState = "57P01"
    /// 57P02: the server is restarting after a crash.
    public static let crashShutdown: SQLState = "57P02"
    /// 57P03: the server is starting up or shutting down.
    public static let cannotConnectNow: SQLState = "57P03"

    // Class P0: PL/pgSQL.
    /// P0001: a PL/pgSQL RAISE EXCEPTION (here: the log's triggers).
    public static let raiseException: SQLState = "P0001"
}
