import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
@testable import LedgerProjection
import Testing

/// SQLSTATEs as values, and the ledger's error codes derived from them.
@Suite("Error codes")
struct ErrorCodeTests {
    static func serverError(_ state: SQLState, detail: String? = nil) -> PostgresError {
        PostgresError(
            kind: .server, sqlState: state, constraint: "events_idempotency_key_key", message: "refused", detail: detail
        )
    }

    @Test(
        arguments: [
            (SQLState.uniqueViolation, LedgerError.Code.database),
            (.serializationFailure, .database),
            (.raiseException, .database),
            (.undefinedTable, .schemaNotMigrated),
            (.invalidSchemaName, .schemaNotMigrated),
            (.adminShutdown, .databaseUnavailable),
            (.cannotConnectNow, .databaseUnavailable),
            (.connectionFailure, .databaseUnavailable),
            ("08P01", .databaseUnavailable),
        ] as [(SQLState, LedgerError.Code)])
    func aDatabaseFailureHasTheCodeOfItsState(_ state: SQLState, _ code: LedgerError.Code) {
        #expect(LedgerError.database(Self.serverError(state)).code == code)
    }

    @Test func aBrokenConnectionWithoutStateIsUnavailable() {
        #expect(
            LedgerError.Code(PostgresError(kind: .connection, message: "server closed the connection"))
                == .databaseUnavailable)
        // A cluster where no ledger was ever migrated has no ledger roles: that is "run ledger migrate", not "server down".
        let noRole =
            #"cannot connect to postgresql:///ledger: connection to server failed: FATAL:  role "ledger_reader" does not exist"#
        #expect(LedgerError.Code(PostgresError(kind: .connection, message: noRole)) == .schemaNotMigrated)
        #expect(
            LedgerError.Code(PostgresError(kind: .connection, message: #"FATAL:  role "alice" does not exist"#))
                == .databaseUnavailable)
    }

    @Test func everyLedgerErrorHasItsOwnCode() {
        let id = UUID()
        let errors: [LedgerError] = [
            .versionConflict(stream: "s", expected: .noStream, actual: 0, eventId: id),
            .idempotencyConflict(key: "k", eventId: id, storedPosition: 1, reason: "the payload differs"),
            .invalidEvent(EventInputError(message: "bad")),
            .migration("edited"),
            .database(Self.serverError(.checkViolation)),
        ]
        #expect(errors.map(\.code) == [.versionConflict, .idempotencyConflict, .invalidEvent, .migration, .database])
        #expect(Set(errors.map(\.code)).count == errors.count)
        let projection: [any LedgerCodedError] = [
            ProjectorBusy(holderPID: 7), ProjectorFailed(description: "x"), RebuildRefused(description: "y"),
            ReadModelsApart(description: "z"),
        ]
        #expect(projection.map(\.code) == [.projectorBusy, .projectorFailed, .rebuildRefused, .readModelsApart])
    }

    @Test(arguments: [
        (SQLState.uniqueViolation, "Key (idempotency_key)=(order:secret-42) already exists."),
        (
            .foreignKeyViolation,
            "Key (stream_id, stream_version)=(order:secret-42, 2) is not present in table \"events\"."
        ),
        (.checkViolation, "Failing row contains (order:secret-42)."),
    ])
    func constraintViolationsKeepRowValuesOutOfMessages(_ state: SQLState, _ detail: String) {
        let error = Self.serverError(state, detail: detail)
        #expect(error.detail == detail)
        #expect(!error.description.contains("secret-42"))
        #expect(!LedgerError.database(error).description.contains("secret-42"))
        #expect(error.description.contains("events_idempotency_key_key"))
    }

    @Test func otherDetailsAreShown() {
        #expect(
            Self.serverError(.raiseException, detail: "the log is append-only").description.contains(
                "the log is append-only"))
    }

    @Test(
        arguments: [
            (SQLState.serializationFailure, "retry"), (.deadlockDetected, "retry"), (.uniqueViolation, "duplicate"),
            ("23514", "constraint"), ("08006", "connection"), (.queryCanceled, "other"),
            (.insufficientPrivilege, "other"),
        ] as [(SQLState, String)])
    func statesMatchInASwitch(_ state: SQLState, _ expected: String) {
        let kind: String
        switch state {
        case .serializationFailure, .deadlockDetected: kind = "retry"
        case .uniqueViolation: kind = "duplicate"
        case SQLState.Class.integrityConstraintViolation: kind = "constraint"
        case SQLState.Class.connectionException: kind = "connection"
        default: kind = "other"
        }
        #expect(kind == expected)
    }

    @Test func namedStatesHaveTheirCodes() {
        #expect(
            [
                SQLState.uniqueViolation, .serializationFailure, .deadlockDetected, .foreignKeyViolation,
                .checkViolation,
                .raiseException, .undefinedTable, .insufficientPrivilege, .queryCanceled, .adminShutdown,
            ].map(\.code)
                == ["23505", "40001", "40P01", "23503", "23514", "P0001", "42P01", "42501", "57014", "57P01"])
        #expect(SQLState.connectionFailure.class == .connectionException)
    }
}
