import Foundation
import LedgerCore
import LedgerPostgres
import LedgerLog
import LedgerProjection
import LedgerServer
import LedgerTesting
import Testing

/// Appends the sample file and the twelve scenarios through the CLI.
func appendSampleAndScenarios(_ cli: CLI) async throws {
    let a = try await cli.run(["append"], stdin: sample)
    #expect(a.status == 0, "\(a.stderr)")
    let scenarios = try await cli.run(["sample"], withConnection: false)
    #expect(scenarios.status == 0)
    let b = try await cli.run(["append"], stdin: scenarios.stdout)
    #expect(b.status == 0, "\(b.stderr)")
}

@Suite("ledger project, rebuild and show", .timeLimit(.minutes(2)))
struct ProjectionCLITests {
    @Test func projectRebuildShow() async throws {
        try await TestDatabase.withSchema("clishow") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            try await appendSampleAndScenarios(cli)
            let p = try await cli.run(["project"])
            #expect(p.status == 0, "\(p.stderr)")
            #expect(p.stderr.contains("projector applied"))

            let user = try await cli.run(["show", "user", "u08-ivan", "--json"])
            #expect(user.status == 0, "\(user.stderr)")
            let json = try JSONValue.parse(user.stdout)
            #expect(json["user"]?["user_id"] == .string("u08-ivan"))
            guard case .array(let periods)? = json["entitlementPeriods"], case .array(let timeline)? = json["timeline"]
            else {
                Issue.record("no periods or timeline in \(user.stdout.prefix(300))")
                return
            }
            #expect(periods.first?["total_days"] == .int(150))
            #expect(timeline.count > 5)
            #expect(timeline.first?["position"]?.intValue != nil)

            let table = try await cli.run(["show", "user", "u_1001"])
            #expect(table.status == 0)
            #expect(table.stdout.contains("coin_balance       70"))
            #expect(table.stdout.contains("timeline (6 facts)"))

            let verify = try await cli.run(["rebuild", "all", "--verify"])
            #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            #expect(verify.stdout.contains("verify: the rebuilt read models equal the live ones"))
            #expect(!verify.stdout.contains("not projected yet"), "\(verify.stdout)")
            // A fact the projector has not seen: the verification says it stopped short of it.
            let note =
                #"{"stream":"ops:verify","type":"OpsNote","payload":{"n":1},"occurredAt":"2026-05-01T00:00:00Z"}"#
            #expect(try await cli.run(["append", "--allow-unknown-types"], stdin: note).status == 0)
            let behind = try await cli.run(["rebuild", "all", "--verify"])
            #expect(behind.stdout.contains("1 event is not projected yet"), "\(behind.stdout)")
            #expect(try await cli.run(["project"]).status == 0)
            let rebuild = try await cli.run(["rebuild", "orders", "--json"])
            #expect(rebuild.status == 0)
            #expect(try JSONValue.parse(rebuild.stdout)["swapped"] == .bool(true))

            let sub = try await cli.run(["show", "subscription", "appstore:20000800001", "--json"])
            #expect(sub.status == 0, "\(sub.stderr)")
            guard case .array(let subTransactions)? = try JSONValue.parse(sub.stdout)["transactions"] else {
                Issue.record("no transactions in \(sub.stdout.prefix(300))")
                return
            }
            #expect(subTransactions.map { $0["transaction_id"]?.stringValue } == ["20000800001", "20000800003"])

            #expect(try await cli.run(["show", "order", "no-such-order"]).status == 1)
            #expect(try await cli.run(["rebuild", "nonsense"]).status == 64)
            #expect(try await cli.run(["rebuild", "--as-of", "yesterday"]).status == 64)
            // Read models at different positions are no usage error: project them, then verify.
            #expect(try await cli.run(["rebuild", "orders", "--to-position", "1"]).status == 0)
            let apart = try await cli.run(["rebuild", "--verify"])
            #expect(apart.status == 75 && apart.stderr.contains("run `ledger project`"), "\(apart.stderr)")
        }
    }

    @Test func aFactWithABadFieldIsRefusedByTheCLI() async throws {
        try await TestDatabase.withSchema("clibad") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let line =
                #"{"stream":"order:x","type":"OrderCreated","occurredAt":"2026-03-31T08:15:00Z","payload":{"orderId":"x","userId":"u","channel":"appstore","productId":"p","amount":600,"currency":"XYZ"}}"#
            let r = try await cli.run(["append"], stdin: line + "\n")
            #expect(r.status == 65)
            #expect(r.stderr.contains("field payload.currency"))
            #expect(r.stderr.contains("XYZ"))
            #expect(r.stderr.contains("nothing was written"))
            #expect(try await TestDatabase.storedEventRows(config) == 0)
        }
    }
}

