import Foundation
import LedgerCore
import LedgerLog
import LedgerPostgres
import LedgerTesting
import Testing

@Suite("ledger anchor", .timeLimit(.minutes(2)))
struct AnchorCLITests {
    @Test func anchorThenVerifyChainProvesTheHeadAndTheAuditNamesIt() async throws {
        try await TestDatabase.withSchema("clianchor") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("anchor-\(UUID().uuidString).json")
                .path
            defer { try? FileManager.default.removeItem(atPath: file) }
            let anchored = try await cli.run(["anchor", "--output", file])
            #expect(anchored.status == 0, "\(anchored.stderr)")
            let anchor = try JSONValue.parse(try String(contentsOfFile: file, encoding: .utf8))
            #expect(anchor["position"] == .int(10))
            let hash = try #require(anchor["hash"]?.stringValue)

            let audit = try JSONValue.parse(try await cli.run(["audit", "--format", "json"]).stdout)
            #expect(audit["scope"]?["headHash"] == .string(hash))
            #expect(try await cli.run(["audit"]).stdout.contains("head hash \(hash)"))

            let ok = try await cli.run(["verify-chain", "--anchor", file])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(firstAnchor(ok.stdout)?["holds"] == .bool(true))
            #expect(try JSONValue.parse(ok.stdout)["from"] == .int(0))

            // From the anchor: nothing after it yet, and its hash is the head's.
            let since = try await cli.run(["verify-chain", "--from-anchor", file])
            #expect(since.status == 0, "\(since.stderr)")
            let sinceJSON = try JSONValue.parse(since.stdout)
            #expect(sinceJSON["from"] == .int(10) && sinceJSON["verified"] == .int(0))
            #expect(sinceJSON["headHash"] == .string(hash) && sinceJSON["intact"] == .bool(true))
            #expect(since.stderr.contains("after the anchor at position 10"))
            let earlier = file + ".6"
            defer { try? FileManager.default.removeItem(atPath: earlier) }
            #expect(try await cli.run(["anchor", "--position", "6", "--output", earlier]).status == 0)
            let fromSix = try JSONValue.parse(try await cli.run(["verify-chain", "--from-anchor", earlier]).stdout)
            #expect(fromSix["from"] == .int(6) && fromSix["verified"] == .int(4) && fromSix["intact"] == .bool(true))
            let beyond = try await cli.run(["anchor", "--position", "11"])
            #expect(beyond.status == 65 && beyond.stderr.contains("its head is 10"), "\(beyond.stderr)")

            // The owner removes the tail and moves the head back: the chain verifies, the anchor does not.
            try await TestDatabase.cutTail(config, keeping: 8)
            #expect(try await cli.run(["verify-chain"]).status == 0)
            let caught = try await cli.run(["verify-chain", "--anchor", file])
            #expect(caught.status == 1)
            #expect(firstAnchor(caught.stdout)?["holds"] == .bool(false))
            #expect(caught.stderr.contains("does NOT hold"))
            let fromCut = try await cli.run(["verify-chain", "--from-anchor", file])
            #expect(fromCut.status == 1)
            #expect(try JSONValue.parse(fromCut.stdout)["firstBrokenPosition"] == .int(10))
            #expect(fromCut.stderr.contains("the anchor does not hold"), "\(fromCut.stderr)")

            let missing = try await cli.run(["verify-chain", "--anchor", file + ".missing"])
            #expect(missing.status == 65)
            let unreadable = try await cli.run(["verify-chain", "--from-anchor", file + ".missing"])
            #expect(unreadable.status == 65 && unreadable.stderr.contains("--from-anchor"))
        }
    }
}

/// The first anchor check in verify-chain's JSON line.
private func firstAnchor(_ stdout: String) -> JSONValue? {
    guard let v = try? JSONValue.parse(stdout), case .array(let checks)? = v["anchors"] else { return nil }
    return checks.first
}

@Suite("ledger seal", .timeLimit(.minutes(2)))
struct SealCLITests {
    /// What a writer left pending shows in verify-chain and reaches the log with `ledger seal`.
    @Test func sealPutsWhatAWriterLeftPendingIntoTheLog() async throws {
        try await TestDatabase.withSchema("cliseal") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            try await TestDatabase.leavePending(config, stream: "left", version: 0)
            let before = try JSONValue.parse(try await cli.run(["verify-chain"]).stdout)
            #expect(before["pending"] == .int(1) && before["lastPosition"] == .int(10))
            let sealed = try await cli.run(["seal"])
            #expect(sealed.status == 0, "\(sealed.stderr)")
            #expect(
                try JSONValue.parse(sealed.stdout) == JSONValue.makeObject([("sealed", .int(1)), ("head", .int(11))]))
            let after = try JSONValue.parse(try await cli.run(["verify-chain"]).stdout)
            #expect(after["pending"] == .int(0) && after["lastPosition"] == .int(11) && after["intact"] == .bool(true))
            #expect(try JSONValue.parse(try await cli.run(["seal"]).stdout)["sealed"] == .int(0))
        }
    }
}

