import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerProjection

struct Append: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append facts from JSON lines (one event per line) as one atomic batch.",
        discussion: paragraphs(
            """
            Every line is parsed and validated before anything is written; any error names its line and
            field and nothing is written (exit 65). Prints one JSON line per event with its position.
            Line format: schema/event-line.schema.json.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .shortAndLong, help: "JSON lines file (default: standard input).")
    var file: String?

    @Flag(help: "Store event types outside the fact catalogue instead of refusing them.")
    var allowUnknownTypes = false

    func run() async throws {
        try await runReportingErrors {
            let data: Data
            if let file {
                data = try readInputFile(file)
            } else {
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            var validation = FactCatalogue.validation(allowUnknownTypes: allowUnknownTypes)
            if let n = try maximumPayloadBytes() { validation.maximumPayloadBytes = n }
            let (events, lines) = try Self.decode(data, decoder: EventLineDecoder(validation: validation))
            if events.isEmpty {
                Diagnostics.say("ledger: no events in the input; nothing to do")
                return
            }
            let config = try await connection.configuration(as: .writer, validation: validation)
            let store = try await EventStore.open(config)
            let appended: [AppendedEvent]
            do {
                appended = try await store.append(events)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            var out = ""
            for (line, a) in zip(lines, appended) {
                out +=
                    "{\"line\":\(line),\"eventId\":\"\(a.eventId.lowercased)\",\"stream\":\(JSONValue.string(a.stream).compactText),\"version\":\(a.version),\"position\":\(a.position),\"alreadyStored\":\(a.alreadyStored)}\n"
            }
            FileHandle.standardOutput.write(Data(out.utf8))
            let stored = appended.filter { !$0.alreadyStored }.count
            Diagnostics.say("ledger: appended \(stored) events, \(appended.count - stored) already stored")
        }
    }

    /// Decodes every non-blank line; the first error stops everything.
    static func decode(_ data: Data, decoder: EventLineDecoder) throws -> ([NewEvent], [Int]) {
        try EventLines.decode(data, decoder: decoder)
    }
}

/// The bytes of `--file`, or an input problem that says why not (the system's reason).
func readInputFile(_ path: String) throws -> Data {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        throw InputProblem(
            "--file \(Echo.quoted(path)): cannot open it: \(String(cString: strerror(errno))); nothing was written")
    }
    close(fd)
    guard let data = FileManager.default.contents(atPath: path) else {
        throw InputProblem("--file \(Echo.quoted(path)): cannot read it (is it a directory?); nothing was written")
    }
    return data
}
