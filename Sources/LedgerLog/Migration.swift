import Foundation
import LedgerCore

/// One versioned SQL file (`NNNN_name.sql`). A line `-- function: NAME.sql` in it stands for the
/// current text of that SQL function's file (``SQLFunction``): a function is written once, in its
/// own file, and the migration that first needs it creates it from there.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    /// What runs: the file's text, each `-- function:` line replaced by the function's text.
    public var sql: String
    /// SHA-256 of the file's bytes (its `-- function:` lines as written), recorded when applied.
    public var checksum: String
    /// The functions its `-- function:` lines name: a migrate keeps each one's current text applied.
    public var functions: [SQLFunction]

    public init(version: Int, name: String, sql: String) {
        self.init(version: version, name: name, file: sql, sql: sql, functions: [])
    }

    init(version: Int, name: String, file: String, sql: String, functions: [SQLFunction]) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(Array(file.utf8)).hexString
        self.functions = functions
    }

    /// The event log's migrations shipped with this build (this module's `Migrations` folder), their
    /// `-- function:` lines read from its `Functions` folder. Combine them with other modules' sets
    /// (the read models) with ``combining(_:)``.
    public static func eventLog() throws -> [Migration] {
        guard let url = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw LedgerError.migration("the event log's Migrations resource is missing from this build")
        }
        return try load(directory: url, functions: SQLFunction.eventLog())
    }

    static let directive = "-- function: "

    /// The `NNNN_description.sql` files of `directory`, in version order; refuses a file named
    /// otherwise, two files with one version, and a `-- function:` line naming none of `functions`.
    public static func load(directory: URL, functions: [SQLFunction] = []) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        let byFile = Dictionary(uniqueKeysWithValues: functions.map { ($0.name + ".sql", $0) })
        var out: [Migration] = []
        for file in names {
            let stem = String(file.dropLast(4))
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw LedgerError.migration("\(file): migration files are named NNNN_description.sql")
            }
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            var lines: [String] = []
            var named: [SQLFunction] = []
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard line.hasPrefix(directive) else {
                    lines.append(String(line))
                    continue
                }
                let fileName = line.dropFirst(directive.count).split(separator: " ").first.map(String.init) ?? ""
                guard let function = byFile[fileName] else {
                    throw LedgerError.migration(
                        "\(file):\(n + 1): no SQL function file \(fileName): a `-- function: NAME.sql` line must name a file of the Functions folder (\(byFile.keys.sorted().joined(separator: ", ")))"
                    )
                }
                lines.append(function.sql)
                named.append(function)
            }
            out.append(
                Migration(
                    version: version, name: stem, file: text, sql: lines.joined(separator: "\n"), functions: named))
        }
        return try ordered(out)
    }

    /// The checksums migrations had before their SQL functions moved into files of their own (the same
    /// effect: each function ends as its file's text). A schema migrated then is accepted, and its
    /// record updated to the file's checksum now.
    public static let formerChecksums: [Int: Set<String>] = [
        1: ["3ed56e4da7db371675105890b9ee119cd666855f12db83822fdf90bde26e3831"],
        4: ["a88367182afa1b30b9fda9d2835b646887d037d4e1adf43a69f50cf72179c5ad"],
        11: ["dcccaff97273d19ff1a4ed3a5680c3f4c6f89218b83b514b92c213ab21d56b6d"],
        12: ["1ab8eeb920650490b3f070b0bae8fa46d0879b06cc5e9a75cd38ed807027d1fa"],
        13: ["6a428b00fa7d43afc558514e5c5835814e3860a4f152df62af649a19e43a8601"],
        16: ["8f47ae63af0b9038f39a20d59247ab6a17215256bbda7f2f5f45547d97c91517"],
        18: ["743a43c6728d482c201e032b8e865d6b0ee0c37fbde14d07084aa9cbe3d9b597"],
    ]

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

/// One SQL function of the log (or a function with the helpers only it uses), written once in its
/// own file of the `Functions` folder (`CREATE OR REPLACE FUNCTION ...`), in the Message DB manner:
/// the migration that first needs it creates it from that file (a `-- function:` line), and every
/// migrate applies the file again when its text has changed since (recorded in `schema_functions`).
public struct SQLFunction: Sendable, Hashable {
    /// The file's name without `.sql` (`append_events`).
    public var name: String
    public var sql: String
    public var checksum: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
        self.checksum = SHA256.hash(Array(sql.utf8)).hexString
    }

    /// The event log's functions shipped with this build, by name.
    public static func eventLog() throws -> [SQLFunction] {
        guard let url = Bundle.module.url(forResource: "Functions", withExtension: nil) else {
            throw LedgerError.migration("the event log's Functions resource is missing from this build")
        }
        return try load(directory: url)
    }

    public static func load(directory: URL) throws -> [SQLFunction] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }.sorted().map
        { file in
            SQLFunction(
                name: String(file.dropLast(4)),
                sql: try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
        }
    }
}
