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

            With --from-anchor, re-hash only what follows an anchor taken after an earlier full check: prove that the
            anchored event is still in the log with its hash, then that every event after it chains onto it, to the
            head. What comes before the anchor is trusted, not read again: a nightly check of a long log reads only
            the day's events.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .customLong("anchor"), help: "An anchor file written by `ledger anchor` (repeatable).")
    var anchorFiles: [String] = []

    @Option(
        name: .customLong("from-anchor"),
        help: "Re-hash only the events after this anchor (written by `ledger anchor` after a full check).")
    var fromAnchorFile: String?

    func run() async throws {
        try await runReportingErrors {
            let anchors = try anchorFiles.map { try Self.readAnchor($0, option: "--anchor") }
            let from = try fromAnchorFile.map { try Self.readAnchor($0, option: "--from-anchor") }
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            defer { Task { await store.close() } }
            let start = ContinuousClock.now
            let progress: @Sendable (Int64) -> Void = { n in
                if Diagnostics.isTerminal { Diagnostics.say("ledger: verified \(n) events...") }
            }
            let report: ChainReport
            if let from {
                report = try await store.verifyChain(from: from, progress: progress)
            } else {
                report = try await store.verifyChain(progress: progress)
            }
            let since = from?.position ?? 0
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
                    "{\"intact\":false,\"verified\":\(report.verified),\"firstBrokenPosition\":\(report.firstBrokenPosition ?? 0),\"problem\":\(JSONValue.string(problem).compactText),\"anchors\":\(anchorsJSON.compactText),\"pending\":\(pending),\"from\":\(since)}"
                )
                Diagnostics.say("ledger: chain BROKEN at position \(report.firstBrokenPosition ?? 0): \(problem)")
                failed = true
            } else {
                print(
                    "{\"intact\":true,\"verified\":\(report.verified),\"lastPosition\":\(report.lastPosition),\"headHash\":\"\(report.lastHash.hexString)\",\"anchors\":\(anchorsJSON.compactText),\"pending\":\(pending),\"from\":\(since)}"
                )
                Diagnostics.say(
                    "ledger: chain intact: \(report.verified) events verified\(since > 0 ? " after the anchor at position \(since)" : "") in \(String(format: "%.2f", seconds)) s (head \(report.lastPosition), hash \(report.lastHash.hexString))"
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

    static func readAnchor(_ path: String, option: String) throws -> Anchor {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw InputProblem("\(option) \(Echo.quoted(path)): cannot read the file")
        }
        do throws(AnchorError) {
            return try Anchor.parse(text)
        } catch {
            throw InputProblem("\(option) \(Echo.quoted(path)) \(error.description)")
        }
    }
}
