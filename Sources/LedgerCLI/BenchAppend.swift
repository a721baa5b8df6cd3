struct BenchAppend: AsyncParsableCommand { static let configuration = CommandConfiguration(commandName: "append"); func run() async throws {} }
import ArgumentParser
