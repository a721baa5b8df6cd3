import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerNotifications
import LedgerService
import LedgerStatements
import Synchronization

extension StatementSource: ExpressibleByArgument {}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import records from outside the ledger.",
        subcommands: [ImportStatement.self])
}

struct ImportStatement: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statement",
        abstract: "Import a store's statement file (what the store says it paid and refunded) as facts.",
        discussion: paragraphs(
            """
            Sources: \(StatementSource.allCases.map(\.rawValue).joined(separator: ", ")).
            The file is parsed in the store's own format and validated (summary rows against the lines, the
            digest when --digest is given); any problem names its line and column (or field) and nothing is
            written (exit 65). The statement and its lines are appended as one batch; a re-import of the same
            file is the same facts (nothing new is stored). `ledger audit` then reconciles the log with it
            and `ledger revenue` shows it beside the ledger's own figures.

            An App Store history's signed transactions are verified when LEDGER_APPSTORE_ROOT_CERT and
            LEDGER_APPSTORE_BUNDLE_ID (and LEDGER_APPSTORE_ENVIRONMENT) name the App Store's root, as for
            `ledger serve`: one that does not verify refuses the file (exit 65). Without a root the file is
            imported and its record says its signatures were not verified; a later import of the same
            file with a root records the verification.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "The store file's kind: \(StatementSource.allCases.map(\.rawValue).joined(separator: ", ")).")
    var source: StatementSource

    @Option(
        help: "Start of the period the file covers (RFC 3339), when the file does not say (e.g. an empty WeChat bill).")
    var from: String?

    @Option(help: "End of the period the file covers (exclusive, RFC 3339).")
    var to: String?

    @Option(
        help:
            "The digest the store published for the file (sha256:<hex>, sha1:<hex> as WeChat publishes it, or the bare hex): the bytes must match it."
    )
    var digest: String?

    @Argument(
        help:
            "The statement file; for an App Store history or a Google voided purchases list longer than one page, its pages in the order the store returned them (one statement)."
    )
    var files: [String]

    func validate() throws {
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, Timestamp(value) == nil {
                throw ValidationError("\(name) '\(value)' is not an RFC 3339 time such as 2026-03-01T00:00:00Z")
            }
        }
        if (from == nil) != (to == nil) { throw ValidationError("give both --from and --to, or neither") }
    }

    func run() async throws {
        try await runReportingErrors {
            let file = files.joined(separator: " ")
            let pages = try files.map { [UInt8](try readInputFile($0)) }
            let options = StatementOptions(
                periodStart: from.flatMap(Timestamp.init),
                periodEnd: to.flatMap(Timestamp.init), expectedDigest: digest)
            var parsed: StatementFile
            // On a terminal, a bar per stage: reading the rows, checking the facts, verifying
            // signatures, appending.
            let bars = Mutex<[String: ProgressBar]>([:])
            let progress: StatementProgress = { stage, done, total in
                let bar = bars.withLock { known in
                    if let bar = known[stage] { return bar }
                    let bar = ProgressBar(stage, unit: stage == "read" ? "rows" : "facts")
                    known[stage] = bar
                    return bar
                }
                bar.update(Int64(done), Int64(total))
                if done == total { bar.finish() }
            }
            do throws(StatementError) {
                parsed = try StatementParser.parse(pages: pages, source: source, options: options, progress: progress)
            } catch {
                throw InputProblem("\(Echo.quoted(file)): \(error.description); nothing was written")
            }
            parsed = try await Self.verifySignatures(parsed, file: file)
            let store = try await EventStore.open(try await connection.configuration(as: .writer))
            let result: (stored: Int, already: Int, first: Int64?)
            do {
                result = try await Self.append(parsed, to: store, progress: true)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            let s = parsed.imported
            FileHandle.standardOutput.write(
                Data(
                    (JSONValue.makeObject([
                        ("source", .string(s.source.rawValue)), ("digest", .string(s.digest)),
                        ("periodStart", .string(s.periodStart.iso8601)),
                        ("periodEnd", .string(s.periodEnd.iso8601)), ("lines", .int(s.lines)),
                        ("stored", .int(Int64(result.stored))),
                        ("alreadyStored", .int(Int64(result.already))),
                        ("position", result.first.map { .int($0) } ?? .null),
                        (
                            "signatures",
                            parsed.signatures.map { s in
                                .makeObject([
                                    ("signed", .int(s.signed)), ("verified", .bool(s.verified)),
                                    ("root", s.root.map { .string($0) } ?? .null),
                                ])
                            } ?? .null
                        ),
                    ]).canonicalText + "\n").utf8))
            Diagnostics.say(
                "ledger: \(s.source.rawValue) \(s.digest.prefix(19))…, \(s.source.period(s.periodStart, s.periodEnd)): \(s.lines) lines, \(result.stored) facts stored, \(result.already) already stored"
            )
        }
    }

    /// Verifies a statement's signed entries with the App Store root the environment configures;
    /// without one, says on stderr that they are recorded as not verified.
    static func verifySignatures(_ parsed: StatementFile, file: String) async throws -> StatementFile {
        guard !parsed.signed.isEmpty else { return parsed }
        let verifier: AppleVerifier?
        do {
            verifier = try NotificationConfiguration.appStore(
                environment: ProcessInfo.processInfo.environment, readFile: { Array(try readInputFile($0)) })
        } catch let e as NotificationConfiguration.Problem {
            throw ConfigurationProblem(e.description)
        }
        guard let verifier else {
            Diagnostics.say(
                "ledger: \(parsed.signed.count) signed transactions imported without verifying their signatures (recorded as not verified): "
                    + "set LEDGER_APPSTORE_ROOT_CERT and LEDGER_APPSTORE_BUNDLE_ID to the App Store's root and app to verify them"
            )
            return parsed
        }
        do {
            let bar = ProgressBar("verify", unit: "signatures")
            let root = try await verifier.verifyEntries(parsed.signed.map { ($0.place, $0.jws) }) { done, total in
                bar.update(Int64(done), Int64(total))
                if done == total { bar.finish() }
            }
            return parsed.verified(root: root)
        } catch {
            throw InputProblem("\(Echo.quoted(file)): \(error.description); nothing was written")
        }
    }

    /// Appends the statement and its lines as one batch (all or nothing).
    static func append(
        _ file: StatementFile, to store: EventStore, progress: Bool = false
    ) async throws -> (stored: Int, already: Int, first: Int64?) {
        let events = file.events()
        // One batch, all or nothing: the bar says so, and fills when it commits.
        let bar = ProgressBar("append (one batch)", unit: "facts", enabled: progress && Diagnostics.isTerminal)
        bar.update(0, Int64(events.count))
        let appended = try await store.append(events)
        bar.update(Int64(events.count), Int64(events.count))
        bar.finish()
        let stored = appended.filter { !$0.alreadyStored }.count
        return (stored, appended.count - stored, appended.first?.position)
    }
}
