import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerLog
import LedgerService
import Logging

extension Sealing: ExpressibleByArgument {}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the ledger over HTTP: append, read, audit, store notifications, health and metrics.",
        discussion: paragraphs(
            """
            Appends go through the same validation and the same append path as `ledger append`. Every /v1 route but
            the notification endpoints needs an API token (Authorization: Bearer) with its scope: create one with
            `ledger serve token --name NAME --scopes append,read,audit --append-to FILE` and give FILE as
            --tokens-file (or LEDGER_API_TOKENS_FILE). Store notification endpoints answer only for the stores
            configured (docs/http.md lists the settings). SIGTERM or SIGINT: stop accepting, finish the requests
            in flight, close.
            """),
        subcommands: [Run.self, Token.self])

    @OptionGroup var options: ServeOptions

    func run() async throws { try await options.serve() }

    /// `ledger serve run`: the same as `ledger serve` (kept for scripts that name it).
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run", abstract: "Run the service (the same as `ledger serve`).",
            shouldDisplay: false)
        @OptionGroup var options: ServeOptions
        func run() async throws { try await options.serve() }
    }

    /// The service's options, shown by `ledger serve --help`.
    struct ServeOptions: ParsableArguments {
        @OptionGroup var connection: ConnectionOptions

        @Option(help: "Address to listen on (default: $LEDGER_HTTP_HOST or 127.0.0.1).")
        var host: String?

        @Option(help: "Port (default: $LEDGER_HTTP_PORT or 8080; 0 picks a free one, printed on standard error).")
        var port: Int?

        @Option(name: .customLong("tokens-file"), help: "API token table (default: $LEDGER_API_TOKENS_FILE).")
        var tokensFile: String?

        @Option(name: .customLong("max-body-bytes"), help: "Largest request body accepted (413 over it).")
        var maxBodyBytes: Int = ServiceLimits.defaultMaximumBodyBytes

        @Option(name: .customLong("max-batch-events"), help: "Most facts in one POST /v1/events (413 over it).")
        var maxBatchEvents: Int = 10_000

        @Option(
            name: .customLong("header-timeout"),
            help: "Seconds a new connection has to send its request's head (then it is closed).")
        var headerTimeout: Double = 10

        @Option(name: .customLong("body-timeout"), help: "Seconds a request's body has to arrive whole after its head.")
        var bodyTimeout: Double = 60

        @Option(
            name: .customLong("idle-timeout"), help: "Seconds a kept-alive connection may wait for its next request.")
        var idleTimeout: Double = 60

        @Option(
            name: .customLong("max-connections"), help: "Connections served at once; more wait in the listen backlog.")
        var maxConnections: Int = 1024

        @Option(
            name: .customLong("log-format"),
            help:
                "text, or json: one JSON object per line, the request's id on each (default: $LEDGER_LOG_FORMAT or text)."
        )
        var logFormat: String?

        @Option(
            name: .customLong("max-appends-per-caller"),
            help: "Appends one API token may have in flight; the next is refused with 429 and Retry-After.")
        var maxAppendsPerCaller: Int = 64

        @Option(
            name: .customLong("max-projector-lag"),
            help:
                "Events the read models may be behind the head before /readyz?reads=fresh answers 503 (plain /readyz only reports the lag)."
        )
        var maxProjectorLag: Int64 = 10_000

        @Option(
            name: .customLong("append-timeout"),
            help:
                "Seconds an append keeps reconnecting while PostgreSQL is unreachable before it answers 503 with Retry-After."
        )
        var appendTimeout: Double = 5

        @Option(
            help:
                "Who seals the appends answered at commit (`Prefer: respond-async`): writers (an append takes the append lock when it is free and seals), or sealer (such an append never takes it; one instance, elected among those run with sealer, seals every instance's)."
        )
        var sealing: Sealing = .writers

        @Flag(
            help:
                "Also run the projector (as `ledger project --follow` does), so /v1/orders and /v1/users stay current.")
        var project = false

        @OptionGroup var foldMemory: FoldMemoryOptions

        func serve() async throws {
            try await runReportingErrors {
                let env = ProcessInfo.processInfo.environment
                var config = LedgerService.Configuration()
                config.host = host ?? env["LEDGER_HTTP_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
                config.port =
                    try port ?? env["LEDGER_HTTP_PORT"].flatMap { $0.isEmpty ? nil : $0 }.map {
                        guard let p = Int($0), (0...65535).contains(p) else {
                            throw ConfigurationProblem("LEDGER_HTTP_PORT must be a port number")
                        }
                        return p
                    } ?? 8080
                config.limits.maximumBodyBytes = maxBodyBytes
                config.limits.maximumBatchEvents = maxBatchEvents
                for (name, seconds) in [
                    ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout),
                    ("--idle-timeout", idleTimeout),
                ]
                where !(seconds > 0 && seconds <= 86_400) {
                    throw ConfigurationProblem("\(name) must be between 0 and 86400 seconds (got \(seconds))")
                }
                guard maxConnections >= 1 else { throw ConfigurationProblem("--max-connections must be at least 1") }
                config.limits.timeouts.header = .milliseconds(Int64(headerTimeout * 1000))
                config.limits.timeouts.body = .milliseconds(Int64(bodyTimeout * 1000))
                config.limits.timeouts.idle = .milliseconds(Int64(idleTimeout * 1000))
                config.limits.maximumConnections = maxConnections
                guard maxAppendsPerCaller >= 1 else {
                    throw ConfigurationProblem("--max-appends-per-caller must be at least 1")
                }
                config.limits.maximumAppendsPerCaller = maxAppendsPerCaller
                guard maxProjectorLag >= 0 else { throw ConfigurationProblem("--max-projector-lag must be 0 or more") }
                config.maximumProjectorLag = maxProjectorLag
                config.foldMemory = try foldMemory.memory
                config.tokens = try Self.tokens(
                    tokensFile ?? env["LEDGER_API_TOKENS_FILE"], inline: env["LEDGER_API_TOKENS"])
                do {
                    config.notifications = try NotificationConfiguration(
                        environment: env, readFile: { Array(try readInputFile($0)) })
                } catch let e as NotificationConfiguration.Problem {
                    throw ConfigurationProblem(e.description)
                }
                var roles: [LedgerRole: LedgerConfiguration] = [:]
                for role in [LedgerRole.writer, .reader, .auditor] {
                    roles[role] = try await connection.configuration(as: role)
                }
                guard appendTimeout > 0 && appendTimeout <= 3600 else {
                    throw ConfigurationProblem("--append-timeout must be between 0 and 3600 seconds")
                }
                // A client waits for its answer: an append gives up reconnecting after this budget (the
                // library's default, for batch jobs, is 30 s).
                roles[.writer]?.reconnectTimeout = .milliseconds(Int64(appendTimeout * 1000))
                roles[.writer]?.sealing = sealing
                let format = logFormat ?? env["LEDGER_LOG_FORMAT"].flatMap { $0.isEmpty ? nil : $0 } ?? "text"
                guard ["text", "json"].contains(format) else {
                    throw ConfigurationProblem("--log-format must be text or json (got \(Echo.quoted(format)))")
                }
                if format == "json" { LoggingSystem.bootstrap { JSONLogHandler(label: $0) } }
                var logger = Logger(label: "ledger-serve")
                logger.logLevel = env["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
                // In JSON, the service's own lines are JSON too.
                let sayer = ServiceSayer(logger: format == "json" ? logger : nil)
                let stores = try await LedgerStores.open({ roles[$0]! }, logger: logger)
                if project {
                    do {
                        config.projector = try await EventStore.open(
                            try await connection.configuration(as: .projector), logger: logger)
                    } catch {
                        await stores.close()
                        throw error
                    }
                }
                let service = LedgerService(configuration: config, stores: stores, logger: logger)
                let host = config.host
                try await service.run(onListening: { port in sayer.say("serving on http://\(host):\(port)") })
                sayer.say("stopped")
            }
        }

        /// The token table from a file, or from LEDGER_API_TOKENS (its lines; digests only, no secret).
        static func tokens(_ path: String?, inline: String?) throws -> TokenTable {
            if (path ?? "").isEmpty, let inline, !inline.isEmpty {
                do {
                    return try TokenTable(parsing: inline.replacingOccurrences(of: ";", with: "\n"))
                } catch {
                    throw ConfigurationProblem("LEDGER_API_TOKENS: \(error)")
                }
            }
            guard let path, !path.isEmpty else {
                Diagnostics.say(
                    "ledger: warning: no API tokens configured (--tokens-file, LEDGER_API_TOKENS_FILE or LEDGER_API_TOKENS): every /v1 route but the store notifications answers 401"
                )
                return TokenTable()
            }
            let data = try readInputFile(path)
            do {
                return try TokenTable(parsing: String(decoding: data, as: UTF8.self))
            } catch {
                throw ConfigurationProblem("--tokens-file: \(error)")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Create an API token: prints the token (once; give it to the calling service) and the line for the token file."
        )

        @Option(help: "The calling service's name (letters, digits, - _ .).")
        var name: String

        @Option(help: "Comma-separated scopes: append, read, audit.")
        var scopes: String

        @Option(
            name: .customLong("append-to"),
            help: "Add the token's line to this token file (created if missing; a name already in it is refused).")
        var appendTo: String?

        func validate() throws {
            guard !name.isEmpty,
                name.unicodeScalars.allSatisfy({
                    CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)
                })
            else {
                throw ValidationError("--name must be letters, digits, - _ or .")
            }
            for s in scopes.split(separator: ",") where Scope(rawValue: String(s)) == nil {
                throw ValidationError("--scopes: unknown scope '\(s)'; scopes: append, read, audit")
            }
            guard !scopes.split(separator: ",").isEmpty else {
                throw ValidationError("--scopes: give at least one of append, read, audit (comma-separated)")
            }
        }

        func run() async throws {
            try await runReportingErrors {
                let (token, line) = TokenTable.issue(
                    name: name, scopes: Set(scopes.split(separator: ",").compactMap { Scope(rawValue: String($0)) }))
                if let appendTo {
                    // The file as it is must still read as a token table, and keep one line per name.
                    var text =
                        FileManager.default.fileExists(atPath: appendTo)
                        ? String(decoding: try readInputFile(appendTo), as: UTF8.self) : ""
                    let table: TokenTable
                    do { table = try TokenTable(parsing: text) } catch {
                        throw InputProblem("\(Echo.quoted(appendTo)): \(error); nothing was added")
                    }
                    if table.entries.contains(where: { $0.name == name }) {
                        throw InputProblem(
                            "\(Echo.quoted(appendTo)) already has a token named \(name); nothing was added (remove its line to replace it)"
                        )
                    }
                    if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
                    try writeOutput(text + line + "\n", to: appendTo)
                    print("token: \(token)")
                    Diagnostics.say("ledger: added \(name)'s line to \(appendTo); the token is shown once, above")
                } else {
                    print("token: \(token)")
                    print("line:  \(line)")
                }
            }
        }
    }
}

/// The service's own lines (serving on..., stopped): `ledger: ...` on standard error, or, with
/// JSON logs, a log line like the others.
struct ServiceSayer: Sendable {
    let logger: Logger?

    func say(_ text: String) {
        if let logger { logger.notice("\(text)") } else { Diagnostics.say("ledger: " + text) }
    }
}
