import Foundation
import LedgerLog

extension Migration {
    /// The read models' migrations shipped with this build (this module's `Migrations` folder:
    /// the tables, then their indexes). They need the event log's migrations applied before them.
    public static func readModels() throws -> [Migration] {
        guard let url = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw LedgerError.migration("the read models' Migrations resource is missing from this build")
        }
        return try load(directory: url)
    }

    /// A whole ledger's migrations: the event log's and the read models', in version order.
    public static func eventLogAndReadModels() throws -> [Migration] {
        try combining([eventLog(), readModels()])
    }
}
