import Foundation
import LedgerCore
import LedgerPostgres

/// Why an append or a read was refused. Nothing from a refused batch is written.
public enum LedgerError: Error, CustomStringConvertible, Sendable {
    /// The stream was not at the expected version.
    case versionConflict(stream: String, expected: ExpectedVersion, actual: Int64?, eventId: UUID)
    /// An event id or idempotency key is already stored with different content.
    case idempotencyConflict(key: String?, eventId: UUID, storedPosition: Int64, reason: String)
    /// The event failed validation.
    case invalidEvent(EventInputError)
    /// The migrations applied to the database differ from this build's.
    case migration(String)
    /// The database refused or failed.
    case database(PostgresError)

    public var description: String {
        switch self {
        case .versionConflict(let stream, let expected, let actual, let eventId):
            let current = actual.map { "is at version \($0)" } ?? "does not exist"
            return
                "version conflict on stream \(Echo.quoted(stream)): expected \(expected), but the stream \(current), so this batch's event \(eventId.lowercased) was refused; nothing from this batch was written — re-read the stream and decide again"
        case .idempotencyConflict(let key, let eventId, let position, let reason):
            let what = key.map { "idempotency key \(Echo.quoted($0))" } ?? "event id \(eventId.lowercased)"
            let where_ = position > 0 ? "is already stored at position \(position)" : "appears twice in this batch"
            return
                "idempotency conflict: \(what) \(where_) with different content (\(reason)); nothing from this batch was written"
        case .invalidEvent(let e):
            return "invalid event: \(e)"
        case .migration(let m):
            return "migration error: \(m)"
        case .database(let e):
            return e.description
        }
    }
}

extension LedgerError {
    /// The appended event a conflict is about (one of the batch's), so that a caller can name the
    /// line or element it came from; nil for other errors.
    public var eventId: UUID? {
        switch self {
        case .versionConflict(_, _, _, let id), .idempotencyConflict(_, let id, _, _): return id
        case .invalidEvent, .migration, .database: return nil
        }
    }

    /// The input line of the event a conflict is about, when the batch tells it: `lines[i]` is the
    /// line of `events[i]`. An event id on one line is that line; on two, a conflict inside the
    /// batch is the later copy's. With more copies, or two and a stored original, the line is not
    /// told (nil), never guessed: the error names the event id or key.
    public func line(events: [NewEvent], lines: [Int]) -> Int? {
        guard let id = eventId else { return nil }
        let copies = events.indices.filter { events[$0].eventId == id }
        let index: Int?
        switch copies.count {
        case 1: index = copies[0]
        case 2:
            if case .idempotencyConflict(_, _, 0, _) = self { index = copies[1] } else { index = nil }
        default: index = nil
        }
        guard let i = index, i < lines.count else { return nil }
        return lines[i]
    }
}

extension LedgerError {
    /// What kind of failure an error is, for callers that act on it (exit statuses, retries,
    /// metrics) without parsing messages. Extensible: modules built on the log add their own codes
    /// (`extension LedgerError.Code { public static let ... }`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name, such as `version-conflict`.
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A stream was not at the expected version; nothing was written.
        public static let versionConflict = Code("version-conflict")
        /// An event id or idempotency key is stored with other content; nothing was written.
        public static let idempotencyConflict = Code("idempotency-conflict")
        /// An event failed validation; nothing was sent.
        public static let invalidEvent = Code("invalid-event")
        /// The migrations applied to the schema differ from this build's, or the log head is missing.
        public static let migration = Code("migration")
        /// The ledger's schema or one of its tables does not exist (SQLSTATE 3F000, 42P01).
        public static let schemaNotMigrated = Code("schema-not-migrated")
        /// The database cannot be reached, or the connection broke (class 08, 57P01-57P03).
        public static let databaseUnavailable = Code("database-unavailable")
        /// Any other failure the database reported.
        public static let database = Code("database")

        /// The code of a database failure, from its SQLSTATE.
        public init(_ error: PostgresError) {
            if error.isConnectionFailure {
                // The ledger's login roles are made by its first migration: a cluster without them
                // was never migrated.
                let missingRole = error.message.contains("role \"ledger_") && error.message.contains("does not exist")
                self = missingRole ? .schemaNotMigrated : .databaseUnavailable
                return
            }
            switch error.sqlState {
            case .undefinedTable?, .invalidSchemaName?: self = .schemaNotMigrated
            default: self = .database
            }
        }
    }

    /// This error's code.
    public var code: Code {
        switch self {
        case .versionConflict: return .versionConflict
        case .idempotencyConflict: return .idempotencyConflict
        case .invalidEvent: return .invalidEvent
        case .migration: return .migration
        case .database(let e): return Code(e)
        }
    }
}

/// An error that carries a ``LedgerError/Code``: ``LedgerError``, and the errors of the modules
/// built on the log.
public protocol LedgerCodedError: Error {
    var code: LedgerError.Code { get }
}

extension LedgerError: LedgerCodedError {}
