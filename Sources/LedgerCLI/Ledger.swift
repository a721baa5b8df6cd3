import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerReport
import LedgerServer

@main
struct Ledger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "An event-sourced purchase ledger on PostgreSQL.",
        discussion: paragraphs(
            """
            With no LEDGER_DATABASE_URL (or --database-url), commands use a private PostgreSQL cluster
            under ./.ledger (LEDGER_HOME), starting it when needed.

            Exit codes: 0 success; 1 verification found a problem; 2 conflict (version or idempotency),
            nothing written; 64 usage; 65 invalid input, nothing written; 69 database unavailable;
            70 other database or internal error; 75 another projector or rebuild holds the read models
            (try again later); 78 configuration (no server binaries, edited migration,
            schema not migrated, no spill file can be made in the spill directory).
            """),
        subcommands: [
            DB.self, Migrate.self, Append.self, Read.self, VerifyChain.self, Seal.self, AnchorCommand.self,
            Project.self, Rebuild.self, Show.self, AuditCommand.self, ImportCommand.self, RevenueCommand.self,
            Simulate.self, Sample.self, Schemas.self, Bench.self, Serve.self,
        ]
    )

    static func main() async {
        atexit { PeakMemory.writeIfAsked() }
        await main(nil)
    }
}

enum Exit {
    static let verificationFailed = ExitCode(1)
    static let conflict = ExitCode(2)
    static let usage = ExitCode(64)
    static let invalidInput = ExitCode(65)
    static let unavailable = ExitCode(69)
    static let internalError = ExitCode(70)
    static let busy = ExitCode(75)
    static let configuration = ExitCode(78)
}

/// Diagnostics and progress go to stderr; data goes to stdout. Every message passes through one
/// redaction (``ConnectionString/redacted(_:)``): no password reaches the terminal or a log.
enum Diagnostics {
    static func say(_ message: String) {
        FileHandle.standardError.write(Data((ConnectionString.redacted(message) + "\n").utf8))
    }
    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// How much memory a fold keeps its views in (`audit`, `rebuild`, `project`, `serve`, and the
/// benchmarks, which pass it on to the command they measure).
struct FoldMemoryOptions: ParsableArguments {
    @Option(
        name: .customLong("fold-memory"),
        help: ArgumentHelp(
            "Memory for the fold's views, e.g. 256MiB or 2GiB; beyond it the oldest views spill to a temporary file and are read back when needed (same results, slower). 'none': no limit.",
            discussion:
                "Default: $LEDGER_FOLD_MEMORY, else 64MiB (a quarter of this machine's memory, or of its control group's limit, when that is less). Units are binary (MB = MiB)."
        ))
    var foldMemory: String?

    @Option(
        name: .customLong("spill-directory"),
        help: "Where the spill file is made (default: $TMPDIR, else /tmp); it is removed as soon as it is open.")
    var spillDirectory: String?

    var memory: FoldMemory {
        get throws {
            let directory = spillDirectory ?? FoldMemory.temporaryDirectory
            guard let text = foldMemory ?? ProcessInfo.processInfo.environment["LEDGER_FOLD_MEMORY"] else {
                var automatic = FoldMemory.automatic
                automatic.directory = directory
                return automatic
            }
            guard let memory = FoldMemory(parsing: text, directory: directory) else {
                let source = foldMemory != nil ? "--fold-memory" : "LEDGER_FOLD_MEMORY"
                throw ValidationError(
                    "\(source) '\(text)' is not a size such as 256MiB, 2GiB or 1000000 (bytes), or 'none'")
            }
            return memory
        }
    }

    func validate() throws { _ = try memory }

    /// The same options, for a child process.
    var arguments: [String] {
        (foldMemory.map { ["--fold-memory", $0] } ?? []) + (spillDirectory.map { ["--spill-directory", $0] } ?? [])
    }
}

/// Where a replay of the log stops: the head, a position, or a moment (`audit`, `rebuild`).
struct ReplayOptions: ParsableArguments {
    @Option(name: .customLong("to-position"), help: "Replay the log through this position (inclusive).")
    var toPosition: Int64?

    @Option(
        name: .customLong("as-of"),
        help: "Replay the log as it stood at this time (RFC 3339, by the database clock recordedAt).")
    var asOf: String?

    var isSet: Bool { toPosition != nil || asOf != nil }

