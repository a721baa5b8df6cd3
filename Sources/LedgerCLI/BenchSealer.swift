import ArgumentParser
import LedgerBench
import LedgerCore

/// `ledger bench sealer`: the candidate append path of `tools/append-design/` (one row a fact, a
/// sealer that positions and chains in rounds) driven from one process, each writer answered at its
/// commit or with its position. `tools/bench-append-design.sh` runs it beside raw INSERT and the
/// same path driven by pgbench, on the schemas it makes.
extension SealerWorkload.Answer: ExpressibleByArgument {}

struct BenchSealer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealer",
        abstract: "Measure the candidate append path (one row a fact, sealed in rounds) from one process.",
        discussion: """
            The schema must hold the candidate's tables and functions (tools/append-design/candidate.sql \
            and inbox.sql or split.sql): tools/bench-append-design.sh makes it and runs this command beside \
            raw INSERT in the same run. Each writer is a connection of its own appending one fact a \
            transaction; one more connection runs the sealer's rounds. Prints one line of key=value figures.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Writers, each on a connection of its own.")
    var writers: Int = 16

    @Option(help: "Seconds to append.")
    var seconds: Double = 5

    @Option(help: "Stop a writer after this many appends, if its seconds have not run out first.")
    var appendsPerWriter: Int?

    @Option(
        help:
            "commit: a writer is answered at its commit; position: when a round has sealed its fact; position-async: the same, the writer not waiting for its own commit's flush (the round's makes it durable)."
    )
    var answer: SealerWorkload.Answer = .position

    func validate() throws {
        guard writers >= 1 else { throw ValidationError("--writers must be at least 1") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
        guard (appendsPerWriter ?? 1) >= 1 else { throw ValidationError("--appends-per-writer must be at least 1") }
    }

    func run() async throws {
        try await runReportingErrors {
            let r = try await SealerWorkload.run(
                url: try await connection.resolveURL(), schema: connection.resolvedSchema, writers: writers,
                seconds: seconds, appendsPerWriter: appendsPerWriter,
                answer: answer)
            let m = r.measurement
            print(
                "events=\(m.events) events_per_second=\(Int(m.perSecond)) avg_ms=\(format(m.latencies.reduce(0, +) / Double(max(1, m.latencies.count)) * 1000)) p99_ms=\(format(m.percentile(0.99))) rounds=\(r.rounds) positions=\(r.positions) backlog=\(r.backlog)"
            )
        }
    }

    private func format(_ ms: Double) -> String { String(Double(Int(ms * 1000)) / 1000) }
}
