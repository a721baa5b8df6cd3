/// An error from PostgreSQL or from libpq, carrying what an operator needs to act on it:
/// the SQLSTATE, the constraint that fired, the server's message, detail and hint.
///
/// Its `description` never contains a password, a parameter value or row values: the DETAIL of an
/// integrity constraint violation (class 23, e.g. `Key (idempotency_key)=(...) already exists`)
/// quotes the row, so it stays in ``detail`` and is left out of the description.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this was.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let raw: String
        /// Could not connect, or the connection broke.
        public static let connection = Kind(raw: "connection")
        /// The server rejected a statement (see `sqlState`).
        public static let server = Kind(raw: "server")
        /// libpq or the wire protocol misbehaved (unexpected result status, COPY state...).
        public static let protocolViolation = Kind(raw: "protocol")
        /// The caller used the API wrongly (e.g. a value that cannot be encoded).
        public static let client = Kind(raw: "client")
        public var description: String { raw }
    }

    public var kind: Kind
    /// The SQLSTATE, when the server sent one.
    public var sqlState: SQLState?
    /// The constraint named by the server (unique, check, foreign key...), when any.
    public var constraint: String?
    public var message: String
    /// The server's DETAIL; for constraint violations it quotes row values, so read it only where
    /// they may be shown.
    public var detail: String?
    public var hint: String?
    /// The statement's first line (never its parameters), to say which statement failed.
    public var statement: String?

    public init(
        kind: Kind, sqlState: SQLState? = nil, constraint: String? = nil, message: String,
        detail: String? = nil, hint: String? = nil, statement: String? = nil
    ) {
        self.kind = kind
        self.sqlState = sqlState
        self.constraint = constraint
        self.message = message
        self.detail = detail
        self.hint = hint
        self.statement = statement
    }

    /// 23505: a unique constraint fired.
    public var isUniqueViolation: Bool { sqlState == .uniqueViolation }
    /// 40001 / 40P01: the transaction can be retried as a whole.
    public var isRetryableTransactionFailure: Bool {
        switch sqlState {
        case .serializationFailure?, .deadlockDetected?: return true
        default: return false
        }
    }
    /// The connection is gone (class 08, admin shutdown 57P01-57P03, or libpq reported it).
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        switch sqlState {
        case (SQLState.Class.connectionException)?, .adminShutdown?, .crashShutdown?, .cannotConnectNow?: return true
        default: return false
        }
    }

    public var description: String {
        var parts = ["PostgreSQL \(kind) error"]
        if let sqlState { parts[0] += " \(sqlState)" }
        parts.append(message)
        if let constraint { parts.append("constraint \(constraint)") }
        if let detail, sqlState?.class != .integrityConstraintViolation { parts.append("detail: \(detail)") }
        if let hint { parts.append("hint: \(hint)") }
        if let statement { parts.append("in: \(statement)") }
        return parts.joined(separator: "; ")
    }
}