    func validate() throws {
        if toPosition != nil && asOf != nil { throw ValidationError("give --to-position or --as-of, not both") }
        if let toPosition, toPosition < 0 { throw ValidationError("--to-position must be >= 0") }
        if let asOf, Timestamp(asOf) == nil {
            throw ValidationError("--as-of '\(asOf)' is not an RFC 3339 time such as 2026-03-31T08:15:00Z")
        }
    }

    /// The last position to replay, nil for the head. A moment a hot standby has not replayed up
    /// to yet is refused (``PositionNotReached``), like a position beyond the head.
    func through(_ store: EventStore) async throws -> Int64? {
        guard let asOf, let t = Timestamp(asOf) else { return toPosition }
        return try await LogReplay(store).position(asOf: t)
    }
}

struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: "libpq URL or keyword string (default: $LEDGER_DATABASE_URL, else the embedded server).")
    var databaseURL: String?

    @Option(help: "PostgreSQL schema of the ledger (default: $LEDGER_SCHEMA or 'ledger').")
    var schema: String?

    var resolvedSchema: String {
        schema ?? ProcessInfo.processInfo.environment["LEDGER_SCHEMA"].flatMap { $0.isEmpty ? nil : $0 } ?? "ledger"
    }

    /// The URL to use, starting the embedded server when none is configured.
    func resolveURL() async throws -> String {
        if let databaseURL, !databaseURL.isEmpty { return databaseURL }
        if let env = try secretSetting("LEDGER_DATABASE_URL") { return env }
        let embedded = EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot())
        return try await embedded.start(log: { Diagnostics.say("ledger: \($0)") })
    }

    /// The configuration for a command that connects as `role` (nil: the schema's owner, for
    /// migrate and maintenance). A role logs in with `LEDGER_<ROLE>_DATABASE_URL` when set, else with
    /// the database URL and the role's user name (no password needed on the embedded cluster's socket).
    /// A role's own URL needs no owner's URL at all (a deployment gives the service only its roles'
    /// passwords). Each URL may come from a file: `LEDGER_<ROLE>_DATABASE_URL_FILE` (a secret mounted
    /// by the orchestrator), as `LEDGER_DATABASE_URL_FILE` for the owner's.
    func configuration(
        as role: LedgerRole?, validation: EventValidation = FactCatalogue.validation()
    ) async throws -> LedgerConfiguration {
        var validation = validation
        if let n = try maximumPayloadBytes() { validation.maximumPayloadBytes = n }
        let roleURL = try role.flatMap { try secretSetting($0.environmentVariable) }
        if let roleURL {
            return LedgerConfiguration(connectionString: roleURL, schema: resolvedSchema, validation: validation)
        }
        let owner = LedgerConfiguration(
            connectionString: try await resolveURL(), schema: resolvedSchema, validation: validation)
        return role.map(owner.connecting(as:)) ?? owner
    }
}

/// The environment variable `name`, or the content of the file `name_FILE` names (its last newline
/// removed): how containers pass secrets. Both set is refused (which one was meant?).
func secretSetting(_ name: String) throws -> String? {
    let env = ProcessInfo.processInfo.environment
    let direct = env[name].flatMap { $0.isEmpty ? nil : $0 }
    guard let path = env[name + "_FILE"], !path.isEmpty else { return direct }
    guard direct == nil else { throw ConfigurationProblem("\(name) and \(name)_FILE are both set: give one") }
    let text: String
    do { text = String(decoding: try readInputFile(path), as: UTF8.self) } catch {
        throw ConfigurationProblem("\(name)_FILE: cannot read \(Echo.quoted(path))")
    }
    let value = text.trimmingCharacters(in: .newlines)
    guard !value.isEmpty else { throw ConfigurationProblem("\(name)_FILE: \(Echo.quoted(path)) is empty") }
    return value
}

/// `LEDGER_MAX_PAYLOAD_BYTES` when set; a value that is not a positive whole number is refused
/// (exit 78), never silently ignored.
func maximumPayloadBytes() throws -> Int? {
    guard let raw = ProcessInfo.processInfo.environment["LEDGER_MAX_PAYLOAD_BYTES"], !raw.isEmpty else { return nil }
    guard let n = Int(raw), n > 0 else {
        throw ConfigurationProblem(
            "LEDGER_MAX_PAYLOAD_BYTES=\(Echo.quoted(raw, limit: 40)) is not a positive whole number of bytes; unset it for the default (65536) or give a number such as 131072"
        )
    }
    return n
}

