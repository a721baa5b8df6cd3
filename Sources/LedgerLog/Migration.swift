import Foundation
import LedgerCore

/// One versioned SQL file (`NNNN_name.sql`).
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String
    /// SHA-256 of the file's bytes, recorded when applied.
    public var checksum: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(Array(sql.utf8)).hexString
    }

    /// The event log's migrations shipped with this build (this module's `Migrations` folder).
    /// Combine them with other modules' sets (the read models) with ``combining(_:)``.
    public static func eventLog() throws -> [Migration] {
        guard let url = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw LedgerError.migration("the event log's Migrations resource is missing from this build")
        }
        return try load(directory: url)
    }

    /// The `NNNN_description.sql` files of `directory`, in version order; refuses a file named
    /// otherwise and two files with one version.
    public static func load(directory: URL) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        var out: [Migration] = []
        for file in names {
            let stem = String(file.dropLast(4))
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw LedgerError.migration("\(file): migration files are named NNNN_description.sql")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            out.append(Migration(version: version, name: stem, sql: sql))
        }
        return try ordered(out)
    }

    /// Several modules' migrations as one sequence in version order (the versions are one series
    /// across modules: each set owns its own numbers); refuses two migrations with one version.
    public static func combining(_ sets: [[Migration]]) throws -> [Migration] {
        try ordered(sets.flatMap { $0 })
    }

    static func ordered(_ migrations: [Migration]) throws -> [Migration] {
        let out = migrations.sorted { $0.version < $1.version }
        for (a, b) in zip(out, out.dropFirst()) where a.version == b.version {
            throw LedgerError.migration("\(a.name) and \(b.name) share version \(a.version)")
        }
        return out
    }
}
