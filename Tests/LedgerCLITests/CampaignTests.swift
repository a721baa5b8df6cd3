import Foundation
import LedgerServer
import LedgerTesting
import Testing

/// The short fault campaigns (tools/campaign.sh): kill -9 of appenders, of the service and of the
/// server, failovers to a synchronous standby, racing writers and a tail, on private servers of
/// their own. Bounded by counts (cycles, batches); the time limit only catches a hang.
@Suite("Fault campaign", .timeLimit(.minutes(5)))
struct CampaignTests {
    /// Runs the campaign with `arguments`; expects it to exit 0 with nothing lost, doubled or skipped.
    static func campaign(_ arguments: [String]) async throws -> ChildProcess.Output {
        let script = TestDatabase.packageRoot.appendingPathComponent("tools/campaign.sh").path
        var env = ProcessInfo.processInfo.environment
        env["LEDGER_BIN"] = CLI.binary.path
        env.removeValue(forKey: "LEDGER_DATABASE_URL")
        let r = try await ChildProcess.run("/bin/bash", [script] + arguments, environment: env)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr.suffix(3000))")
        #expect(r.stdout.contains("self-check: an injected loss, double and skip are each reported"))
        #expect(
            r.stdout.contains("campaign: lost 0, doubled 0, skipped 0") && r.stdout.contains("chain intact"),
            "\(r.stdout)")
        return r
    }

    @Test func shortCampaignLosesDoublesAndSkipsNothing() async throws {
        let r = try await Self.campaign(["--short", "--seed", "7"])
        #expect(r.stdout.contains("server kills 3"), "every cycle killed the server: \(r.stdout)")
    }

    /// Two private clusters, a primary and its synchronous standby, clients given both in one URL;
    /// each cycle kills -9 the primary, promotes the standby and makes a new standby. Every
    /// acknowledged fact is in the new primary once, positions gap-free, the chain and the anchor
    /// taken after the first cycle verify.
    @Test func shortFailoverCampaignLosesDoublesAndSkipsNothing() async throws {
        let r = try await Self.campaign(["--failover", "--short", "--seed", "11"])
        #expect(r.stderr.contains("failovers 3"), "every cycle failed over: \(r.stderr.suffix(2000))")
    }

    /// The same with HTTP writers: curl clients with idempotency keys retry until answered while
    /// each cycle kills -9 `ledger serve` and the primary; acknowledged means stored, once. Then
    /// sixteen clients sending a head a byte every half second are each cut off by the service.
    @Test func shortHTTPFailoverCampaignLosesDoublesAndSkipsNothing() async throws {
        let r = try await Self.campaign(["--http", "--failover", "--short", "--slow-clients", "16", "--seed", "13"])
        #expect(r.stderr.contains("failovers 3") && r.stderr.contains("service kills 3"), "\(r.stderr.suffix(2000))")
        #expect(r.stderr.contains("slow clients 16, cut off by the service 16,"), "\(r.stderr.suffix(2000))")
    }
}
