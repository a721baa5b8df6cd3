import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
@testable import LedgerServer
import LedgerTesting
import Synchronization
import Testing

@Suite("Embedded PostgreSQL", .timeLimit(.minutes(2)))
struct EmbeddedPostgresTests {
    /// A private cluster of its own (so restarting it disturbs no other test): start, append,
    /// stop, start again, append again. The second append reconnects; nothing is lost or doubled.
    @Test func serverRestartBetweenTwoAppends() async throws {
        let root = URL(fileURLWithPath: "/tmp/ledger-restart-\(UUID().uuidString.prefix(8))")
        let db = EmbeddedPostgres(root: root)
        do {
            try await restartBetweenAppends(db)
        } catch {
            try? await db.stop()
            try? FileManager.default.removeItem(at: root)
            throw error
        }
        try await db.stop()
        try FileManager.default.removeItem(at: root)
    }

    /// A cluster of its own again: a backend killed with SIGKILL makes the postmaster end every
    /// session and recover; `start` (what `ledger db start` runs) meanwhile waits for it instead of
    /// failing with "the database system is in recovery mode".
    @Test func startWaitsForACrashRecovery() async throws {
        let root = URL(fileURLWithPath: "/tmp/ledger-recover-\(UUID().uuidString.prefix(8))")
        let db = EmbeddedPostgres(root: root)
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            let url = try await db.start()
            let victim = try await PostgresConnection.connect(url)
            let pid = try await victim.query("SELECT pg_backend_pid()").int64(0, 0) ?? 0
            #expect(pid > 0 && kill(pid_t(pid), SIGKILL) == 0)
            #expect(try await db.start() == url, "start failed during the crash recovery")
            let after = try await PostgresConnection.connect(url)
            #expect(try await after.query("SELECT 1").int64(0, 0) == 1)
            await after.close()
            await victim.close()
        } catch {
            try? await db.stop()
            throw error
        }
        try await db.stop()
    }

    @Test("waiting for a server: through 'starting up' and 'in recovery mode', never through another failure")
    func connectWhenReadyWaitsOnlyForAStartingServer() async throws {
        try await TestDatabase.withSchema("whenready") { config in
            let refusals = [
                "FATAL:  the database system is starting up", "FATAL:  the database system is in recovery mode",
                "FATAL:  the database system is not yet accepting connections",
            ]
            let tries = Counter()
            let conn = try await EmbeddedPostgres.connectWhenReady(pause: .milliseconds(1)) {
                let n = tries.next()
                if n < refusals.count { throw PostgresError(kind: .connection, message: refusals[n]) }
                return try await PostgresConnection.connect(config.connectionString)
            }
            #expect(tries.value == 4)
            await conn.close()
            let other = Counter()
            await #expect(throws: PostgresError.self) {
                _ = try await EmbeddedPostgres.connectWhenReady(pause: .milliseconds(1)) {
                    _ = other.next()
                    throw PostgresError(
                        kind: .connection, message: "FATAL:  password authentication failed for user \"ledger\"")
                }
            }
            #expect(other.value == 1)
            let bounded = Counter()
            await #expect(throws: PostgresError.self) {
                _ = try await EmbeddedPostgres.connectWhenReady(attempts: 5, pause: .milliseconds(1)) {
                    _ = bounded.next()
                    throw PostgresError(kind: .connection, message: refusals[1])
                }
            }
            #expect(bounded.value == 5)
        }
    }

    private func restartBetweenAppends(_ db: EmbeddedPostgres) async throws {
        #expect(try db.status() == .notInitialized)
        let url = try await db.start()
        #expect(try db.status() == .running)
        #expect(try await db.start() == url)  // starting again reuses it
        let config = LedgerConfiguration(
            connectionString: url, schema: "ledger", validation: EventValidation(allowUnknownTypes: true))
        _ = try await EventStore.migrate(config)
        let store = try await EventStore.open(config)
        let first = try await store.append([testEvent(stream: "order:1", type: "OrderCreated", key: "order:1:created")])

        try await db.stop()
        #expect(try db.status() == .stopped)
        try await db.start()

        let second = try await store.append([
            testEvent(stream: "order:1", type: "OrderClosed", key: "order:1:closed", expected: .exact(0))
        ])
        #expect(first[0].position == 1)
        #expect(second[0].position == 2 && second[0].version == 1 && !second[0].alreadyStored)
        #expect(try await store.headPosition() == 2)
        #expect(try await store.verifyChain().isIntact)
        await store.close()
    }
}

@Suite("Child processes", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// A child that never exits must not hang its caller past a time limit: cancelling kills it.
    /// The child is cancelled once it runs (found by its unique argument in /proc), not after a
    /// guessed delay; it ends killed, not after its 600 s (the suite's time limit catches a hang).
    @Test func cancellingTheCallerKillsTheChild() async throws {
        let marker = "600.\(UInt32.random(in: 100_000...999_999))"
        let task = Task { try await ChildProcess.run("/bin/sleep", [marker]) }
        func running() -> Bool {
            let pids =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) }
                ?? []
            return pids.contains { pid in
                (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains(marker) == true
            }
        }
        while !running() { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        let output = try await task.value
        #expect(output.status == 128 + SIGKILL)
        #expect(!running(), "the child outlived the cancellation")
    }
}

/// A count shared with a closure.
final class Counter: Sendable {
    private let count = Mutex(0)
    /// The count before this call.
    func next() -> Int {
        count.withLock { c in
            defer { c += 1 }
            return c
        }
    }
    var value: Int { count.withLock { $0 } }
}
