import ArgumentParser
import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection

struct VerifyChain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-chain",
        abstract: "Re-hash the whole log (streaming) and name the first position that does not verify (exit 1).",
        discussion: paragraphs(
            """
            With --anchor (repeatable), also prove that each anchored head (`ledger anchor`) is still in the log with
            the same hash; exit 1 when one is not.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .customLong("anchor"), help: "An anchor file written by `ledger anchor` (repeatable).")
    var anchorFiles: [String] = []

    func run() async throws {
        try await runReportingErrors {
            let anchors = try anchorFiles.map { path -> Anchor in
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw InputProblem("--anchor \(Echo.quoted(path)): cannot read the file")
                }
                do throws(AnchorError) {
                    return try Anchor.parse(text)
                } catch {
                    throw InputProblem("--anchor \(Echo.quoted(path)) \(error.description)")
                }
            }
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            defer { Task { await store.close() } }
            let start = ContinuousClock.now
            let report = try await store.verifyChain { n in
                if Diagnostics.isTerminal { Diagnostics.say("ledger: verified \(n) events...") }
            }
            let checks = try await store.check(anchors)
            let pending = try await store.pendingCount()
            let seconds = (ContinuousClock.now - start).seconds
            let anchorsJSON = JSONValue.array(
                checks.map { c in
                    .makeObject([
                        ("position", .int(c.anchor.position)), ("hash", .string(c.anchor.hash)),
                        ("holds", .bool(c.holds)),
                        ("problem", c.problem.map { .string($0) } ?? .null),
                    ])
                })
            var failed = false
            if let problem = report.problem {
                print(
                    "{\"intact\":false,\"verified\":\(report.verified),\"firstBrokenPosition\":\(report.firstBrokenPosition ?? 0),\"problem\":\(JSONValue.string(problem).compactText),\"anchors\":\(anchorsJSON.compactText),\"pending\":\(pending)}"
                )
                Diagnostics.say("ledger: chain BROKEN at position \(report.firstBrokenPosition ?? 0): \(problem)")
                failed = true
            } else {
                print(
                    "{\"intact\":true,\"verified\":\(report.verified),\"lastPosition\":\(report.lastPosition),\"headHash\":\"\(report.lastHash.hexString)\",\"anchors\":\(anchorsJSON.compactText),\"pending\":\(pending)}"
                )
                Diagnostics.say(
                    "ledger: chain intact: \(report.verified) events verified in \(String(format: "%.2f", seconds)) s (head \(report.lastPosition), hash \(report.lastHash.hexString))"
                )
            }
            if pending > 0 {
                Diagnostics.say(
                    "ledger: \(pending) committed event(s) wait to be sealed into the log (not verified yet; the next append of any writer, `ledger serve` or `ledger seal` seals them)"
                )
            }
            for c in checks {
                if let problem = c.problem {
                    Diagnostics.say("ledger: anchor at position \(c.anchor.position) does NOT hold: \(problem)")
                    failed = true
                } else {
                    Diagnostics.say("ledger: anchor at position \(c.anchor.position) holds")
                }
            }
            if failed { throw Exit.verificationFailed }
        }
    }
}
