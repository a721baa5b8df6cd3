import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerServer
import LedgerTesting
import Testing

/// Runs the built `ledger` binary and checks stdout, stderr and the exit code.
struct CLI {
    let url: String
    let schema: String

    static var binary: URL {
        // The test bundle sits beside the products (.build/<triple>/debug).
        let candidates =
            [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            + Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for dir in candidates
        where FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("ledger").path) {
            return dir.appendingPathComponent("ledger")
        }
        return TestDatabase.packageRoot.appendingPathComponent(".build/debug/ledger")
    }

    typealias Output = ChildProcess.Output

    func run(
        _ arguments: [String], stdin: String? = nil, withConnection: Bool = true, environment: [String: String] = [:]
    ) async throws -> Output {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "LEDGER_DATABASE_URL")
        env.merge(environment) { $1 }
        return try await ChildProcess.run(
            Self.binary.path, arguments + (withConnection ? ["--database-url", url, "--schema", schema] : []),
            environment: env, stdin: stdin)
    }
}

func lines(_ s: String) -> [String] { s.split(separator: "\n").map(String.init) }

let sample = try! String(
    contentsOf: TestDatabase.packageRoot.appendingPathComponent("schema/examples/purchase-facts.jsonl"), encoding: .utf8
)

@Suite("ledger CLI", .timeLimit(.minutes(2)))
struct CLITests {
    /// A deployment gives a command only its role's URL, from a file (a container secret): no
    /// owner's URL is needed, and no private cluster is started.
    @Test func aRoleURLFromAFileIsEnough() async throws {
        try await TestDatabase.withSchema("clirolefile") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-secret-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let secret = dir.appendingPathComponent("reader-url").path
            try (config.connecting(as: .reader).connectionString + "\n").write(
                toFile: secret, atomically: true, encoding: .utf8)
            let home = dir.appendingPathComponent("no-cluster-here").path
            let env = ["LEDGER_READER_DATABASE_URL_FILE": secret, "LEDGER_HOME": home]
            let read = try await cli.run(["read", "--schema", config.schema], withConnection: false, environment: env)
            #expect(read.status == 0 && lines(read.stdout).count == 10, "\(read.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: home),
                "a private cluster was started for a command that had its role's URL")
            var both = env
            both["LEDGER_READER_DATABASE_URL"] = config.connectionString
            let refused = try await cli.run(
                ["read", "--schema", config.schema], withConnection: false, environment: both)
            #expect(refused.status == 78 && refused.stderr.contains("are both set"), "\(refused.stderr)")
        }
    }

    @Test func appendReadVerify() async throws {
        try await TestDatabase.withSchema("cli") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let appended = try await cli.run(["append"], stdin: sample)
            #expect(appended.status == 0, "\(appended.stderr)")
            let out = lines(appended.stdout)
            #expect(out.count == 10)
            #expect(
                out[0].hasPrefix(
                    #"{"line":1,"eventId":"0b7e3f1a-2c4d-4e5f-8a9b-000000000001","stream":"product:appstore:com.example.coins100","version":0,"position":1,"alreadyStored":false}"#
                ))
            #expect(appended.stderr.contains("appended 10 events"))

            let again = try await cli.run(["append"], stdin: sample)
            #expect(again.status == 0)
            #expect(lines(again.stdout).allSatisfy { $0.contains(#""alreadyStored":true"#) })

            let read = try await cli.run(["read", "--from", "9", "--limit", "1"])
            #expect(read.status == 0)
            let event = try JSONValue.parse(lines(read.stdout).first ?? "")
            #expect(event["position"] == .int(9))
            #expect(event["type"] == .string("PaymentVerified"))
            #expect(event["payload"]?["price"]?["amount"] == .int(1800))

            let stream = try await cli.run(["read", "--stream", "user:u_1001"])
            #expect(lines(stream.stdout).count == 2)

            let verify = try await cli.run(["verify-chain"])
            #expect(verify.status == 0)
            #expect(verify.stdout.contains(#""intact":true,"verified":10"#))
        }
    }

    @Test func malformedLineWritesNothingAndNamesTheLine() async throws {
        try await TestDatabase.withSchema("climalformed") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let input =
                lines(sample)[0] + "\n" + #"{"stream": "s", "type": "OrderCreated", "payload": {"a": 1,}}"# + "\n"
            let r = try await cli.run(["append"], stdin: input)
            #expect(r.status == 65)
            #expect(r.stderr.contains("line 2, column 60"), "\(r.stderr)")
            #expect(r.stdout.isEmpty)
            let read = try await cli.run(["read"])
            #expect(read.stdout.isEmpty)
        }
    }

    @Test(arguments: [
        (#"{"stream":"s","type":"OrderCreated","payload":{},"occurredAt":"2026-03-31"}"#, "field occurredAt"),
        (#"{"stream":"s","type":"OrderCreated","payload":[],"occurredAt":"2026-03-31T00:00:00Z"}"#, "field payload"),
        (#"{"type":"OrderCreated","payload":{},"occurredAt":"2026-03-31T00:00:00Z"}"#, "field stream: is required"),
        (
            #"{"stream":"s","type":"OrderCreatd","payload":{},"occurredAt":"2026-03-31T00:00:00Z"}"#,
            "unknown fact type \"OrderCreatd\""
        ),
        (
            #"{"stream":"s","type":"OrderCreated","payload":{"price":9.99},"occurredAt":"2026-03-31T00:00:00Z"}"#,
            "only integer numbers"
        ),
        (
            #"{"stream":"s","type":"OrderCreated","payload":{},"occurredAt":"2026-03-31T00:00:00Z","expectedVersion":"latest"}"#,
            "field expectedVersion"
        ),
    ])
    func invalidLinesAreRefused(line: String, message: String) async throws {
        try await TestDatabase.withSchema("clibad") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let r = try await cli.run(["append"], stdin: lines(sample)[0] + "\n" + line + "\n")
            #expect(r.status == 65)
            #expect(r.stderr.contains("line 2"), "\(r.stderr)")
            #expect(r.stderr.contains(message), "\(r.stderr)")
            #expect(try await cli.run(["read"]).stdout.isEmpty)
        }
    }

    @Test func unknownTypesCanBeAllowed() async throws {
        try await TestDatabase.withSchema("cliunknown") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let line = #"{"stream":"s","type":"ExperimentalFact","payload":{},"occurredAt":"2026-03-31T00:00:00Z"}"#
            let refused = try await cli.run(["append"], stdin: line)
            let allowed = try await cli.run(["append", "--allow-unknown-types"], stdin: line)
            #expect(refused.status == 65)
            #expect(allowed.status == 0)
        }
    }

    @Test("two identical lines in one append are stored once, and the second is reported already stored")
    func identicalLinesInOneBatch() async throws {
        try await TestDatabase.withSchema("clidup") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let line =
                #"{"eventId":"6f1c2a9e-4b7d-4c1e-9a2b-3c4d5e6f7a8b","stream":"order:o1","type":"OrderClosed","payload":{"orderId":"o1","reason":"timeout"},"occurredAt":"2026-03-31T00:00:00Z","idempotencyKey":"order:o1:closed"}"#
            let r = try await cli.run(["append"], stdin: line + "\n" + line + "\n")
            #expect(r.status == 0, "\(r.stderr)")
            let out = r.stdout.split(separator: "\n").map { try? JSONValue.parse(String($0)) }
            #expect(out.map { $0?["alreadyStored"] } == [.bool(false), .bool(true)])
            #expect(out.map { $0?["position"] } == [.int(1), .int(1)])
            #expect(r.stderr.contains("appended 1 events, 1 already stored"), "\(r.stderr)")
        }
    }

    @Test func payloadOverTheLimitIsRefused() async throws {
        try await TestDatabase.withSchema("clilimit") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let big = String(repeating: "x", count: 70_000)
            let line =
                #"{"stream":"s","type":"OrderCreated","payload":{"blob":"\#(big)"},"occurredAt":"2026-03-31T00:00:00Z"}"#
            let r = try await cli.run(["append"], stdin: line)
            #expect(r.status == 65)
            #expect(r.stderr.contains("over the limit of 65536 bytes"))
        }
    }

    @Test func conflictsExitWithCode2() async throws {
        try await TestDatabase.withSchema("cliconflict") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let wrongVersion =
                #"{"stream":"order:ord_20260331_0001","type":"OrderClosed","payload":{"orderId":"ord_20260331_0001","reason":"timeout"},"occurredAt":"2026-04-01T00:00:00Z","expectedVersion":0}"#
            // On line 2 of the input (a blank line first): the error names it.
            let r = try await cli.run(["append"], stdin: "\n" + wrongVersion)
            #expect(r.status == 2)
            #expect(r.stderr.contains("error: line 2: version conflict"), "\(r.stderr)")
            #expect(
                r.stderr.contains(
                    #"stream "order:ord_20260331_0001": expected 0, but the stream is at version 1, so this batch's event "#
                ), "\(r.stderr)")
            // Same idempotency key, different amount.
            var changed = lines(sample)[1].replacingOccurrences(of: #""amount":600"#, with: #""amount":6"#)
            changed = changed.replacingOccurrences(of: "000000000002", with: "0000000000ff")
            let k = try await cli.run(["append"], stdin: changed)
            #expect(k.status == 2)
            #expect(
                k.stderr.contains(
                    #"idempotency key "order:ord_20260331_0001:created" is already stored at position 2"#),
                "\(k.stderr)")
        }
    }

    @Test func unreachableDatabaseExits69WithoutThePassword() async throws {
        let cli = CLI(url: "postgresql://ledger:hunter2-secret@127.0.0.1:1/ledger?connect_timeout=2", schema: "ledger")
        let r = try await cli.run(["read"])
        #expect(r.status == 69)
        #expect(r.stderr.contains("postgresql://ledger:***@127.0.0.1:1/ledger"), "\(r.stderr)")
        #expect(!r.stderr.contains("hunter2"))
    }

    @Test func tamperedLogFailsVerification() async throws {
        try await TestDatabase.withSchema("clitamper") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let admin = try await TestDatabase.admin(config)
            try await admin.execute(
                """
                SET session_replication_role = replica;
                UPDATE \(quoteIdentifier(config.schema)).events SET payload = jsonb_set(payload, '{amount}', '6') WHERE position = 2;
                """)
            await admin.close()
            let r = try await cli.run(["verify-chain"])
            #expect(r.status == 1)
            #expect(r.stdout.contains(#""intact":false,"verified":10,"firstBrokenPosition":2"#), "\(r.stdout)")
        }
    }

    @Test func editedMigrationIsRefused() async throws {
        try await TestDatabase.withSchema("climigrate") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["migrate"]).status == 0)
            let admin = try await TestDatabase.admin(config)
            try await admin.execute(
                "UPDATE \(quoteIdentifier(config.schema)).schema_migrations SET checksum = 'feedface' WHERE version = 1"
            )
            await admin.close()
            let r = try await cli.run(["migrate"])
            #expect(r.status == 78)
            #expect(r.stderr.contains("0001_event_log.sql was edited after it was applied"), "\(r.stderr)")
        }
    }

    @Test func noServerBinariesSaysHowToInstallThem() async throws {
        let home = "/tmp/ledger-nobin-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let cli = CLI(url: "", schema: "ledger")
        let r = try await cli.run(
            ["db", "start"], withConnection: false,
            environment: ["LEDGER_PG_BIN": "/nonexistent/bin", "LEDGER_HOME": home])
        #expect(r.status == 78)
        #expect(r.stderr.contains("apt-get install -y postgresql"), "\(r.stderr)")
        #expect(r.stderr.contains("LEDGER_DATABASE_URL"))
    }

    @Test func unmigratedSchemaSaysToMigrate() async throws {
        try await TestDatabase.withSchema("clinomigrate", migrate: false) { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let r = try await cli.run(["read"])
            #expect(r.status == 78)
            #expect(r.stderr.contains("run `ledger migrate`"), "\(r.stderr)")
        }
    }

    /// A fold that may not make its spill file says where it tried and what to do (exit 78); a
    /// limit that is not a size is a usage error that names where it came from.
    @Test func foldMemoryProblemsAreNamed() async throws {
        try await TestDatabase.withSchema("clifoldmemory") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["migrate"]).status == 0)
            let r = try await cli.run([
                "audit", "--fold-memory", "1MiB", "--spill-directory", "/nonexistent-spill-dir", "-o", "/dev/null",
            ])
            #expect(r.status == 78)
            #expect(
                r.stderr.contains("cannot make a spill file in /nonexistent-spill-dir")
                    && r.stderr.contains("--spill-directory"), "\(r.stderr)")
            let bad = try await cli.run(["audit"], environment: ["LEDGER_FOLD_MEMORY": "lots"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("LEDGER_FOLD_MEMORY 'lots' is not a size"), "\(bad.stderr)")
            let ok = try await cli.run(["audit", "--fold-memory", "1KiB", "--format", "json"])
            #expect(ok.status == 0)
        }
    }

    @Test func usageErrors() async throws {
        let cli = CLI(url: "unused", schema: "ledger")
        #expect(try await cli.run(["read", "--limit", "0"]).status == 64)
        #expect(try await cli.run(["no-such-command"], withConnection: false).status == 64)
        let help = try await cli.run(["--help"], withConnection: false)
        #expect(help.status == 0 && help.stdout.contains("verify-chain"))
    }
}

