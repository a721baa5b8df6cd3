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
            return "version conflict on stream \"\(stream)\": expected \(expected), but the stream \(current) (event \(eventId.lowercased)); nothing from this batch was written — re-read the stream and decide again"
        case .idempotencyConflict(let key, let eventId, let position, let reason):
            let what = key.map { "idempotency key \"\($0)\"" } ?? "event id \(eventId.lowercased)"
            return "idempotency conflict: \(what) is already stored at position \(position) with different content (\(reason)); nothing from this batch was written"
        case .invalidEvent(let e):
            return "invalid event: \(e)"
        case .migration(let m):
            return "migration error: \(m)"
        case .database(let e):
            return e.description
        }
    }
}
