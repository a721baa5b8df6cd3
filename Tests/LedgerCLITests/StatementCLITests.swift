import Foundation
import LedgerCore
import LedgerNotificationTesting
import LedgerServer
import LedgerTesting
import Testing

// Six minutes, as the audit's suite: one test runs the report's browser check five times, and
// under a loaded machine's other work (a build on both cores) that took longer than two minutes.
// The limit is there to catch a hang, not to time the work.
@Suite("ledger import statement, revenue and the reconciliation report", .timeLimit(.minutes(6)))
struct StatementCLITests {
    static let examples = TestDatabase.packageRoot.appendingPathComponent("schema/examples/statements")
    static let samples: [(source: String, file: String)] = [
        ("wechat-tradebill", "wechat-tradebill-2026-03-02.csv"),
        ("wechat-refundbill", "wechat-refundbill-2026-03-02.csv"),
        ("wechat-tradebill", "wechat-tradebill-success-2026-03-03.csv"),
        ("wechat-tradebill", "wechat-tradebill-v2-2026-03-04.csv"),
        ("appstore-history", "appstore-history.json"), ("appstore-finance", "appstore-finance-2026-03.tsv"),
        ("appstore-finance", "appstore-finance-2026-03-euro.tsv"), ("appstore-finance", "appstore-finance-2026-04.tsv"),
        ("googleplay-earnings", "googleplay-earnings-2026-03.csv"),
        ("googleplay-earnings", "googleplay-earnings-2026-04.csv"), ("googleplay-voided", "googleplay-voided.json"),
    ]

