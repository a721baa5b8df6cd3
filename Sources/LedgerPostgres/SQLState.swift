/// A five-character SQLSTATE code sent by PostgreSQL (appendix A of its manual).
///
/// Compare with the named constants, or match them in a `switch` (`case .uniqueViolation:`); match a
/// whole class with ``SQLState/Class`` (`case SQLState.Class.connectionException:`).
public struct SQLState: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The code as PostgreSQL sends it, e.g. `23505`.
    public let code: String

    public init(_ code: String) { self.code = code }
    public init(stringLiteral code: String) { self.code = code }

    /// The first two characters: the class (`23` integrity constraint violation, `08` connection...).
    public var `class`: Class { Class(String(code.prefix(2))) }

    public var description: String { code }

    /// A class of SQLSTATEs (their first two characters); matches every state of the class in a `switch`.
    public struct Class: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let code: String
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
    public static let connectionException: SQLState = "08000"
    public static let connectionDoesNotExist: SQLState = "08003"
    public static let connectionFailure: SQLState = "08006"
    public static let sqlClientUnableToEstablishSQLConnection: SQLState = "08001"
    public static let sqlServerRejectedEstablishmentOfSQLConnection: SQLState = "08004"
    public static let protocolViolation: SQLState = "08P01"

    // Class 23: integrity constraint violation.
    public static let notNullViolation: SQLState = "23502"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let uniqueViolation: SQLState = "23505"
    public static let checkViolation: SQLState = "23514"
    public static let exclusionViolation: SQLState = "23P01"

    // Class 40: transaction rollback.
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"

    // Class 42: syntax error or access rule violation.
    public static let insufficientPrivilege: SQLState = "42501"
    public static let undefinedTable: SQLState = "42P01"
    public static let duplicateDatabase: SQLState = "42P04"

    // Class 3F: invalid schema name.
    public static let invalidSchemaName: SQLState = "3F000"

    // Class 55 and 57: object state, operator intervention.
    public static let lockNotAvailable: SQLState = "55P03"
    public static let queryCanceled: SQLState = "57014"
    public static let adminShutdown: SQLState = "57P01"
    public static let crashShutdown: SQLState = "57P02"
    public static let cannotConnectNow: SQLState = "57P03"

    // Class P0: PL/pgSQL.
    public static let raiseException: SQLState = "P0001"
}
