import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
@testable import LedgerServer
import LedgerTesting
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

    private func restartBetweenAppends(_ db: EmbeddedPostgres) async throws {
        #expect(try db.status() == .notInitialized)
        let url = try await db.start()
        #expect(try db.status() == .running)
        #expect(try await db.start() == url) // starting again reuses it
        let config = LedgerConfiguration(connectionString: url, schema: "ledger", validation: EventValidation(allowUnknownTypes: true))
        _ = try await EventStore.migrate(config)
        let store = try await EventStore.open(config)
        let first = try await store.append([testEvent(stream: "order:1", type: "OrderCreated", key: "order:1:created")])

        try await db.stop()
        #expect(try db.status() == .stopped)
        try await db.start()

        let second = try await store.append([testEvent(stream: "order:1", type: "OrderClosed", key: "order:1:closed", expected: .exact(0))])
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
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
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
