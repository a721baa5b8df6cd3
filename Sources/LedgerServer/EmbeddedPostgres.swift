import Foundation
import LedgerCore
import LedgerPostgres

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster under a local folder (default `./.ledger`, or `LEDGER_HOME`),
/// started with the installed server binaries and reached on a Unix socket only (no TCP port).
///
/// PostgreSQL refuses to run as root: when run by root, the server runs as the `postgres` user
/// (created by Debian's `postgresql` package) and the data folder is owned by it.
public struct EmbeddedPostgres: Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case noServerBinaries(searched: [String])
        case command(String, status: Int32, output: String)
        case setup(String)

        public var description: String {
            switch self {
            case .noServerBinaries(let searched):
                return
                    "no PostgreSQL server binaries found (looked in \(searched.joined(separator: ", ")) and PATH); install them with `apt-get install -y postgresql`, or set LEDGER_DATABASE_URL to an existing database"
            case .command(let cmd, let status, let output):
                return
                    "`\(cmd)` failed with status \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
            case .setup(let message):
                return message
            }
        }
    }

    public enum Status: Sendable, Equatable {
        case notInitialized
        case stopped
        case running
    }

    /// The folder holding `postgres/` (data), `run/` (socket), `postgres.log` and `lock`.
    public let root: URL
    public let port = 5432
    public let database = "ledger"
    public let user = "ledger"

    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// `LEDGER_HOME`, or `.ledger` in the current directory. As root, when the `postgres` user could
    /// not reach that folder (a parent without o+x, such as /root), a folder under /var/tmp named after it.
    public static func defaultRoot() -> URL {
        if let home = ProcessInfo.processInfo.environment["LEDGER_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home)
        }
        return defaultRoot(in: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
    }

    /// `.ledger` in `directory`, or its /var/tmp stand-in when root's server user could not reach it.
    public static func defaultRoot(in directory: URL) -> URL {
        let local = directory.appendingPathComponent(".ledger")
        if isRoot, !othersCanTraverse(local.deletingLastPathComponent()) {
            return URL(fileURLWithPath: "/var/tmp/ledger-\(Self.shortDigest(local.path))")
        }
        return local
    }

    /// True when every folder from `/` to `url` lets other users search it (o+x).
    static func othersCanTraverse(_ url: URL) -> Bool {
        var path = url.standardizedFileURL
        while true {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path.path),
                let mode = attributes[.posixPermissions] as? Int
            else { return false }
            if mode & 0o001 == 0 { return false }
            if path.path == "/" { return true }
            path = path.deletingLastPathComponent()
        }
    }

    var dataDirectory: URL { root.appendingPathComponent("postgres") }
    var logFile: URL { root.appendingPathComponent("postgres.log") }

    /// The socket folder; a short one under /tmp when the path would exceed the 107-byte socket limit.
    var socketDirectory: URL {
        let candidate = root.appendingPathComponent("run")
        if candidate.path.utf8.count + 20 < 100 { return candidate }
        let digest = Self.shortDigest(root.path)
        return URL(fileURLWithPath: "/tmp/ledger-\(digest)")
    }

    /// The libpq URL of the embedded database.
    public var url: String {
        let host =
            socketDirectory.path.addingPercentEncoding(
                withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+")))
            ?? socketDirectory.path
        return "postgresql:///\(database)?host=\(host)&port=\(port)&user=\(user)"
    }

    static var isRoot: Bool { geteuid() == 0 }

    // MARK: Commands

    public func status() throws -> Status {
        guard FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) else {
            return .notInitialized
        }
        let bin = try Self.binDirectory()
        let result = try run(
            [bin.appendingPathComponent("pg_ctl").path, "-D", dataDirectory.path, "status"], asServerUser: true)
        return result.status == 0 ? .running : .stopped
    }

    /// Initializes (first time) and starts the cluster unless it runs already; creates the database.
    /// Returns the URL. Safe to call from several processes at once.
    @discardableResult
    public func start(log: @escaping @Sendable (String) -> Void = { _ in }) async throws -> String {
        let db = self
        try await ChildProcess.onOwnThread { try db.startBlocking(log: log) }
        try await createDatabaseIfMissing(log: log)
        return url
    }

    /// Makes this cluster a hot standby of `primary` (first time: `pg_basebackup` with streaming
    /// WAL and a standby configuration) and starts it; returns its URL. Readers (audit,
    /// verify-chain, read) can run on it; it accepts no writes.
    @discardableResult
    public func startStandby(
        of primary: EmbeddedPostgres, synchronous: Bool = false,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> String {
        try await startStandby(ofURL: primary.url, synchronous: synchronous, log: log)
    }

    /// Makes this cluster a hot standby of the server at `primaryURL` (a superuser's URL: first
    /// time, `pg_basebackup` with streaming WAL and a standby configuration) and starts it; returns
    /// its URL. With `synchronous`, the primary is then told (`synchronous_standby_names = '*'`)
    /// to wait for a standby to have flushed each commit before it returns: an acknowledged append
    /// is on two machines. The copy does not keep that setting, so a standby promoted after its
    /// primary died takes commits alone until a standby of its own is made (with this call).
    @discardableResult
    public func startStandby(
        ofURL primaryURL: String, synchronous: Bool, log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> String {
        let db = self
        try await ChildProcess.onOwnThread {
            try FileManager.default.createDirectory(at: db.root, withIntermediateDirectories: true)
            try db.withLock {
                guard try db.status() == .notInitialized else { return }
                try db.prepareFolders()
                log(
                    "copying \(ConnectionString.redacted(primaryURL)) into \(db.dataDirectory.path) (pg_basebackup, hot standby)"
                )
                let bin = try Self.binDirectory()
                let r = try db.run(
                    [
                        bin.appendingPathComponent("pg_basebackup").path, "-d", primaryURL, "-D", db.dataDirectory.path,
                        "-R", "-X", "stream", "-c", "fast",
                    ], asServerUser: true)
                guard r.status == 0 else {
                    throw Failure.command(
                        "pg_basebackup", status: r.status, output: ConnectionString.redacted(r.output))
                }
                // The primary's own synchronous setting stays with the primary.
                let auto = db.dataDirectory.appendingPathComponent("postgresql.auto.conf")
                if let text = try? String(contentsOf: auto, encoding: .utf8) {
                    let kept = text.split(separator: "\n", omittingEmptySubsequences: false).filter {
                        !$0.hasPrefix("synchronous_standby_names")
                    }
                    try kept.joined(separator: "\n").write(to: auto, atomically: true, encoding: .utf8)
                }
            }
            try db.startBlocking(log: log)
        }
        if synchronous {
            let primary = try await Self.connectWhenReady(log: log) {
                try await PostgresConnection.connect(primaryURL, applicationName: "ledger-db")
            }
            defer { Task { await primary.close() } }
            try await primary.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            try await primary.execute("SELECT pg_reload_conf()")
            // What the primary committed before it waited for a standby: received here before this
            // returns, so from now on every acknowledged commit is on both.
            let lsn = try await primary.query("SELECT pg_current_wal_lsn()::text").string(0, 0) ?? "0/0"
            let standby = try await Self.connectWhenReady(log: log) {
                try await PostgresConnection.connect(url, applicationName: "ledger-db")
            }
            defer { Task { await standby.close() } }
            var caughtUp = false
            for _ in 0..<600 where !caughtUp {
                caughtUp =
                    try await standby.query(
                        "SELECT coalesce(pg_last_wal_receive_lsn() >= $1::pg_lsn, false)", [.text(lsn)]
                    ).string(0, 0) == "t"
                if !caughtUp { try await Task.sleep(for: .milliseconds(100)) }
            }
            guard caughtUp else {
                throw Failure.setup("the standby did not receive the primary's WAL up to \(lsn) within a minute")
            }
            log("the primary now waits for this standby before a commit returns (synchronous_standby_names = '*')")
        }
        return url
    }

    /// Promotes this standby to a primary (`pg_ctl promote`, waiting until it takes writes).
    public func promote(log: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        let db = self
        try await ChildProcess.onOwnThread {
            try db.withLock {
                let bin = try Self.binDirectory()
                log("promoting \(db.dataDirectory.path) to primary")
                let r = try db.run(
                    [
                        bin.appendingPathComponent("pg_ctl").path, "-D", db.dataDirectory.path, "-w", "-t", "60",
                        "promote",
                    ], asServerUser: true)
                guard r.status == 0 else { throw Failure.command("pg_ctl promote", status: r.status, output: r.output) }
            }
        }
    }

    public func stop() async throws {
        let db = self
        try await ChildProcess.onOwnThread { try db.stopBlocking() }
    }

    func startBlocking(log: (String) -> Void) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try withLock {
            let bin = try Self.binDirectory()
            if try status() == .running { return }
            try prepareFolders()
            if try status() == .notInitialized {
                log("initializing a private PostgreSQL cluster in \(dataDirectory.path)")
                let r = try run(
                    [
                        bin.appendingPathComponent("initdb").path, "-D", dataDirectory.path, "-U", user, "-A", "trust",
                        "-E", "UTF8", "--no-locale",
                    ], asServerUser: true)
                guard r.status == 0 else { throw Failure.command("initdb", status: r.status, output: r.output) }
                let settings = """

                    # ledger: private cluster, Unix socket only
                    listen_addresses = ''
                    unix_socket_directories = '\(socketDirectory.path)'
                    port = \(port)
                    max_connections = 400
                    shared_buffers = 256MB
                    max_wal_size = 2GB

                    """
                let conf = try FileHandle(forWritingTo: dataDirectory.appendingPathComponent("postgresql.conf"))
                try conf.seekToEnd()
                try conf.write(contentsOf: Data(settings.utf8))
                try conf.close()
            }
            log("starting PostgreSQL (\(bin.path)) on \(socketDirectory.path)")
            let r = try run(
                [
                    bin.appendingPathComponent("pg_ctl").path, "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t",
                    "60",
                    "-o", "-c unix_socket_directories='\(socketDirectory.path)'", "start",
                ], asServerUser: true)
            guard r.status == 0 else {
                let tail =
                    (try? String(contentsOf: logFile, encoding: .utf8))?.split(separator: "\n").suffix(5).joined(
                        separator: "\n") ?? ""
                throw Failure.command("pg_ctl start", status: r.status, output: r.output + "\n" + tail)
            }
        }
    }

    func stopBlocking() throws {
        try withLock {
            guard try status() == .running else { return }
            let bin = try Self.binDirectory()
            let r = try run(
                [bin.appendingPathComponent("pg_ctl").path, "-D", dataDirectory.path, "-m", "fast", "-w", "stop"],
                asServerUser: true)
            guard r.status == 0 else { throw Failure.command("pg_ctl stop", status: r.status, output: r.output) }
        }
    }

    /// Whether a failed connection says the server runs but does not take connections yet: it is
    /// starting, or recovering after a crash (57P03, which libpq reports without its code).
    static func isStartingUp(_ error: any Error) -> Bool {
        guard let e = error as? PostgresError else { return false }
        if e.sqlState == .cannotConnectNow { return true }
        return e.kind == .connection
            && [
                "not yet accepting connections", "database system is starting up",
                "database system is in recovery mode",
            ]
            .contains { e.message.contains($0) }
    }

    /// Connects with `connect`, waiting while the server is starting or recovering after a crash:
    /// up to `attempts` tries, `pause` apart (the default, a minute, as `pg_ctl start` waits).
    static func connectWhenReady(
        attempts: Int = 600, pause: Duration = .milliseconds(100), log: (String) -> Void = { _ in },
        _ connect: () async throws -> PostgresConnection
    ) async throws -> PostgresConnection {
        var attempt = 1
        while true {
            do { return try await connect() } catch  where attempt < attempts && isStartingUp(error) {
                if attempt == 1 {
                    log("PostgreSQL is starting or recovering after a crash; waiting for it to accept connections")
                }
                attempt += 1
                try await Task.sleep(for: pause)
            }
        }
    }

    private func createDatabaseIfMissing(log: (String) -> Void) async throws {
        let adminURL = url.replacingOccurrences(of: "postgresql:///\(database)?", with: "postgresql:///postgres?")
        let conn = try await Self.connectWhenReady(log: log) {
            try await PostgresConnection.connect(adminURL, applicationName: "ledger-db")
        }
        defer { Task { await conn.close() } }
        let exists = try await conn.query("SELECT 1 FROM pg_database WHERE datname = $1", [.text(database)]).count > 0
        if !exists {
            do {
                try await conn.execute("CREATE DATABASE \(quoteIdentifier(database))")
            } catch let error as PostgresError where error.sqlState == .duplicateDatabase || error.isUniqueViolation {
                // Created concurrently by another process.
            }
        }
    }
}
