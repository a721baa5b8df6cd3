import ArgumentParser
import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection

struct VerifyChain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-chain",
        abstract: "Re-hash the whole log (streaming) and name the first position that does not verify (exit 1).")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            defer { Task { await store.close() } }
            let start = ContinuousClock.now
            let report = try await store.verifyChain { n in
                if Diagnostics.isTerminal { Diagnostics.say("ledger: verified \(n) events...") }
            }
            let seconds = (ContinuousClock.now - start).seconds
            if let problem = report.problem {
                print("{\"intact\":false,\"verified\":\(report.verified),\"firstBrokenPosition\":\(report.firstBrokenPosition ?? 0),\"problem\":\(JSONValue.string(problem).compactText)}")
                Diagnostics.say("ledger: chain BROKEN at position \(report.firstBrokenPosition ?? 0): \(problem)")
                throw Exit.verificationFailed
            }
            print("{\"intact\":true,\"verified\":\(report.verified),\"lastPosition\":\(report.lastPosition)}")
            Diagnostics.say("ledger: chain intact: \(report.verified) events verified in \(String(format: "%.2f", seconds)) s")
        }
    }
}