@Suite("ledger audit", .timeLimit(.minutes(6)))
struct AuditCLITests {
    @Test func formatsAreByteIdenticalOnReRunAndAgree() async throws {
        try await TestDatabase.withSchema("cliaudit") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            try await appendSampleAndScenarios(cli)
            for format in ["table", "json", "csv", "html"] {
                let a = try await cli.run(["audit", "--format", format])
                let b = try await cli.run(["audit", "--format", format])
                #expect(a.status == 0, "\(a.stderr)")
                #expect(a.stdout == b.stdout, "\(format) differs between two runs")
                #expect(!a.stdout.isEmpty)
            }
            let json = try JSONValue.parse(try await cli.run(["audit", "--format", "json"]).stdout)
            let count = json["summary"]?["findings"]?.intValue ?? -1
            #expect(count > 0)
            let csv = try await cli.run(["audit", "--format", "csv"])
            let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(rows.count == Int(count) + 1)
            // Money beside its minor units in the currency's own decimals, as a spreadsheet shows it.
            #expect(rows[0].contains(",amount_minor_units,amount,currency,"))
            #expect(
                rows.dropFirst().contains {
                    $0.range(of: #",[0-9]+,[0-9]+\.[0-9]{2},CNY,"#, options: .regularExpression) != nil
                }, "\(rows.prefix(5))")
            let bomFile = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-bom-\(UUID().uuidString).csv")
            defer { try? FileManager.default.removeItem(at: bomFile) }
            #expect(try await cli.run(["audit", "--format", "csv", "--bom", "-o", bomFile.path]).status == 0)
            let bytes = try Data(contentsOf: bomFile)
            #expect(Array(bytes.prefix(3)) == [0xEF, 0xBB, 0xBF] && bytes.dropFirst(3) == Data(csv.stdout.utf8))

            // Filters.
            let receipt = try JSONValue.parse(
                try await cli.run(["audit", "--format", "json", "--kind", "receipt-reused"]).stdout)
            guard case .array(let items)? = receipt["findings"] else {
                Issue.record("no findings array")
                return
            }
            #expect(!items.isEmpty && items.allSatisfy { $0["kind"] == .string("receipt-reused") })
            let henry = try JSONValue.parse(
                try await cli.run(["audit", "--format", "json", "--user", "u07-henry"]).stdout)
            guard case .array(let hs)? = henry["findings"] else {
                Issue.record("no findings array")
                return
            }
            #expect(hs.map { $0["kind"]?.stringValue } == ["negative-balance"])

            // --fail-on: a nightly job's exit code.
            #expect(try await cli.run(["audit", "--fail-on", "error"]).status == 1)
            #expect(try await cli.run(["audit", "--fail-on", "critical", "--user", "u07-henry"]).status == 0)
            #expect(try await cli.run(["audit", "--fail-on", "critical"]).status == 1)
        }
    }

    @Test func outputToDevNullLeavesItADevice() async throws {
        try await TestDatabase.withSchema("clidevnull") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            #expect(try await cli.run(["audit", "--format", "json", "--output", "/dev/null"]).status == 0)
            let type = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
            #expect(type == .typeCharacterSpecial, "--output replaced /dev/null instead of writing to it")
        }
    }

    @Test func badOptionsAreRefused() async throws {
        try await TestDatabase.withSchema("cliauditbad") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let unknownKind = try await cli.run(["audit", "--kind", "bogus"])
            #expect(unknownKind.status == 64)
            #expect(unknownKind.stderr.contains("bogus"))
            #expect(try await cli.run(["audit", "--as-of", "not-a-time"]).status == 64)
            let future = try await cli.run(["audit", "--as-of", "2999-01-01T00:00:00Z"])
            #expect(future.status == 64)
            #expect(future.stderr.contains("future"))
            #expect(try await cli.run(["audit", "--diff", "/nonexistent/old.json"]).status == 64)
            let notAReport = FileManager.default.temporaryDirectory.appendingPathComponent(
                "not-a-report-\(UUID().uuidString).json")
            try Data("{\"hello\": 1}".utf8).write(to: notAReport)
            defer { try? FileManager.default.removeItem(at: notAReport) }
            let bad = try await cli.run(["audit", "--diff", notAReport.path])
            #expect(bad.status == 65)
            #expect(bad.stderr.contains("findings"))
            #expect(try await cli.run(["audit", "--missing-grant-window", "ten"]).status == 64)
            #expect(try await cli.run(["audit", "--stale-order-window", "999999999999999999d"]).status == 64)
            #expect(try await cli.run(["rebuild", "--verify", "--to-position", "5"]).status == 64)
            // A position the log has not reached is refused, not replaced by the head (75: try again later).
            for command in [["audit"], ["rebuild", "orders"]] {
                let beyond = try await cli.run(command + ["--to-position", "999999"])
                #expect(beyond.status == 75, "\(command): \(beyond.stderr)")
                #expect(
                    beyond.stderr.contains("the log ends at position")
                        && beyond.stderr.contains("position 999999 is not in it yet"))
            }
        }
    }

    @Test func asOfAPositionEqualsTheTruncatedLogAndDiffShowsWhatAppeared() async throws {
        let scenarios = try await CLI(url: "", schema: "").run(["sample"], withConnection: false).stdout
        let all = lines(sample) + lines(scenarios)
        let cut = 60
        try await TestDatabase.withSchema("asoffull") { full in
            try await TestDatabase.withSchema("asofcut") { truncated in
                let a = CLI(url: full.connectionString, schema: full.schema)
                let b = CLI(url: truncated.connectionString, schema: truncated.schema)
                #expect(try await a.run(["append"], stdin: all.joined(separator: "\n") + "\n").status == 0)
                #expect(try await b.run(["append"], stdin: all.prefix(cut).joined(separator: "\n") + "\n").status == 0)
                // Lines that repeat a fact (the scenarios share their catalogue) are stored once: the
                // truncated log ends at its own head, the same event as the full log's at that position.
                let short = try await b.run(["audit", "--format", "json"])
                let head = try JSONValue.parse(short.stdout)["scope"]?["position"]?.intValue ?? -1
                #expect(head > 40)
                let past = try await a.run(["audit", "--format", "json", "--to-position", String(head)])
                #expect(past.status == 0 && short.status == 0)
                // The two logs were recorded at different times, so their head hashes differ; the rest is equal.
                let unhashed = { (s: String) in
                    s.replacingOccurrences(of: #""headHash": "[0-9a-f]{64}""#, with: "", options: .regularExpression)
                }
                #expect(past.stdout.contains(#""headHash": ""#))
                #expect(
                    unhashed(past.stdout) == unhashed(short.stdout),
                    "the report as of position \(head) differs from the report of the log truncated there")

                let old = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "audit-\(UUID().uuidString).json")
                try Data(past.stdout.utf8).write(to: old)
                defer { try? FileManager.default.removeItem(at: old) }
                let diff = try JSONValue.parse(
                    try await a.run(["audit", "--format", "json", "--diff", old.path]).stdout)
                guard case .array(let appeared)? = diff["diff"]?["appeared"] else {
                    Issue.record("no diff")
                    return
                }
                #expect(!appeared.isEmpty)
                #expect(diff["diff"]?["previousPosition"] == .int(head))
                let same = try JSONValue.parse(
                    try await b.run(["audit", "--format", "json", "--diff", old.path]).stdout)
                #expect(same["diff"]?["appeared"] == .array([]))
                #expect(same["diff"]?["disappeared"] == .array([]))
                #expect(same["diff"]?["changed"] == .array([]))
            }
        }
    }

    @Test("sandbox purchases and grants by policy are shown in sections of their own, in every format")
    func sectionsSetApart() async throws {
        try await TestDatabase.withSchema("cliapart") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            try await appendSampleAndScenarios(cli)
            let json = try JSONValue.parse(try await cli.run(["audit", "--format", "json"]).stdout)
            guard case .array(let sandbox)? = json["sandbox"], case .array(let grants)? = json["policyGrants"] else {
                Issue.record("no sandbox or policyGrants section")
                return
            }
            #expect(sandbox.map { $0["transactionId"] } == [.string("20002200001")])
            #expect(sandbox.first?["environment"] == .string("Sandbox"))
            #expect(grants.map { $0["grantId"] } == [.string("g17-goodwill")])
            #expect(grants.first?["authorizedBy"] == .string("support:alice"))
            let table = try await cli.run(["audit"]).stdout
            #expect(table.contains("sandbox purchases (no revenue, no finding)") && table.contains("grants by policy"))
            let html = try await cli.run(["audit", "--format", "html"]).stdout
            #expect(
                html.contains("id=\"sandbox\"") && html.contains("id=\"policy-grants\"")
                    && html.contains("g17-goodwill"))
        }
    }

    @Test func aBrokenChainIsReportedAndTheRestIsStillAudited() async throws {
        try await TestDatabase.withSchema("clichain") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            try await appendSampleAndScenarios(cli)
            let before = try JSONValue.parse(try await cli.run(["audit", "--format", "json"]).stdout)
            let admin = try await TestDatabase.admin(config)
            try await admin.execute("SET session_replication_role = replica")
            try await admin.execute(
                "UPDATE \(quoteIdentifier(config.schema)).events SET payload = jsonb_set(payload, '{orderId}', '\"ord_tampered\"') WHERE position = 6"
            )
            await admin.close()
            let r = try await cli.run(["audit", "--format", "json", "--fail-on", "critical"])
            #expect(r.status == 1)
            let after = try JSONValue.parse(r.stdout)
            guard case .array(let findings)? = after["findings"], case .array(let old)? = before["findings"] else {
                Issue.record("no findings")
                return
            }
            let chain = findings.filter { $0["kind"] == .string("chain-broken") }
            #expect(chain.count == 1)
            #expect(chain.first?["positions"] == .array([.int(6)]))
            #expect(findings.count == old.count + 1)
        }
    }

    @Test(
        "simulated history: the audit equals the ground truth",
        arguments: [
            (seed: UInt64(11), faults: "all=0.03,chain-broken=1"),
            (seed: UInt64(12), faults: "double-grant=0.05,missing-grant=0.05,receipt-reused=0.05"),
            (seed: UInt64(13), faults: "none"),
        ])
    func simulatedGroundTruth(_ run: (seed: UInt64, faults: String)) async throws {
        try await TestDatabase.withSchema("sim\(run.seed)") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let truth = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).json")
                .path
            defer { try? FileManager.default.removeItem(atPath: truth) }
            let sim = try await cli.run([
                "simulate", "--users", "150", "--days", "20", "--seed", String(run.seed), "--faults", run.faults,
                "--truth", truth,
            ])
            #expect(sim.status == 0, "\(sim.stderr)")
            let audit = try await cli.run(["audit", "--format", "json", "--expect", truth])
            #expect(audit.status == 0, "\(audit.stderr)")
            #expect(audit.stderr.contains(" 0 differences"), "\(audit.stderr)")
            let count = try JSONValue.parse(audit.stdout)["summary"]?["findings"]?.intValue ?? -1
            if run.faults == "none" { #expect(count == 0) } else { #expect(count > 5) }
            // Simulating again appends nothing: every fact is recognized as already stored.
            let again = try await cli.run([
                "simulate", "--users", "150", "--days", "20", "--seed", String(run.seed), "--faults", run.faults,
                "--truth", truth,
            ])
            #expect(again.stderr.contains("appended 0 facts"), "\(again.stderr)")
        }
    }

    @Test func simulateRefusesBadFaults() async throws {
        let r = try await CLI(url: "", schema: "").run(
            ["simulate", "--faults", "double-grnat=0.1"], withConnection: false)
        #expect(r.status == 64)
        #expect(r.stderr.contains("double-grnat"))
    }

    @Test(
        .enabled(
            if: Chromium.path != nil || Chromium.required,
            "chromium is not installed: the HTML report is not checked in a browser (tools/ensure-deps.sh chromium installs it; CI=true or LEDGER_REQUIRE_CHROMIUM=1 make this a failure)"
        ))
    func theHTMLReportRendersInChromiumAndMatchesTheJSON() async throws {
        guard Chromium.path != nil else {
            Issue.record(
                "chromium is required here (CI=true or LEDGER_REQUIRE_CHROMIUM=1) but not installed; set LEDGER_SKIP_CHROMIUM=1 to opt out explicitly"
            )
            return
        }
        try await TestDatabase.withSchema("clihtml") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            try await appendSampleAndScenarios(cli)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-html-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let html = dir.appendingPathComponent("audit.html").path,
                json = dir.appendingPathComponent("audit.json").path
            #expect(try await cli.run(["audit", "--format", "html", "--output", html]).status == 0)
            #expect(try await cli.run(["audit", "--format", "json", "--output", json]).status == 0)
            let script = TestDatabase.packageRoot.appendingPathComponent("tools/check-report.sh").path
            let check = try await ChildProcess.run(
                "/bin/bash", [script, html, json, dir.appendingPathComponent("audit.png").path])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
            #expect(check.stdout.contains("agree") && check.stdout.contains("screenshots"))

            // The check itself fails when the page shows something else than the JSON, even with
            // every data-* attribute left as it was.
            let page = try String(contentsOfFile: html, encoding: .utf8)
            let report = try JSONValue.parse(try String(contentsOfFile: json, encoding: .utf8))
            guard case .array(let findings)? = report["findings"], let first = findings.first,
                let detail = first["detail"]?.stringValue, let total = report["summary"]?["findings"]?.intValue
            else {
                Issue.record("the sample report has no findings")
                return
            }
            let escapedDetail = detail.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
                of: "<", with: "&lt;"
            )
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
            let tampered: [(String, String)] = [
                (
                    "a finding's detail",
                    page.replacingFirst(
                        "<td class=\"detail\">\(escapedDetail)</td>", with: "<td class=\"detail\">nothing to see</td>")
                ),
                (
                    "the visible total",
                    page.replacingFirst(
                        "data-value=\"\(total)\">\(total)</div>", with: "data-value=\"\(total)\">\(total + 1)</div>")
                ),
                (
                    "a finding's amount",
                    page.replacingFirst(
                        #"<td class="num money">"#, with: #"<td class="num money">1"#, after: #"<tr class="finding""#)
                ),
                ("the findings' order", Self.swappingFirstTwoFindings(page)),
                (
                    "a day's place on the time axis",
                    page.replacingFirst(
                        #"<polyline class="payments" points=""#, with: #"<polyline class="payments" points="60,0 "#)
                ),
                (
                    "a clipped evidence table",
                    page.replacingFirst("td{overflow-wrap:anywhere}", with: "td{white-space:nowrap}")
                ),
                (
                    "an amount that wraps",
                    page.replacingFirst(
                        "td.num,td.period{white-space:nowrap}", with: "td.num{width:1px;white-space:normal}")
                ),
                (
                    "a chart value",
                    page.replacingFirst(#"<text class="value""#, with: #"<text class="value" data-x="1""#)
                        .replacingFirst(
                            #"</text><text class="label""#, with: #"0</text><text class="label""#,
                            after: #"<text class="value""#)
                ),
                (
                    "a point of the daily chart",
                    page.replacingFirst(#"class="payments" points="48,"#, with: #"class="payments" points="48,1"#)
                ),
                ("a blank page", page.replacingFirst("<main>", with: "<main style=\"visibility:hidden\">")),
                (
                    "a sandbox purchase's transaction",
                    page.replacingFirst(
                        #"<td class="mono">"#, with: #"<td class="mono">9"#, after: #"<tr class="sandbox""#)
                ),
                (
                    "a grant by policy's user",
                    page.replacingFirst(
                        #"<td class="mono">"#, with: #"<td class="mono">x"#, after: #"<tr class="policy-grant""#)
                ),
            ]
            for (what, text) in tampered {
                #expect(text != page, "the tampering of \(what) changed nothing: fix the test")
                let path = dir.appendingPathComponent("tampered.html").path
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                let r = try await ChildProcess.run("/bin/bash", [script, path, json])
                #expect(r.status == 1, "check-report.sh did not notice \(what): \(r.stdout)\(r.stderr)")
            }
        }
    }

    /// The page with its first two findings' rows in each other's place.
    static func swappingFirstTwoFindings(_ page: String) -> String {
        let rows = page.components(separatedBy: "\n")
        let found = rows.indices.filter { rows[$0].hasPrefix("<tr class=\"finding\"") }
        guard found.count >= 2, rows[found[0]] != rows[found[1]] else { return page }
        var swapped = rows
        swapped.swapAt(found[0], found[1])
        return swapped.joined(separator: "\n")
    }
}

/// Debian's chromium, for the HTML report check: required in CI (CI=true) and when
/// LEDGER_REQUIRE_CHROMIUM=1, unless LEDGER_SKIP_CHROMIUM=1 opts out; otherwise a visible skip.
enum Chromium {
    static let path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static var required: Bool {
        let env = ProcessInfo.processInfo.environment
        if env["LEDGER_SKIP_CHROMIUM"] == "1" { return false }
        return env["CI"] == "true" || env["LEDGER_REQUIRE_CHROMIUM"] == "1"
    }
}

extension String {
    /// The first occurrence of `target` (after the first `after`, when given) replaced.
    func replacingFirst(_ target: String, with replacement: String, after: String? = nil) -> String {
        var from = startIndex
        if let after, let a = range(of: after) { from = a.upperBound }
        guard let r = range(of: target, range: from..<endIndex) else { return self }
        return replacingCharacters(in: r, with: replacement)
    }
}
