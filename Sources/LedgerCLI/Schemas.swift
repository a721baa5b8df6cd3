import ArgumentParser
import Foundation
import LedgerDomain

struct Schemas: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Write the published JSON Schemas of the fact payloads (schema/facts), made from the fact declarations.",
        discussion: paragraphs(
            """
            One file per fact type and schema version, plus common.schema.json. With --check, nothing is
            written: the command lists the files that differ from what the declarations make, and exits 1
            if any does.
            """))

    @Option(help: "The folder to write to.")
    var output = "schema/facts"

    @Flag(help: "Compare instead of writing.")
    var check = false

    func run() throws {
        var stale: [String] = []
        let files = FactSchemas.files()
        for file in files {
            let path = (output as NSString).appendingPathComponent(file.name)
            if check {
                if (try? String(contentsOfFile: path, encoding: .utf8)) != file.text { stale.append(file.name) }
            } else {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                try file.text.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        if check {
            for name in stale {
                Diagnostics.say(
                    "ledger: \(name): differs from the declarations (run `ledger schemas --output \(output)`)")
            }
            if !stale.isEmpty { throw Exit.verificationFailed }
            Diagnostics.say("ledger: \(files.count) schema files are current")
        } else {
            Diagnostics.say("ledger: wrote \(files.count) schema files to \(output)")
        }
    }
}
