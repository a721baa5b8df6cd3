import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerScenarios
import LedgerLog
import LedgerProjection

extension FaultSpec: ExpressibleByArgument {
    public init?(argument: String) {
        guard let spec = try? FaultSpec.parse(argument) else { return nil }
        self = spec
    }
}

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Write a realistic purchase history (App Store, Google Play, WeChat Pay) with injected faults, and its ground truth.",
        discussion: paragraphs(
            """
            Deterministic per --seed. The facts are appended through the same path services use (validated, idempotent,
            in batches), so running it twice stores the history once. --faults injects findings per purchase, e.g.
            `double-grant=0.02,missing-grant=0.01`, `all=0.01`, or `none`; `chain-broken=R` (any R > 0) also
            tampers with one stored event afterwards (the metadata of one fact, so nothing else changes), as an attacker
            with database access would. The ground truth, the findings the audit must report and no others, is written
            as JSON to --truth; `ledger audit --expect FILE` checks a report against it.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Users.")
    var users: Int = 1000

    @Option(help: "Days of history.")
    var days: Int = 30

    @Option(help: "Seed: the same seed gives the same history.")
    var seed: UInt64 = 1

    @Option(help: "Faults to inject: KIND=RATE,... (rates per purchase), all=RATE, or none.")
    var faults: String = "none"

    @Option(help: "Where to write the ground truth (JSON).")
    var truth: String = "simulation-truth.json"

    @Option(help: "Facts appended per batch.")
    var batch: Int = 2000

    @Option(
        help:
            "Also write the stores' statement files for the history into this folder (WeChat Pay daily bills, App Store history and financial report, Google Play earnings and voided purchases), with the reconciliation faults of --faults, and import them."
    )
    var statements: String?

    func validate() throws {
        if users < 1 || users > 1_000_000 { throw ValidationError("--users must be 1...1000000") }
        if days < 1 || days > 3660 { throw ValidationError("--days must be 1...3660") }
        if batch < 1 { throw ValidationError("--batch must be >= 1") }
        do { _ = try FaultSpec.parse(faults) } catch { throw ValidationError("--faults: \(error)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let spec = try FaultSpec.parse(faults)
            let t0 = ContinuousClock.now
            let simulating = ProgressBar("simulate", unit: "users")
            let sim = Simulator(users: users, days: days, seed: seed, faults: spec, progress: simulating.update)
            simulating.finish()
            let events = sim.events()
            Diagnostics.say(
                "ledger: simulated \(grouped(Int64(events.count))) facts, \(grouped(Int64(sim.purchases))) purchases by \(grouped(Int64(users))) users over \(days) days (seed \(seed), faults \(spec)) in \(String(format: "%.1f", (ContinuousClock.now - t0).seconds)) s"
            )
            let owner = try await connection.configuration(as: nil)
            let store = try await EventStore.open(owner.connecting(as: .writer))
            var tampered: Int64?
            var statementTruth: [ExpectedFinding] = []
            do {
                let before = try await store.headPosition()
                if before > 0 {
                    Diagnostics.say(
                        "ledger: note: the ledger already holds \(grouped(before)) events; the audit will see them beside the simulation (use a fresh --schema for a clean comparison)"
                    )
                }
                let bar = ProgressBar("append")
                var stored = 0, already = 0
                for start in stride(from: 0, to: events.count, by: batch) {
                    let result = try await store.append(Array(events[start..<min(start + batch, events.count)]))
                    for r in result { if r.alreadyStored { already += 1 } else { stored += 1 } }
                    bar.update(Int64(start + result.count), Int64(events.count))
                }
                bar.finish()
                Diagnostics.say(
                    "ledger: appended \(grouped(Int64(stored))) facts, \(grouped(Int64(already))) already stored")
                if let statements {
                    statementTruth = try await SimulateStatements.run(sim, folder: statements, store: store).truth
                }
                if spec.rate(.chainBroken) > 0 {
                    tampered = try await Self.tamper(store, owner: owner, seed: seed)
                    Diagnostics.say(
                        "ledger: tampered with the metadata of the event at position \(tampered!) (chain-broken)")
                }
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            var findings: [JSONValue] = (sim.groundTruth + statementTruth).sorted { $0.key < $1.key }.map(Self.json)
            if let tampered {
                findings.append(
                    .makeObject([
                        ("key", .string("chain-broken||||")), ("kind", .string("chain-broken")),
                        ("position", .int(tampered)),
                    ]))
            }
            let doc = JSONValue.makeObject([
                (
                    "simulation",
                    .makeObject([
                        ("users", .int(Int64(users))), ("days", .int(Int64(days))),
                        ("seed", .int(Int64(bitPattern: seed))),
                        ("faults", .string(spec.description)), ("facts", .int(Int64(events.count))),
                        ("purchases", .int(Int64(sim.purchases))),
                    ])
                ),
                ("findings", .array(findings)),
            ])
            try writeOutput(doc.canonicalText + "\n", to: truth)
            let byKind = Dictionary(grouping: findings.compactMap { $0["kind"]?.stringValue }, by: { $0 }).mapValues(
                \.count)
            Diagnostics.say(
                "ledger: ground truth: \(findings.count) findings (\(byKind.keys.sorted().map { "\($0) \(byKind[$0]!)" }.joined(separator: ", "))) written to \(truth)"
            )
        }
    }

    static func json(_ f: ExpectedFinding) -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        return .makeObject([
            ("key", .string(f.key)), ("kind", .string(f.kind.rawValue)), ("channel", opt(f.channel?.rawValue)),
            ("transactionId", opt(f.transactionId)), ("orderId", opt(f.orderId)), ("userId", opt(f.userId)),
        ])
    }

    /// Changes one stored event's metadata behind the ledger's back (triggers off, as a superuser
    /// could): the hash chain no longer verifies there. Returns the position.
    static func tamper(_ store: EventStore, owner: LedgerConfiguration, seed: UInt64) async throws -> Int64 {
        let head = try await store.headPosition()
        guard head > 0 else { return 0 }
        let position = 1 + Int64(seed % UInt64(head))
        let conn = try await PostgresConnection.connect(
            owner.connectionString, applicationName: "ledger-simulate-tamper")
        do {
            try await conn.execute("SET session_replication_role = replica")
            _ = try await conn.query(
                """
                UPDATE \(quoteIdentifier(store.configuration.schema)).events
                SET metadata = metadata || '{"actor": "tampered"}' WHERE position = $1
                """, [.int8(position)])
            await conn.close()
        } catch {
            await conn.close()
            throw error
        }
        return position
    }
}