    @Test(
        "every sample imports; a re-import stores nothing new; a malformed file is refused with its line and column and nothing written"
    )
    func importStatements() async throws {
        try await TestDatabase.withSchema("clistmt") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            var head: Int64 = 0
            for s in Self.samples {
                let r = try await cli.run([
                    "import", "statement", "--source", s.source, Self.examples.appendingPathComponent(s.file).path,
                ])
                #expect(r.status == 0, "\(s.file): \(r.stderr)")
                let out = try JSONValue.parse(r.stdout)
                // The statement, its lines, and for a history of signed transactions the record of their signatures.
                let signatures: Int64 = out["signatures"]?.isNull == false ? 1 : 0
                #expect(
                    out["alreadyStored"] == .int(0)
                        && (out["stored"]?.intValue ?? 0) == (out["lines"]?.intValue ?? -1) + 1 + signatures)
                #expect((signatures == 1) == (s.source == "appstore-history"))
                head += out["stored"]?.intValue ?? 0
            }
            let bill = Self.examples.appendingPathComponent("wechat-tradebill-2026-03-02.csv").path
            let again = try await cli.run(["import", "statement", "--source", "wechat-tradebill", bill])
            let againOut = try JSONValue.parse(again.stdout)
            #expect(again.status == 0 && againOut["stored"] == .int(0))

            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-stmt-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            // The same bytes under another file name are the same statement: nothing new, no conflict.
            let renamed = dir.appendingPathComponent("1900000109_20260302_ALL (1).csv").path
            try FileManager.default.copyItem(atPath: bill, toPath: renamed)
            let underAnotherName = try await cli.run(["import", "statement", "--source", "wechat-tradebill", renamed])
            #expect(underAnotherName.status == 0, "\(underAnotherName.stderr)")
            let renamedOut = try JSONValue.parse(underAnotherName.stdout)
            #expect(renamedOut["stored"] == .int(0) && renamedOut["alreadyStored"] == againOut["alreadyStored"])
            let bad = dir.appendingPathComponent("bad.csv").path
            let text = try String(contentsOfFile: bill, encoding: .utf8).replacingOccurrences(
                of: "`wx_20260302_0102", with: "`wx_20260302_0102x"
            )
            .replacingOccurrences(of: "`68.00,`0.00,`0,`0,`0.00", with: "`68.0O,`0.00,`0,`0,`0.00")
            try text.write(toFile: bad, atomically: true, encoding: .utf8)
            let refused = try await cli.run(["import", "statement", "--source", "wechat-tradebill", bad])
            #expect(refused.status == 65)
            #expect(
                refused.stderr.contains("line 3, column 13, (应结订单金额)")
                    && refused.stderr.contains("nothing was written"), "\(refused.stderr)")
            let read = try await cli.run(["read"])
            #expect(read.stdout.split(separator: "\n").count == Int(head), "nothing of the refused file was written")

            let revenue = try await cli.run(["revenue", "--by", "month", "--format", "json"])
            #expect(revenue.status == 0, "\(revenue.stderr)")
            let rerun = try await cli.run(["revenue", "--by", "month", "--format", "json"])
            #expect(rerun.stdout == revenue.stdout, "byte-identical on re-run")
            guard case .array(let totals)? = try JSONValue.parse(revenue.stdout)["totals"] else {
                Issue.record("no totals")
                return
            }
            let wechat = totals.first { $0["channel"] == .string("wechat") }
            // The bills' sales (128.00, 42.34 and 30.00), the refund both bills of 2 March list once (10.00)
            // and the v2 bill's (30.00); fees to five decimals summed exactly (0.708 + 0.25404 + 0.15 - 0.18 = 0.93204).
            #expect(wechat?["statements"]?["gross"] == .int(20034) && wechat?["statements"]?["refunded"] == .int(4000))
            #expect(
                wechat?["statements"]?["exact"]?["fees"] == .string("0.93204"), "\(wechat.map(\.canonicalText) ?? "")")
            #expect(
                Set(totals.compactMap { $0["currency"]?.stringValue }) == ["CNY", "JPY", "USD"],
                "never summed across currencies")
            let audit = try await cli.run(["audit", "--format", "json", "--kind", "unrecorded-sale"])
            #expect(audit.status == 0)
            let unrecorded = try JSONValue.parse(audit.stdout)["summary"]?["findings"]
            #expect(unrecorded == .int(14), "the log verified none of the statements' 14 sales with revenue")
        }
    }

    @Test(
        "an App Store history's signed transactions: recorded as not verified without a root; verified with one (the record names the root); a foreign chain refused, nothing written"
    )
    func signedHistory() async throws {
        try await TestDatabase.withSchema("clisigned") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-signed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let chain = try TestAppleChain(), other = try TestAppleChain(name: "Other")
            let rootFile = dir.appendingPathComponent("root.cer").path
            try Data(chain.rootDER).write(to: URL(fileURLWithPath: rootFile))
            let env = ["LEDGER_APPSTORE_ROOT_CERT": rootFile, "LEDGER_APPSTORE_BUNDLE_ID": TestAppleChain.bundleId]
            let history = dir.appendingPathComponent("history.json").path
            let signed = [
                try chain.signedTransaction(id: "2000000900000001"),
                try chain.signedTransaction(id: "2000000900000002", price: 1990),
            ]
            try TestAppleChain.historyPage(signed).write(toFile: history, atomically: true, encoding: .utf8)

            let unverified = try await cli.run([
                "import", "statement", "--source", "appstore-history", "--from", "2026-01-01T00:00:00Z",
                "--to", "2030-01-01T00:00:00Z", history,
            ])
            #expect(unverified.status == 0, "\(unverified.stderr)")
            #expect(
                unverified.stderr.contains("2 signed transactions imported without verifying their signatures"),
                "\(unverified.stderr)")
            let u = try JSONValue.parse(unverified.stdout)
            #expect(
                u["stored"] == .int(4) && u["signatures"]?["verified"] == .bool(false)
                    && u["signatures"]?["signed"] == .int(2))
            // The same file with the root configured: the verification is the one new fact.
            let verified = try await cli.run(
                [
                    "import", "statement", "--source", "appstore-history", "--from", "2026-01-01T00:00:00Z",
                    "--to", "2030-01-01T00:00:00Z", history,
                ], environment: env)
            #expect(verified.status == 0, "\(verified.stderr)")
            let v = try JSONValue.parse(verified.stdout)
            #expect(v["stored"] == .int(1) && v["alreadyStored"] == .int(3), "\(verified.stdout)")
            #expect(v["signatures"]?["root"] == .string(LedgerCore.SHA256.digest(chain.rootDER)))
            let audit = try await cli.run(["audit", "--format", "json"])
            let statements = try JSONValue.parse(audit.stdout)["reconciliation"]?["statements"]
            guard case .array(let list)? = statements else {
                Issue.record("no statements in \(audit.stdout.prefix(2000))")
                return
            }
            #expect(list.first?["signatures"]?["verified"] == .bool(true))
            let table = try await cli.run(["audit"])
            #expect(table.stdout.contains("2 verified (root sha256:"), "\(table.stdout)")

            // One transaction signed by a chain to another root: the file is refused, naming the entry.
            let forged = dir.appendingPathComponent("forged.json").path
            try TestAppleChain.historyPage([signed[0], try other.signedTransaction(id: "2000000900000003")]).write(
                toFile: forged, atomically: true, encoding: .utf8)
            let refused = try await cli.run(
                [
                    "import", "statement", "--source", "appstore-history", "--from", "2026-01-01T00:00:00Z",
                    "--to", "2030-01-01T00:00:00Z", forged,
                ], environment: env)
            #expect(
                refused.status == 65 && refused.stderr.contains("signedTransactions[1]")
                    && refused.stderr.contains("untrusted-chain")
                    && refused.stderr.contains("nothing was written"), "\(refused.stderr)")
            let read = try await cli.run(["read"])
            #expect(lines(read.stdout).count == 5, "nothing of the refused file was written")
        }
    }

    @Test(
        "ledger simulate --statements: the audit finds exactly the injected reconciliation faults; clean: nothing, and revenue ties"
    )
    func simulateStatements() async throws {
        try await TestDatabase.withSchema("clisimstmt") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-sim-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let truth = dir.appendingPathComponent("truth.json").path
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let sim = try await cli.run([
                "simulate", "--users", "150", "--days", "14", "--seed", "9", "--statements", dir.path, "--truth", truth,
                "--faults", "unrecorded-sale=0.02,unrecorded-refund=0.02,unconfirmed-payment=0.02,amount-mismatch=0.02",
            ])
            #expect(sim.status == 0, "\(sim.stderr)")
            let audit = try await cli.run(["audit", "--expect", truth])
            #expect(audit.status == 0, "\(audit.stderr)")
            #expect(audit.stderr.contains("0 differences"))
            let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(files.contains("appstore-history.json") && files.contains { $0.hasPrefix("wechat-tradebill-") })
        }
        try await TestDatabase.withSchema("clisimclean") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-sim-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let truth = dir.appendingPathComponent("truth.json").path
            #expect(
                try await cli.run([
                    "simulate", "--users", "100", "--days", "10", "--seed", "3", "--statements", dir.path, "--truth",
                    truth,
                ]).status == 0)
            let audit = try await cli.run(["audit", "--format", "json"])
            let findings = try JSONValue.parse(audit.stdout)["summary"]?["findings"]
            #expect(findings == .int(0))
            let revenue = try await cli.run(["revenue", "--format", "csv"])
            #expect(revenue.status == 0)
            let rows = revenue.stdout.split(separator: "\r\n").dropFirst()
            #expect(
                !rows.isEmpty && rows.allSatisfy { $0.hasSuffix(",yes") },
                "every row ties: \(revenue.stdout.prefix(400))")
            // Each amount in minor units and in the currency's decimals: 4,5 are gross_minor_units, gross.
            #expect(revenue.stdout.hasPrefix("period,channel,currency,sales,gross_minor_units,gross,refunds,"))
            for row in rows {
                let cells = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                // The same digits (JPY 120 and 120; USD 199.5 minor units and 1.995, exactly), the point
                // where the currency puts it: CNY and USD two decimals, JPY none.
                let currency = cells[2], minor = cells[4], major = cells[5]
                let digits = { (s: String) in Int64(s.replacingOccurrences(of: ".", with: "")) }
                #expect(digits(minor) == digits(major), "\(row)")
                #expect(
                    currency == "JPY"
                        ? !major.contains(".") : major.split(separator: ".").last.map { $0.count >= 2 } == true,
                    "\(row)")
            }
        }
    }

    @Test(
        .enabled(
            if: Chromium.path != nil || Chromium.required,
            "chromium is not installed: the HTML report is not checked in a browser"))
    func theReconciliationSectionRendersAndMatchesTheJSON() async throws {
        guard Chromium.path != nil else {
            Issue.record("chromium is required here but not installed")
            return
        }
        try await TestDatabase.withSchema("clirechtml") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-rec-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let truth = dir.appendingPathComponent("truth.json").path
            #expect(
                try await cli.run([
                    "simulate", "--users", "80", "--days", "10", "--seed", "4", "--statements", dir.path, "--truth",
                    truth,
                    "--faults", "unrecorded-refund=0.05,amount-mismatch=0.05",
                ]).status == 0)
            let html = dir.appendingPathComponent("audit.html").path,
                json = dir.appendingPathComponent("audit.json").path
            #expect(try await cli.run(["audit", "--format", "html", "--output", html]).status == 0)
            #expect(try await cli.run(["audit", "--format", "json", "--output", json]).status == 0)
            let page = try String(contentsOfFile: html, encoding: .utf8)
            #expect(page.contains("id=\"reconciliation\"") && page.contains("revenue-chart"))
            let script = TestDatabase.packageRoot.appendingPathComponent("tools/check-report.sh").path
            let check = try await ChildProcess.run("/bin/bash", [script, html, json])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
            let tampered: [(String, String)] = [
                (
                    "a revenue bar",
                    page.replacingFirst(#"height=""#, with: #"height="9"#, after: #"class="bar money revenue-bar""#)
                ),
                (
                    "a statement's line count",
                    page.replacingFirst(
                        #"<td class="num">"#, with: #"<td class="num">7"#, after: #"<tr class="statement""#)
                ),
                (
                    "a WeChat Pay bill's period in UTC, not its Beijing day",
                    page.replacingFirst("UTC+08:00</td>", with: "UTC</td>")
                ),
                (
                    "a revenue row's difference",
                    page.replacingFirst(#"<td class="difference">"#, with: #"<td class="difference">net +1.00 CNY, "#)
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
}
