import Foundation
import LedgerCore
@testable import LedgerLog
import LedgerPostgres
import LedgerTesting
import Testing

/// A connection the server ends without a word (its backend killed, or the machine between them
/// gone): libpq reports "server closed the connection unexpectedly" with no SQLSTATE. That is a
/// lost connection, which tails wait out, not a server error that ends them.
@Suite("Connection loss", .timeLimit(.minutes(2)))
struct ConnectionLossTests {
    /// Waits (by count, not time) until the admin sees a statement holding `marker` running.
    static func waitRunning(_ admin: PostgresConnection, _ marker: String) async throws {
        var polls = 0
        while try await admin.query(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()",
            [.text("%\(marker)%")]
        ).int64(0, 0) == 0 && polls < 6000 {
            polls += 1
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a statement whose connection the server closes mid-way, with no error message, fails as a lost connection")
    func aConnectionClosedMidStatementIsLost() async throws {
        try await TestDatabase.withSchema("cutmid") { config in
            let admin = try await TestDatabase.admin(config)
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            defer { proxy.close() }
            let connection = try await PostgresConnection.connect(proxy.connectionString(config.connectionString))
            let marker = "cut-\(UUID().uuidString)"
            let sleeping = Task { try await connection.query("SELECT pg_sleep(60), '\(marker)'") }
            try await Self.waitRunning(admin, marker)
            try await proxy.cutAll()
            do {
                _ = try await sleeping.value
                Issue.record("the statement answered through a cut connection")
            } catch let error as PostgresError {
                #expect(error.sqlState == nil, "the server sent no error: \(error)")
                #expect(error.isConnectionFailure, "a lost connection read as a server error: \(error)")
            }
            _ = try await admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
                [.text("%\(marker)%")])
            await connection.close()
            await admin.close()
        }
    }

    @Test(
        "an idle connection the server ends (a crash's warning, then nothing; or a reset) fails its next statement as a lost connection",
        arguments: [(false, false), (true, false), (false, true), (true, true)])
    func anIdleConnectionEndedByTheServerIsLost(crashNotice: Bool, reset: Bool) async throws {
        try await TestDatabase.withSchema("cutidle") { config in
            let admin = try await TestDatabase.admin(config)
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            defer { proxy.close() }
            let connection = try await PostgresConnection.connect(proxy.connectionString(config.connectionString))
            _ = try await connection.query("SELECT 1")
            try await proxy.cutAll(crashNotice: crashNotice, reset: reset)
            do {
                _ = try await connection.query("SELECT 2")
                Issue.record("the statement answered through a cut connection")
            } catch let error as PostgresError {
                #expect(error.isConnectionFailure, "a lost connection read as a server error: \(error)")
            }
            await connection.close()
            await admin.close()
        }
    }

    @Test(
        "did my commit land: a transaction id the server has not handed out (after crash recovery) is not committed, not an error"
    )
    func aTransactionIdInTheFutureDidNotCommit() async throws {
        try await TestDatabase.withSchema("xidfuture") { config in
            let admin = try await TestDatabase.admin(config)
            let current = try await admin.query("SELECT pg_current_xact_id()::text").string(0, 0) ?? "0"
            let ahead = String((UInt64(current) ?? 0) + 1_000_000)
            #expect(try await admin.withIsolation { try AppendTransaction.committed(ahead, on: $0) } == false)
            #expect(try await admin.withIsolation { try AppendTransaction.committed(current, on: $0) } == true)
            await admin.close()
        }
    }

    @Test("an append to a server that stays unreachable gives up after its reconnect budget, as unavailable")
    func anAppendGivesUpAfterItsBudget() async throws {
        try await TestDatabase.withSchema("budget") { config in
            let admin = try await TestDatabase.admin(config)
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            var through = config
            through.connectionString = proxy.connectionString(config.connectionString)
            through.reconnectTimeout = .milliseconds(300)
            let store = try await EventStore.open(through)
            _ = try await store.append([testEvent(stream: "before")])
            proxy.close()
            try await proxy.cutAll()
            do {
                _ = try await store.append([testEvent(stream: "after")])
                Issue.record("the append answered with its server unreachable")
            } catch let error as LedgerError {
                #expect(error.code == .databaseUnavailable, "\(error)")
            }
            #expect(try await TestDatabase.storedEventRows(config) == 1)
            await store.close()
            await admin.close()
        }
    }

    @Test(
        "a tail whose connections the server closes without a word reconnects and goes on, skipping and repeating nothing"
    )
    func aTailSurvivesConnectionsClosedWithoutAWord() async throws {
        try await TestDatabase.withSchema("cuttail") { config in
            let admin = try await TestDatabase.admin(config)
            let proxy = try await CommitDroppingProxy.inFront(of: admin)
            defer { proxy.close() }
            var through = config
            through.connectionString = proxy.connectionString(config.connectionString)
            let writer = try await EventStore.open(config)
            let tailing = try await EventStore.open(through)
            _ = try await writer.append([testEvent(stream: "a")])
            var tail = tailing.subscribe(
                after: 0, pollInterval: .milliseconds(50),
                backoff: Backoff(first: .milliseconds(10), maximum: .milliseconds(50))
            ).makeAsyncIterator()
            #expect(try await tail.next()?.position == 1)
            for round in 0..<3 {
                try await proxy.cutAll(crashNotice: round > 0, reset: round > 0)
                _ = try await writer.append([testEvent(stream: "b\(round)")])
                #expect(try await tail.next()?.position == Int64(round + 2), "the tail ended or skipped after the cut")
            }
            await tailing.close()
            await writer.close()
            await admin.close()
        }
    }
}
