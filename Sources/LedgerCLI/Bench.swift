import ArgumentParser

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks that print figures.",
        subcommands: [
            BenchAppend.self, BenchFold.self, BenchRebuild.self, BenchAudit.self, BenchProject.self,
            BenchReconcile.self, BenchSealer.self,
        ])
}
