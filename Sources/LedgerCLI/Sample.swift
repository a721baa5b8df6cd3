import ArgumentParser
import Foundation
import LedgerCore
import LedgerScenarios

struct Sample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the release scenarios as JSON lines to append (`ledger sample | ledger append`).",
        discussion: paragraphs(
            """
            Each scenario is a realistic purchase history with fixed event ids, so appending it twice stores it
            once. Re-deliveries (the same fact sent again by a store or an app) are printed after the facts with
            --redeliveries; appending them returns the original positions.
            """))

    @Argument(help: "Scenario numbers (1-\(Scenarios.all.count)); all when none are given.")
    var numbers: [Int] = []

    @Flag(help: "List the scenarios instead of printing their facts.")
    var list = false

    @Flag(help: "Also print each scenario's re-deliveries.")
    var redeliveries = false

    func validate() throws {
        for n in numbers where !(1...Scenarios.all.count).contains(n) {
            throw ValidationError("no scenario \(n); there are \(Scenarios.all.count) (see --list)")
        }
    }

    func run() throws {
        let chosen = numbers.isEmpty ? Scenarios.all : numbers.map(Scenarios.scenario)
        var out = ""
        if list {
            for s in chosen { out += "\(s.number)\t\(s.name)\t\(s.facts.count) facts\n" }
        } else {
            for s in chosen {
                for e in s.events() { out += e.jsonLine + "\n" }
                if redeliveries { for e in s.redeliveryEvents() { out += e.jsonLine + "\n" } }
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