/// A setting the command cannot use (an environment variable): exit 78.
struct ConfigurationProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The formats `audit` and `revenue` write their reports in.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case table, json, csv, html }

/// A report in each of the ``ReportFormat``s.
protocol FormattedReport {
    var table: String { get }
    var json: String { get }
    var csv: String { get }
    var html: String { get }
}

extension AuditReport: FormattedReport {}
extension RevenueReport: FormattedReport {}

/// Writes `report` in `format` to `output` (saying so), or to stdout.
func emit(
    _ report: some FormattedReport, as format: ReportFormat, to output: String?, what: String, bom: Bool = false
) throws {
    let text: String
    switch format {
    case .table: text = report.table
    case .json: text = report.json
    case .csv: text = (bom ? "\u{FEFF}" : "") + report.csv
    case .html: text = report.html
    }
    if let output {
        try writeOutput(text, to: output)
        Diagnostics.say("ledger: wrote the \(format.rawValue) \(what) to \(output)")
    } else {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Writes `text` to `path` in place (open, truncate, write), never by replacing the file: so
/// `/dev/null`, a FIFO or a file others hold open keep being what they are.
func writeOutput(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw InputProblem("cannot write '\(path)': \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw InputProblem("cannot write '\(path)': \(String(cString: strerror(errno)))")
        }
        bytes = bytes.dropFirst(n)
    }
}

/// Input the command cannot use (an unreadable --diff report, an unwritable --output): exit 65.
struct InputProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command body, turning errors into a message on stderr and a documented exit code.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        let (code, hint) = classify(error)
        // The message may repeat input (a field, a key, a value): escaped and cut, whoever wrote it.
        Diagnostics.say(
            "error: \(Echo.shown(String(describing: error), limit: 2000))"
                + (error is EventInputError ? "; nothing was written" : "") + (hint.map { "\nhint: \($0)" } ?? ""))
        throw code
    }
}

/// The documented exit code for an error, and what to do about it where that is not in the message.
func classify(_ error: any Error) -> (code: ExitCode, hint: String?) {
    let entry = Exit.byErrorCode[errorCode(error)]
    return (entry?.exit ?? Exit.internalError, entry?.hint)
}

/// The ledger error code of any error a command may meet.
func errorCode(_ error: any Error) -> LedgerError.Code {
    switch error {
    case let e as any LedgerCodedError: return e.code
    case let e as PostgresError: return LedgerError.Code(e)
    case is EmbeddedPostgres.Failure: return .embeddedServer
    case is InputProblem, is EventInputError: return .invalidInput
    case is ConfigurationProblem: return .migration
    default: return .internalError
    }
}

extension LedgerError.Code {
    /// The embedded server could not be set up (no server binaries, an unreachable folder).
    static let embeddedServer = LedgerError.Code("embedded-server")
    /// Input the command cannot use (a file, an option value).
    static let invalidInput = LedgerError.Code("invalid-input")
    /// Anything else.
    static let internalError = LedgerError.Code("internal")
}

extension Exit {
    /// Every error code's exit status, and a hint where the message does not say what to do.
    static let byErrorCode: [LedgerError.Code: (exit: ExitCode, hint: String?)] = [
        .versionConflict: (conflict, nil),
        .idempotencyConflict: (conflict, nil),
        .invalidEvent: (invalidInput, nil),
        .invalidInput: (invalidInput, nil),
        .rebuildRefused: (usage, nil),
        .databaseUnavailable: (unavailable, nil),
        .database: (internalError, nil),
        .projectorFailed: (internalError, nil),
        .internalError: (internalError, nil),
        .projectorBusy: (busy, nil),
        .readModelsApart: (busy, nil),
        .positionNotReached: (busy, nil),
        .migration: (configuration, nil),
        .schemaNotMigrated: (
            configuration,
            "the ledger's schema is missing or not migrated; run `ledger migrate` (with the same --schema)"
        ),
        .embeddedServer: (configuration, nil),
        .spillFile: (configuration, "name a writable directory with --spill-directory (or TMPDIR)"),
    ]
}
