import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerReport
import LedgerServer

struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the embedded PostgreSQL cluster (./.ledger, or LEDGER_HOME).",
        subcommands: [Start.self, Stop.self, Status.self, URLCommand.self, Promote.self])

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Initialize (first time) and start it; prints its URL.",
            discussion: paragraphs(
                """
                With --standby-of URL (a superuser's URL of the primary), the first start copies the primary
                (pg_basebackup) and runs as its hot standby, synchronous unless --async: the primary waits for
                the standby to have flushed each commit before it returns, so an acknowledged append is on two
                machines. Clients give both servers in one URL and follow whichever takes writes:
                postgresql:///ledger?host=/a/run,/b/run&target_session_attrs=read-write
                """))

        @Option(
            name: .customLong("standby-of"),
            help: "Make this cluster a hot standby of the primary at this URL (first start only).")
        var standbyOf: String?

        @Flag(help: "With --standby-of: asynchronous replication (the primary does not wait for the standby).")
        var async = false

        func run() async throws {
            try await runReportingErrors {
                let db = EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot())
                let log: @Sendable (String) -> Void = { Diagnostics.say("ledger: \($0)") }
                if let standbyOf {
                    print(try await db.startStandby(ofURL: standbyOf, synchronous: !async, log: log))
                } else {
                    print(try await db.start(log: log))
                }
            }
        }
    }

    struct Promote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Promote this standby to primary (after its primary died), and wait until it takes writes.")
        func run() async throws {
            try await runReportingErrors {
                try await EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot()).promote(log: {
                    Diagnostics.say("ledger: \($0)")
                })
                Diagnostics.say("ledger: promoted")
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop it (fast shutdown).")
        func run() async throws {
            try await runReportingErrors {
                try await EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot()).stop()
                Diagnostics.say("ledger: stopped")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print running, stopped or not-initialized (exit 0 only when running).")
        func run() async throws {
            try await runReportingErrors {
                let db = EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot())
                switch try db.status() {
                case .running: print("running \(db.url)")
                case .stopped:
                    print("stopped")
                    throw ExitCode(3)
                case .notInitialized:
                    print("not-initialized")
                    throw ExitCode(3)
                }
            }
        }
    }

    struct URLCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url", abstract: "Print its libpq URL (does not start it).")
        func run() async throws {
            print(EmbeddedPostgres(root: EmbeddedPostgres.defaultRoot()).url)
        }
    }
}
