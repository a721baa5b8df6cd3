import Foundation
import LedgerServer
import LedgerTesting
import Testing

/// The short fault campaign (tools/campaign.sh --short): kill -9 of appenders and of the server,
/// racing writers and a tail, on a private server of its own. Bounded by counts (cycles, batches);
/// the time limit only catches a hang.
@Suite("Fault campaign", .timeLimit(.minutes(5)))
struct CampaignTests {
    @Test func shortCampaignLosesDoublesAndSkipsNothing() async throws {
        let script = TestDatabase.packageRoot.appendingPathComponent("tools/campaign.sh").path
        var env = ProcessInfo.processInfo.environment
        env["LEDGER_BIN"] = CLI.binary.path
        let r = try await ChildProcess.run("/bin/bash", [script, "--short", "--seed", "7"], environment: env)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr.suffix(3000))")
        #expect(r.stdout.contains("self-check: an injected loss, double and skip are each reported"))
        #expect(r.stdout.contains("campaign: lost 0, doubled 0, skipped 0"), "\(r.stdout)")
        #expect(r.stdout.contains("server kills 3"), "every cycle killed the server: \(r.stdout)")
    }

    /// The short failover campaign (tools/campaign.sh --failover --short): two private clusters, a
    /// primary and its synchronous standby, clients given both in one URL; each cycle kills -9 the
    /// primary, promotes the standby and makes a new standby. Every acknowledged fact is in the new
    /// primary once, positions gap-free, the chain and the anchor taken after the first cycle verify.
    @Test func shortFailoverCampaignLosesDoublesAndSkipsNothing() async throws {
        let script = TestDatabase.packageRoot.appendingPathComponent("tools/campaign.sh").path
        var env = ProcessInfo.processInfo.environment
        env["LEDGER_BIN"] = CLI.binary.path
        env.removeValue(forKey: "LEDGER_DATABASE_URL")
        let r = try await ChildProcess.run("/bin/bash", [script, "--failover", "--short", "--seed", "11"], environment: env)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr.suffix(3000))")
        #expect(r.stderr.contains("failovers 3"), "every cycle failed over: \(r.stderr.suffix(2000))")
        #expect(r.stdout.contains("campaign: lost 0, doubled 0, skipped 0"), "\(r.stdout)")
        #expect(r.stdout.contains("chain intact"), "\(r.stdout)")
    }

    /// The same with HTTP writers (tools/campaign.sh --http --failover --short): curl clients with
    /// idempotency keys retry until answered while each cycle kills -9 `ledger serve` and the
    /// primary; acknowledged means stored, once. Then slow clients are cut off at the header deadline.
    @Test func shortHTTPFailoverCampaignLosesDoublesAndSkipsNothing() async throws {
        let script = TestDatabase.packageRoot.appendingPathComponent("tools/campaign.sh").path
        var env = ProcessInfo.processInfo.environment
        env["LEDGER_BIN"] = CLI.binary.path
        env.removeValue(forKey: "LEDGER_DATABASE_URL")
        let r = try await ChildProcess.run("/bin/bash", [script, "--http", "--failover", "--short", "--slow-clients", "16", "--seed", "13"], environment: env)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr.suffix(3000))")
        #expect(r.stderr.contains("failovers 3") && r.stderr.contains("service kills 3"), "\(r.stderr.suffix(2000))")
        // Sixteen clients sending a head a byte every half second: each cut off by the service.
        #expect(r.stderr.contains("slow clients 16, cut off by the service 16,"), "\(r.stderr.suffix(2000))")
        #expect(r.stdout.contains("campaign: lost 0, doubled 0, skipped 0") && r.stdout.contains("chain intact"), "\(r.stdout)")
    }
}
