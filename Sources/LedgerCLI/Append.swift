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

            The whole input is held in memory as one batch. With --batch-size N the input is read a
            chunk at a time, twice (standard input is spooled to a temporary file first): once to
            validate every line, so that a malformed line still writes nothing, then to append it in
            atomic batches of N lines, each printed once it is stored. Every line must then carry an
            eventId or an idempotencyKey: if a batch fails (a version conflict, a lost connection), the
            batches before it are stored, and running the same command again appends the rest, what is
            stored coming back with "alreadyStored": true.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .shortAndLong, help: "JSON lines file (default: standard input).")
    var file: String?

    @Flag(help: "Store event types outside the fact catalogue instead of refusing them.")
    var allowUnknownTypes = false

    @Option(
        help:
            "Append in atomic batches of this many lines, reading the input a chunk at a time (memory bounded; every line must carry an eventId or an idempotencyKey)."
    )
    var batchSize: Int?

    func validate() throws {
        if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() async throws {
        if let batchSize {
            try await runReportingErrors { try await BatchedAppend(command: self, batchSize: batchSize).run() }
            return
        }
        try await runReportingErrors {
            let data: Data
            if let file {
                data = try readInputFile(file)
            } else {
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            let validation = try validation()
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
                throw AtLine.naming(error, events: events, lines: lines)
            }
            await store.close()
            Self.print(appended, lines: lines)
            let stored = appended.filter { !$0.alreadyStored }.count
            Diagnostics.say("ledger: appended \(stored) events, \(appended.count - stored) already stored")
        }
    }

    /// Decodes every non-blank line; the first error stops everything.
    static func decode(_ data: Data, decoder: EventLineDecoder) throws -> ([NewEvent], [Int]) {
        try EventLines.decode(data, decoder: decoder)
    }

    /// The validation the flags and the environment ask for.
    func validation() throws -> EventValidation {
        var validation = FactCatalogue.validation(allowUnknownTypes: allowUnknownTypes)
        if let n = try maximumPayloadBytes() { validation.maximumPayloadBytes = n }
        return validation
    }

    /// One JSON line per appended event, with the input line it came from.
    static func print(_ appended: [AppendedEvent], lines: [Int]) {
        var out = ""
        for (line, a) in zip(lines, appended) {
            out +=
                "{\"line\":\(line),\"eventId\":\"\(a.eventId.lowercased)\",\"stream\":\(JSONValue.string(a.stream).compactText),\"version\":\(a.version),\"position\":\(a.position),\"alreadyStored\":\(a.alreadyStored)}\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}

/// A conflict, named by the input line of the event it is about (its exit status is the conflict's).
struct AtLine: LedgerCodedError, CustomStringConvertible {
    let line: Int
    let error: LedgerError
    var code: LedgerError.Code { error.code }
    var description: String { "line \(line): \(error)" }

    /// `error` at its line when it is a conflict about one of `events`, else as it is.
    static func naming(_ error: any Error, events: [NewEvent], lines: [Int]) -> any Error {
        guard let e = error as? LedgerError, let line = e.line(events: events, lines: lines) else { return error }
        return AtLine(line: line, error: e)
    }
}

/// `ledger append --batch-size N`: the input validated in one pass and appended in batches of N
/// lines in a second, a chunk of it in memory at a time.
struct BatchedAppend {
    let command: Append
    let batchSize: Int

    func run() async throws {
        let input = try inputFile()
        defer { try? input.close() }
        let decoder = EventLineDecoder(validation: try command.validation())
        let total = try validateAll(input, decoder: decoder)
        guard total > 0 else {
            Diagnostics.say("ledger: no events in the input; nothing to do")
            return
        }
        try input.seek(toOffset: 0)
        let config = try await command.connection.configuration(as: .writer, validation: decoder.validation)
        let store = try await EventStore.open(config)
        do {
            try await appendAll(input, decoder: decoder, total: total, to: store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// The input to read twice: `--file`, or standard input copied into a temporary file (removed
    /// at once; the open handle keeps it until the end).
    func inputFile() throws -> FileHandle {
        if let file = command.file {
            try checkReadable(file)
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw InputProblem("--file \(Echo.quoted(file)): cannot open it; nothing was written")
            }
            return handle
        }
        let path = FoldMemory.temporaryDirectory + "/ledger-append-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let spool = FileHandle(forUpdatingAtPath: path)
        else {
            throw InputProblem(
                "cannot make a temporary file in \(FoldMemory.temporaryDirectory) to hold standard input (set TMPDIR); nothing was written"
            )
        }
        unlink(path)
        while let chunk = try FileHandle.standardInput.read(upToCount: LineReader.chunk), !chunk.isEmpty {
            try spool.write(contentsOf: chunk)
        }
        try spool.seek(toOffset: 0)
        return spool
    }

    /// The longest line read: room for the largest payload written with every character escaped
    /// (`\\u0000` is six bytes), and 1 MiB for the rest of the line.
    func maximumLineBytes(_ decoder: EventLineDecoder) -> Int { decoder.validation.maximumPayloadBytes * 6 + (1 << 20) }

    /// Every line decoded and validated, none kept; the number of events. A line with neither an
    /// eventId nor an idempotencyKey is refused: appended again after a failed batch, it would be a
    /// second fact.
    func validateAll(_ input: FileHandle, decoder: EventLineDecoder) throws -> Int64 {
        var lines = LineReader(input, maximumLineBytes: maximumLineBytes(decoder))
        var count: Int64 = 0
        while let raw = try lines.next() {
            guard let text = try EventLines.text(raw, line: lines.lineNumber) else { continue }
            var madeUpId = false
            let event = try decoder.decode(text, lineNumber: lines.lineNumber) {
                madeUpId = true
                return UUID.systemRandom()
            }
            if event.idempotencyKey == nil, madeUpId {
                throw EventInputError(
                    line: lines.lineNumber, field: "eventId",
                    message:
                        "--batch-size needs an eventId or an idempotencyKey on every line, so that a batch appended again after a failure is not a second fact"
                )
            }
            count += 1
        }
        return count
    }

    /// Appends the input in batches of ``batchSize`` events, printing each once it is stored. When
    /// one fails, says which lines are stored before the error is reported.
    func appendAll(_ input: FileHandle, decoder: EventLineDecoder, total: Int64, to store: EventStore) async throws {
        var lines = LineReader(input, maximumLineBytes: maximumLineBytes(decoder))
        let bar = ProgressBar("ledger append", unit: "events")
        var batch: [NewEvent] = []
        var numbers: [Int] = []
        var stored: Int64 = 0, already: Int64 = 0, done: Int64 = 0
        var lastStoredLine = 0
        /// What is stored, said before the error that stopped the rest is reported.
        func sayStored(_ what: String) {
            bar.finish()
            let kept =
                lastStoredLine > 0
                ? "lines 1-\(lastStoredLine) are stored (\(grouped(done)) events)" : "nothing is stored"
            Diagnostics.say(
                "ledger: \(kept); \(what); run the same command again to append the rest (what is stored comes back with \"alreadyStored\": true)"
            )
        }
        func flush() async throws {
            let appended: [AppendedEvent]
            do {
                appended = try await store.append(batch)
            } catch {
                sayStored(
                    "the batch of lines \(numbers.first ?? 0)-\(numbers.last ?? 0) failed and none of it was written")
                throw AtLine.naming(error, events: batch, lines: numbers)
            }
            Append.print(appended, lines: numbers)
            let new = Int64(appended.filter { !$0.alreadyStored }.count)
            stored += new
            already += Int64(appended.count) - new
            done += Int64(appended.count)
            lastStoredLine = numbers.last ?? lastStoredLine
            bar.update(done, total)
            batch.removeAll(keepingCapacity: true)
            numbers.removeAll(keepingCapacity: true)
        }
        while true {
            do {
                guard let raw = try lines.next() else { break }
                guard let text = try EventLines.text(raw, line: lines.lineNumber) else { continue }
                batch.append(try decoder.decode(text, lineNumber: lines.lineNumber))
            } catch {
                // Validated a moment ago: the file changed under the command, or cannot be read now.
                sayStored("the input could not be read again as it was validated")
                throw InputProblem("the input changed or failed while it was appended: \(error)")
            }
            numbers.append(lines.lineNumber)
            if batch.count == batchSize { try await flush() }
        }
        if !batch.isEmpty { try await flush() }
        bar.finish()
        Diagnostics.say(
            "ledger: appended \(stored) events, \(already) already stored (batches of \(batchSize))")
    }
}

/// The bytes of `--file`, or an input problem that says why not (the system's reason).
func readInputFile(_ path: String) throws -> Data {
    try checkReadable(path)
    guard let data = FileManager.default.contents(atPath: path) else {
        throw InputProblem("--file \(Echo.quoted(path)): cannot read it (is it a directory?); nothing was written")
    }
    return data
}

/// Throws an input problem with the system's reason unless `--file` can be opened for reading.
func checkReadable(_ path: String) throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        throw InputProblem(
            "--file \(Echo.quoted(path)): cannot open it: \(String(cString: strerror(errno))); nothing was written")
    }
    defer { close(fd) }
    var status = stat()
    if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
        throw InputProblem("--file \(Echo.quoted(path)): is a directory; nothing was written")
    }
}
