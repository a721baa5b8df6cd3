import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with posix_spawn and waitpid, on a thread of its own.
///
/// Not Foundation's `Process`: on Linux it parks run loops on dispatch's global queue, whose few
/// threads Swift's concurrency runtime also needs, and a test suite that starts many children
/// in parallel can starve itself. Input and output go through temporary files, not pipes.
public enum ChildProcess {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String], stdin: String?) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(executable, arguments, environment: environment, stdin: stdin) })
            }.start()
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String], stdin: String?) throws -> Output {
        let base = "/tmp/ledger-child-\(getpid())-\(UUID().uuidString)"
        let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
        defer { unlink(inPath); unlink(outPath); unlink(errPath) }
        guard FileManager.default.createFile(atPath: inPath, contents: Data((stdin ?? "").utf8)) else {
            throw SpawnError(description: "cannot write \(inPath)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else { throw SpawnError(description: "cannot run \(executable): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { throw SpawnError(description: "waitpid failed (errno \(errno))") }
        }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Output(status: code,
                      stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