@Suite("ledger read --follow", .timeLimit(.minutes(2)))
struct FollowTests {
    @Test func followPrintsEventsAppendedLater() async throws {
        try await TestDatabase.withSchema("clifollow") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: lines(sample).prefix(3).joined(separator: "\n")).status == 0)
            // Appends the rest once `read --follow --limit 10` has read the first three and waits
            // for more: its connections (named by PGAPPNAME) are idle, the reader's last query was
            // the read of the log. Decided by the server's state, not by a sleep.
            let rest = lines(sample).dropFirst(3).joined(separator: "\n")
            let name = "ledger-follow-test-\(UUID().uuidString.prefix(8))"
            let admin = try await TestDatabase.admin(config)
            defer { Task { await admin.close() } }
            let appender = Task { () throws -> Int32 in
                while try await admin.query(
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE application_name = $1 AND state = 'idle' AND query LIKE '%FROM %events%position > $1%'
                    """, [.text(name)]
                ).int64(0, 0) == 0 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                return try await cli.run(["append"], stdin: rest).status
            }
            defer { appender.cancel() }
            let r = try await cli.run(["read", "--follow", "--limit", "10"], environment: ["PGAPPNAME": name])
            #expect(try await appender.value == 0)
            #expect(r.status == 0)
            #expect(lines(r.stdout).count == 10)
            #expect(lines(r.stdout).last?.contains(#""position":10"#) == true)
        }
    }
}

@Suite("Peak memory of a child")
struct PeakMemoryTests {
    /// `ledger bench` measures a rebuild or an audit in a child by the peak the child reports itself
    /// (wait4's ru_maxrss would include this process's own peak, inherited across fork and exec),
    /// and by the CPU time it used, in microseconds, after it.
    @Test func aChildReportsItsOwnPeakNotItsParents() async throws {
        let ballast = [UInt8](repeating: 1, count: 384 << 20)  // written, so resident here
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-peak-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let t0 = ContinuousClock.now
        let r = try await CLI(url: "", schema: "").run(
            ["--help"], withConnection: false, environment: ["LEDGER_PEAK_RSS_FILE": file])
        let wall = ContinuousClock.now - t0
        #expect(r.status == 0)
        let fields = try String(contentsOfFile: file, encoding: .utf8).split(separator: " ")
        #expect(fields.count == 2, "\(fields)")
        let peak = try #require(fields.first.flatMap { Int64($0) })
        #expect(peak > 1 << 20 && peak < 256 << 20, "the child reported \(peak) bytes")
        #expect(ballast.count == 384 << 20)
        // Its CPU time: some, and no more than two cores could give it while it ran.
        let cpu = try #require(fields.dropFirst().first.flatMap { Int64($0) })
        let wallMicros = wall.components.seconds * 1_000_000 + wall.components.attoseconds / 1_000_000_000_000
        #expect(cpu > 0 && cpu <= 2 * wallMicros, "the child reported \(cpu) µs of CPU in \(wall)")
    }
}

@Suite("ledger bench: its own schemas only", .timeLimit(.minutes(3)))
struct BenchSchemaTests {
    /// A benchmark regenerates its log by dropping the schema, and rebuilds read models there: it
    /// works only in a schema a benchmark made. Named at a schema holding a ledger, it refuses and
    /// the facts stay.
    @Test func aBenchmarkNeverDropsASchemaItDidNotMake() async throws {
        try await TestDatabase.withSchema("clibenchsafe") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["append"], stdin: sample).status == 0)
            let bench = try await cli.run([
                "bench", "rebuild", "--events", "300", "--users", "5", "--fold-events", "100",
            ])
            #expect(bench.status != 0)
            #expect(
                bench.stderr.contains("was not made by `ledger bench`")
                    && bench.stderr.contains("name another --schema"), "\(bench.stderr)")
            let read = try await cli.run(["read", "--limit", "100"])
            #expect(read.status == 0 && lines(read.stdout).count == 10)
        }
    }

    /// A benchmark log is reused when the same one is asked for; another one is refused, the log
    /// kept, unless `--reload` says to replace it.
    @Test func aBenchmarkKeepsItsLogUnlessToldToReplaceIt() async throws {
        try await TestDatabase.withSchema("clibenchown", migrate: false) { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            func bench(_ events: Int, _ extra: [String] = []) async throws -> CLI.Output {
                try await cli.run(
                    ["bench", "rebuild", "--events", "\(events)", "--users", "5", "--fold-events", "100"] + extra)
            }
            let first = try await bench(300)
            #expect(first.status == 0, "\(first.stderr)")
            // The pure fold's figure is the best of its rounds, each printed.
            let rounds = lines(first.stdout).first { $0.hasPrefix("pure fold rounds: ") }
            #expect(rounds?.split(separator: "; ").count == 3, "\(first.stdout)")
            #expect(lines(first.stdout).contains { $0.hasPrefix("pure fold (100 typed facts in memory, best of 3)") })
            let same = try await bench(300)
            #expect(same.status == 0 && same.stderr.contains("reusing the 300-fact log"), "\(same.stderr)")
            let other = try await bench(400)
            #expect(other.status != 0)
            #expect(
                other.stderr.contains("holds another benchmark log (events 300, users 5, seed 42; head 300)")
                    && other.stderr.contains("--reload"), "\(other.stderr)")
            let kept = try await cli.run(["read", "--limit", "1000"])
            #expect(kept.status == 0 && lines(kept.stdout).count == 300, "\(kept.stderr)")
            let replaced = try await bench(400, ["--reload"])
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(replaced.stderr.contains("generating and loading 400 facts"), "\(replaced.stderr)")
        }
    }
}

@Suite("ledger serve token", .timeLimit(.minutes(1)))
struct ServeTokenCLITests {
    @Test(
        "--append-to writes the token's line into the token file, once per name, and refuses a file that is not a token table"
    )
    func appendsTheLineToTheTokenFile() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tokens").path
        let cli = CLI(url: "", schema: "")
        let first = try await cli.run(
            ["serve", "token", "--name", "billing", "--scopes", "append,read,audit", "--append-to", file],
            withConnection: false)
        #expect(first.status == 0, "\(first.stderr)")
        let token = first.stdout.split(separator: "\n").first.map { String($0.dropFirst("token: ".count)) } ?? ""
        let second = try await cli.run(
            ["serve", "token", "--name", "reports", "--scopes", "audit", "--append-to", file], withConnection: false)
        #expect(second.status == 0 && !second.stdout.contains("line:"), "\(second.stderr)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(
            lines.count == 2 && lines[0].hasPrefix("billing ") && lines[1].hasPrefix("reports audit sha256:"),
            "\(lines)")
        #expect(
            lines[0].hasSuffix("sha256:" + SHA256.hash(Array(token.utf8)).hexString),
            "the line holds the digest of the token printed")
        let again = try await cli.run(
            ["serve", "token", "--name", "billing", "--scopes", "read", "--append-to", file], withConnection: false)
        #expect(again.status == 65 && again.stderr.contains("already has a token named billing"), "\(again.stderr)")
        let junk = dir.appendingPathComponent("junk").path
        try "not a token table\n".write(toFile: junk, atomically: true, encoding: .utf8)
        let refused = try await cli.run(
            ["serve", "token", "--name", "x", "--scopes", "read", "--append-to", junk], withConnection: false)
        let junkAfter = try String(contentsOfFile: junk, encoding: .utf8)
        #expect(refused.status == 65 && junkAfter == "not a token table\n", "\(refused.stderr)")
    }
}

@Suite("Help text", .timeLimit(.minutes(1)))
struct HelpTextTests {
    /// Paragraphs are wrapped by ArgumentParser at the terminal's width (80 columns when it is not
    /// a terminal), not broken in the source mid-sentence; `serve --help` shows the service's options.
    @Test(arguments: [
        ["--help"], ["audit", "--help"], ["serve", "--help"], ["simulate", "--help"], ["db", "start", "--help"],
    ])
    func helpIsWrappedAtTheTerminal(_ arguments: [String]) async throws {
        let r = try await CLI(url: "", schema: "").run(arguments, withConnection: false, environment: ["COLUMNS": "80"])
        #expect(r.status == 0)
        // (The USAGE line is ArgumentParser's own, never wrapped.)
        let long = r.stdout.split(separator: "\n").map(String.init).filter { $0.count > 80 && !$0.hasPrefix("USAGE:") }
        #expect(long.isEmpty, "lines over 80 columns: \(long)")
        // Filled paragraphs: in the overview, no line but a paragraph's last is cut short (a source
        // line break wrapped again by ArgumentParser leaves a short line mid-sentence).
        let overview = r.stdout.components(separatedBy: "USAGE:")[0]
        for paragraph in overview.components(separatedBy: "\n\n") {
            let lines = paragraph.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(" ") }
            let short = lines.dropLast().filter { $0.count < 50 }
            #expect(short.isEmpty, "a paragraph broken mid-sentence: \(short) in \(paragraph)")
        }
        if arguments.first == "serve" {
            for option in ["--host", "--port", "--tokens-file", "--append-timeout", "--header-timeout"] {
                #expect(r.stdout.contains(option), "serve --help does not show \(option)")
            }
        }
    }
}

@Suite("Progress on a terminal", .timeLimit(.minutes(2)))
struct ProgressCLITests {
    /// Runs `ledger arguments` with a terminal for stderr (util-linux `script`), returning what it showed.
    static func onATerminal(_ arguments: [String]) async throws -> String {
        let quoted = ([CLI.binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        let r = try await ChildProcess.run(
            "/usr/bin/script", ["-qec", quoted, "/dev/null"], environment: ProcessInfo.processInfo.environment)
        #expect(r.status == 0, "\(r.stdout.suffix(2000))")
        return r.stdout.replacingOccurrences(of: "\r", with: "\n")
    }

    @Test("simulate shows its users and its appends, revenue its fold, an import its stages, as they go")
    func longCommandsShowProgress() async throws {
        try await TestDatabase.withSchema("cliprogress") { config in
            let connection = ["--database-url", config.connectionString, "--schema", config.schema]
            let truth = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-progress-\(UUID().uuidString).json"
            ).path
            defer { try? FileManager.default.removeItem(atPath: truth) }
            let simulate = try await Self.onATerminal(
                ["simulate", "--users", "40", "--days", "5", "--seed", "5", "--truth", truth] + connection)
            #expect(
                simulate.contains("simulate [##############################] 100% 40/40 users"),
                "\(simulate.suffix(1500))")
            #expect(simulate.contains("append [##############################] 100%"), "\(simulate.suffix(1500))")
            let revenue = try await Self.onATerminal(["revenue"] + connection)
            #expect(revenue.contains("revenue [##############################] 100%"), "\(revenue.suffix(1500))")
            // An import: its rows read, its facts checked, its one batch appended.
            let bill = TestDatabase.packageRoot.appendingPathComponent(
                "schema/examples/statements/wechat-tradebill-2026-03-02.csv"
            ).path
            let imported = try await Self.onATerminal(
                ["import", "statement", "--source", "wechat-tradebill", bill] + connection)
            for stage in [
                "read [##############################] 100%", "check [##############################] 100%",
                "append (one batch) [##############################] 100%",
            ] {
                #expect(imported.contains(stage), "\(stage): \(imported.suffix(1500))")
            }
        }
    }
}

@Suite("ledger bench sealer: the candidate append path", .timeLimit(.minutes(3)))
struct BenchSealerTests {
    /// The candidate of `tools/append-design/` driven from one process: every writer is answered,
    /// with its fact's position when it waits for one, and everything the writers appended is
    /// sealed once, in gap-free positions, each stream's versions in log order.
    ///
    /// On a cluster of its own: the candidate seals only below the oldest transaction still running
    /// anywhere in the cluster, so on the shared one every other test's write transaction holds its
    /// writers' answers back (once 24 of 100 appends in 60 s, on a loaded machine). The run is bounded
    /// by its count of appends; its seconds are only there to end a hang.
    @Test func everyWriterIsAnsweredAndEveryFactIsSealedOnce() async throws {
        try await EmbeddedPostgres.withPrivateCluster("sealer") { db in
            try await sealEveryFactOnce(on: try await db.start())
        }
    }

    private func sealEveryFactOnce(on server: String) async throws {
        try await TestDatabase.withSchema("clisealer", on: server) { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let refused = try await cli.run(["bench", "sealer", "--writers", "2", "--appends-per-writer", "5"])
            #expect(
                refused.status != 0 && refused.stderr.contains("does not hold the candidate append path"),
                "\(refused.stderr)")
            let admin = try await PostgresConnection.connect(
                config.connectionString, settings: ["search_path": config.schema])
            for file in ["candidate.sql", "inbox.sql", "positions.sql"] {
                try await admin.execute(
                    try String(
                        contentsOf: TestDatabase.packageRoot.appendingPathComponent("tools/append-design/\(file)"),
                        encoding: .utf8))
            }
            for answer in ["position", "position-async", "commit"] {
                let run = try await cli.run([
                    "bench", "sealer", "--writers", "4", "--appends-per-writer", "25", "--seconds", "600", "--answer",
                    answer,
                ])
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stdout.hasPrefix("events=100 "), "\(run.stdout)")
                #expect(run.stdout.contains(answer == "commit" ? "positions=0" : "positions=100"), "\(run.stdout)")
            }
            let log = try await admin.query(
                """
                SELECT (SELECT count(*) FROM facts), count(*), count(DISTINCT event_id), min(position), max(position),
                       (SELECT count(*) FROM (SELECT stream_version - (row_number() OVER (PARTITION BY stream_id ORDER BY position) - 1) AS off
                                              FROM sealed_log) t WHERE off <> 0)
                FROM sealed_log
                """)
            #expect((0..<6).map { log.int64(0, $0) } == [300, 300, 300, 1, 300, 0])
            await admin.close()
        }
    }
}
