import Foundation
import LedgerCore
import LedgerPostgres

#if canImport(Glibc)
import Glibc
#endif

// Where the server's binaries are, and running them as the server's user under the cluster's lock
// (EmbeddedPostgres.swift).
extension EmbeddedPostgres {
    /// The first 12 hex digits of the SHA-256 of `s`: a short, stable name for a folder's path.
    static func shortDigest(_ s: String) -> String { String(SHA256.hash(Array(s.utf8)).hexString.prefix(12)) }

    // MARK: Helpers

    /// Newest `/usr/lib/postgresql/N/bin`, else the folder of `pg_ctl` on PATH, else `LEDGER_PG_BIN`.
    public static func binDirectory() throws -> URL {
        let env = ProcessInfo.processInfo.environment
        if let explicit = env["LEDGER_PG_BIN"], !explicit.isEmpty {
            let dir = URL(fileURLWithPath: explicit)
            guard FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("pg_ctl").path) else {
                throw Failure.noServerBinaries(searched: ["LEDGER_PG_BIN=\(explicit)"])
            }
            return dir
        }
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).compactMap(Int.init).sorted(
            by: >)
        for v in versions {
            let dir = URL(fileURLWithPath: "\(base)/\(v)/bin")
            if FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("pg_ctl").path),
                FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("initdb").path)
            {
                return dir
            }
        }
        for dir in (env["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir))
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("initdb").path) {
                let resolved = candidate.appendingPathComponent("initdb").resolvingSymlinksInPath()
                    .deletingLastPathComponent()
                return resolved
            }
        }
        throw Failure.noServerBinaries(searched: ["\(base)/*/bin"])
    }

    func prepareFolders() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        guard Self.isRoot else { return }
        guard getpwnam("postgres") != nil else {
            throw Failure.setup(
                "running as root, but there is no `postgres` user to run the server as (PostgreSQL refuses root); install Debian's postgresql package or run as a normal user"
            )
        }
        // The server user must reach the folder; if it cannot (e.g. under /root), say so.
        let probe = try run(["/bin/sh", "-c", "test -x '\(root.path)'"], asServerUser: true)
        guard probe.status == 0 else {
            throw Failure.setup(
                "the postgres user cannot reach \(root.path); set LEDGER_HOME to a folder it can reach (e.g. /var/tmp/ledger)"
            )
        }
        for dir in [root, socketDirectory] {
            let r = try run(["/bin/chown", "postgres:postgres", dir.path], asServerUser: false)
            guard r.status == 0 else { throw Failure.command("chown", status: r.status, output: r.output) }
        }
        if fm.fileExists(atPath: dataDirectory.path) {
            _ = try run(["/bin/chown", "-R", "postgres:postgres", dataDirectory.path], asServerUser: false)
        }
    }

    /// Runs a command (as `postgres` when we are root and `asServerUser`), blocking this thread;
    /// output is stdout followed by stderr.
    func run(_ arguments: [String], asServerUser: Bool) throws -> (status: Int32, output: String) {
        var args = arguments
        if asServerUser, Self.isRoot {
            if FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") {
                args = ["/usr/sbin/runuser", "-u", "postgres", "--"] + args
            } else {
                args = [
                    "/bin/su", "-s", "/bin/sh", "postgres", "-c",
                    args.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " "),
                ]
            }
        }
        let result = try ChildProcess.runBlocking(args[0], Array(args.dropFirst()))
        return (result.status, result.stdout + result.stderr)
    }

    /// Holds an exclusive lock on `<root>/lock` while `body` runs (start/stop from several processes).
    func withLock<T>(_ body: () throws -> T) throws -> T {
        let path = root.appendingPathComponent("lock").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o666)  // not inherited by the server pg_ctl starts
        guard fd >= 0 else { throw Failure.setup("cannot open lock file \(path) (errno \(errno))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw Failure.setup("cannot lock \(path) (errno \(errno))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
