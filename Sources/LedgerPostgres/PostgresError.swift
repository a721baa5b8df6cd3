/// An error from PostgreSQL or from libpq, carrying what an operator needs to act on it:
/// the SQLSTATE, the constraint that fired, the server's message, detail and hint.
///
/// Its `description` never contains a password or a parameter value.
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
    /// Five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    /// The constraint named by the server (unique, check, foreign key...), when any.
    public var constraint: String?
    public var message: String
    public var detail: String?
    public var hint: String?
    /// The statement's first line (never its parameters), to say which statement failed.
    public var statement: String?

    public init(kind: Kind, sqlState: String? = nil, constraint: String? = nil, message: String,
                detail: String? = nil, hint: String? = nil, statement: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.constraint = constraint
        self.message = message
        self.detail = detail
        self.hint = hint
        self.statement = statement
    }

    /// 23505: a unique constraint fired.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// 40001 / 40P01: the transaction can be retried as a whole.
    public var isRetryableTransactionFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// The connection is gone (class 08, admin shutdown 57P01-57P03, or libpq reported it).
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let s = sqlState else { return false }
        return s.hasPrefix("08") || s == "57P01" || s == "57P02" || s == "57P03"
    }

    public var description: String {
        var parts = ["PostgreSQL \(kind) error"]
        if let sqlState { parts[0] += " \(sqlState)" }
        parts.append(message)
        if let constraint { parts.append("constraint \(constraint)") }
        if let detail { parts.append("detail: \(detail)") }
        if let hint { parts.append("hint: \(hint)") }
        if let statement { parts.append("in: \(statement)") }
        return parts.joined(separator: "; ")
    }
}