@Suite("ledger seal --follow", .timeLimit(.minutes(2)))
struct SealFollowCLITests {
    /// Runs `body` beside `ledger seal --follow` on `config`'s schema, its stderr to a file (read
    /// once it has exited: a pipe nobody reads while it runs could fill and stop it); stops it, if
    /// it still runs, and removes the file after.
    private func following(
        _ config: LedgerConfiguration, _ body: (Process, _ stderr: URL) async throws -> Void
    ) async throws {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["seal", "--follow", "--database-url", config.connectionString, "--schema", config.schema]
        let stderr = FileManager.default.temporaryDirectory.appendingPathComponent("seal-follow-\(UUID()).err")
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: stderr) }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        try await body(process, stderr)
    }

    /// Waits, 20 ms at a time, for `process` to exit: at most `polls` times (a hang shows as a
    /// failure, not as a test that never ends).
    private func exited(_ process: Process, polls: Int = 3_000) async throws -> Bool {
        for _ in 0..<polls where process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return !process.isRunning
    }

    /// Elected, it seals what a writer leaves pending with nothing more appended; stopped by
    /// SIGTERM, it exits cleanly and gives up the election.
    @Test func aFollowingSealerSealsWhatWritersLeave() async throws {
        try await TestDatabase.withSchema("clisealfollow") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            try await following(config) { process, stderr in
                let watcher = try await TestDatabase.admin(config)
                defer { Task { await watcher.close() } }
                let elected = TestDatabase.electedSealers(schema: config.schema)
                try await TestDatabase.waitUntil(watcher, elected, equals: 1)
                try await TestDatabase.leavePending(config, stream: "left", version: 0)
                try await TestDatabase.waitUntil(
                    watcher, "SELECT count(*) FROM \(quoteIdentifier(config.schema)).pending_events", equals: 0)
                let after = try JSONValue.parse(try await cli.run(["verify-chain"]).stdout)
                #expect(after["lastPosition"] == .int(11) && after["intact"] == .bool(true))
                // Stopped (SIGTERM), it closes its store and says so.
                process.terminate()
                #expect(try await exited(process))
                #expect(process.terminationReason == .exit && process.terminationStatus == 0)
                let said = try String(contentsOf: stderr, encoding: .utf8)
                #expect(said.contains("ledger: stopped; no longer a candidate sealer"), "\(said)")
                try await TestDatabase.waitUntil(watcher, elected, equals: 0)
            }
        }
    }

    /// Stopped while its round waits for the append lock (another session holds it), it waits for
    /// the round; a second SIGTERM stops it at once, and the event pending is sealed once.
    @Test func aSecondSignalStopsASealerWaitingForTheLock() async throws {
        try await TestDatabase.withSchema("clisealstop") { config in
            let holder = try await TestDatabase.admin(config)
            defer { Task { await holder.close() } }
            try await holder.execute("BEGIN")
            _ = try await holder.query(
                "SELECT pg_advisory_xact_lock(4243, hashtext('ledger-append:' || $1))", [.text(config.schema)])
            try await TestDatabase.leavePending(config, stream: "held", version: 0)
            try await following(config) { process, stderr in
                let watcher = try await TestDatabase.admin(config)
                defer { Task { await watcher.close() } }
                // Its round waits for the lock.
                try await TestDatabase.waitUntil(
                    watcher,
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE application_name = 'ledger-sealer' AND wait_event_type = 'Lock' AND query LIKE '%seal_pending_passes%'
                      AND pid IN (\(TestDatabase.electedSealerPID(schema: config.schema)))
                    """, equals: 1)
                process.terminate()
                #expect(try await exited(process, polls: 25) == false, "the first signal waits for the round")
                process.terminate()
                #expect(try await exited(process))
                #expect(process.terminationReason == .exit && process.terminationStatus == 128 + SIGTERM)
                let said = try String(contentsOf: stderr, encoding: .utf8)
                #expect(said.contains("ledger: stopped before the round in flight ended"), "\(said)")
                try await holder.execute("COMMIT")
                // Its server process may still seal the round it waited for, or give it up: either
                // way the event is sealed once.
                let s = quoteIdentifier(config.schema)
                _ = try await watcher.query("SELECT \(s).seal_pending()")
                #expect(try await watcher.query("SELECT count(*) FROM \(s).pending_events").int64(0, 0) == 0)
                let cli = CLI(url: config.connectionString, schema: config.schema)
                let chain = try JSONValue.parse(try await cli.run(["verify-chain"]).stdout)
                #expect(chain["lastPosition"] == .int(1) && chain["intact"] == .bool(true))
            }
        }
    }
}
