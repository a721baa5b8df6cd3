import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerScenarios

/// `ledger bench fold`: the pure fold alone, typed facts already in memory, round after round; no
/// database. The figure `bench rebuild` prints beside COPY TO, without the rest, for a profiler.
struct BenchFold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fold",
        abstract: "Measure the pure fold alone: generated facts in memory, folded round after round (no database).",
        discussion: paragraphs(
            """
            Generates --events facts (deterministic per --seed, the same history `bench rebuild`
            loads), then folds them into a fresh state --rounds times and prints each round's rate.
            Use a release build; run it under a profiler to see where the fold's time goes.
            """))

    @Option(help: "Facts folded each round.") var events: Int = 2_000_000
    @Option(help: "Distinct users in the generated history.") var users: Int = 200_000
    @Option(help: "Generator seed.") var seed: UInt64 = 42
    @Option(help: "Rounds, each a fresh fold of the same facts.") var rounds: Int = 3
    @Option(help: idsHelp) var ids: IdShape = .short

    func validate() throws {
        guard events > 0, users > 0, rounds > 0 else {
            throw ValidationError("--events, --users and --rounds must be positive")
        }
    }

    func run() throws {
        let facts = Self.generatedFacts(events: events, users: users, seed: seed, ids: ids)
        print(
            "ledger bench fold: \(grouped(Int64(facts.count))) facts, \(grouped(Int64(users))) users, seed \(seed), \(ids) ids"
        )
        for round in 1...rounds {
            let (fold, seconds) = Self.fold(facts)
            print(
                "round \(round): \(grouped(Int64(Double(facts.count) / seconds))) facts/s "
                    + "(\(String(format: "%.2f", seconds)) s; \(fold.orders.count) orders, "
                    + "\(fold.transactions.count) transactions, \(fold.users.count) users, \(fold.anomalies.count) anomalies)"
            )
        }
    }

    /// The first `events` facts of the generated history (deterministic per `seed`), typed, with
    /// their places in the log: what the pure fold folds (`bench fold`, `bench rebuild`).
    static func generatedFacts(events: Int, users: Int, seed: UInt64, ids: IdShape) -> [(Fact, FactContext)] {
        var facts: [(Fact, FactContext)] = []
        facts.reserveCapacity(events)
        for (i, (fact, at)) in HistoryGenerator(users: users, seed: seed, ids: ids).prefix(events).enumerated() {
            facts.append((fact, FactContext(position: Int64(i + 1), occurredAt: at)))
        }
        return facts
    }

    /// A fresh fold of `facts`, and the seconds it took. Each fact is moved into the fold, as the
    /// fold's pipeline does: a copy of the facts, reversed, is made before the clock starts, and
    /// taken from its end.
    static func fold(_ facts: [(Fact, FactContext)]) -> (Projections, seconds: Double) {
        var fold = Projections()
        var round = Array(facts.reversed())
        let start = ContinuousClock.now
        while let (fact, ctx) = round.popLast() { fold.apply(fact, ctx) }
        return (fold, (ContinuousClock.now - start).seconds)
    }
}
