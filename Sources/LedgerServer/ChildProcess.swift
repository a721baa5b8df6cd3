import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with posix_spawn and waitpid.
///
/// Not Foundation's `Process`: on Linux it parks run loops on dispatch's global queue, whose few
/// threads Swift's concurrency runtime also needs (a test suite starting many children in parallel
/// starved itself), and it lost track of a child once `pg_ctl start` left a server running. Input
/// and output go through temporary files, not pipes, so a grandchild that outlives the command
/// (the PostgreSQL server) cannot hold a read open forever.
public enum ChildProcess {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs the program on a thread of its own and returns when it has exited.
    /// `environment` nil inherits this process's environment. Cancelling the calling task kills
    /// the program (SIGKILL), so a program that never exits cannot hang its caller past a time limit.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String? = nil
    ) async throws -> Output {
        let child = RunningChild()
        return try await withTaskCancellationHandler {
            try await onOwnThread {
                try runBlocking(executable, arguments, environment: environment, stdin: stdin, child: child)
            }
        } onCancel: {
            child.terminate()
        }
    }

    /// The pid of a running child, shared by the thread waiting for it and a cancellation handler.
    /// `terminate` and the end of the wait hold the same lock, so a reaped (maybe reused) pid is never signalled.
    final class RunningChild: Sendable {
        private let state = Mutex<(pid: pid_t?, killed: Bool)>((nil, false))

        func started(_ pid: pid_t) {
            state.withLock { s in
                s.pid = pid
                if s.killed { _ = kill(pid, SIGKILL) }
            }
        }

        func reaped() { state.withLock { $0.pid = nil } }

        func terminate() {
            state.withLock { s in
                s.killed = true
                if let pid = s.pid { _ = kill(pid, SIGKILL) }
            }
        }
    }

    /// Runs blocking work on a new thread: never on Swift's cooperative pool (one thread per core)
    /// nor on dispatch's global queues.
    public static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Runs the program on the calling thread, which it blocks until the program exits.
    public static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String? = nil
    ) throws -> Output {
        try runBlocking(executable, arguments, environment: environment, stdin: stdin, child: nil)
    }

    static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]?,
        stdin: String?, child: RunningChild?
    ) throws -> Output {
        let base = "/tmp/ledger-child-\(getpid())-\(UUID().uuidString)"
        let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
        defer {
            unlink(inPath)
            unlink(outPath)
            unlink(errPath)
        }
        guard FileManager.default.createFile(atPath: inPath, contents: Data((stdin ?? "").utf8)) else {
            throw SpawnError(description: "cannot write \(inPath)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc: Int32
        if let environment {
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { envp.forEach { free($0) } }
            rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        } else {
            rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        }
        guard rc == 0 else {
            throw SpawnError(description: "cannot run \(executable): \(String(cString: strerror(rc)))")
        }
        child?.started(pid)
        defer { child?.reaped() }
        var status: Int32 = 0
        // WNOWAIT: wait for the exit without reaping, so the pid stays ours until `reaped()`.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
            if errno != EINTR { throw SpawnError(description: "waitid failed for \(executable) (errno \(errno))") }
        }
        child?.reaped()
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            if errno != EINTR { throw SpawnError(description: "wait4 failed for \(executable) (errno \(errno))") }
        }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Output(
            status: code,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
