import Foundation
import LedgerCore
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
    /// Elected, it seals what a writer leaves pending with nothing more appended; stopped by
    /// SIGTERM, it exits cleanly and gives up the election.
    @Test func aFollowingSealerSealsWhatWritersLeave() async throws {
        try await TestDatabase.withSchema("clisealfollow") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = [
                "seal", "--follow", "--database-url", config.connectionString, "--schema", config.schema,
            ]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }
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
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(said.contains("ledger: stopped"), "\(said)")
            try await TestDatabase.waitUntil(watcher, elected, equals: 0)
        }
    }
}
