import Foundation
import LedgerCore
import LedgerTesting
import Testing

/// `audit --expect`: a right ground truth passes; a wrong one (missing, duplicated, at the wrong
/// position, with the wrong amount, or with an extra finding) fails and says what differs.
@Suite("ledger audit --expect", .timeLimit(.minutes(2)))
struct ExpectCLITests {
    @Test func aWrongGroundTruthIsReported() async throws {
        try await TestDatabase.withSchema("cliexpect") { config in
            let cli = CLI(url: config.connectionString, schema: config.schema)
            let scenarios = try await CLI(url: "", schema: "").run(["sample"], withConnection: false).stdout
            #expect(try await cli.run(["append"], stdin: sample + scenarios).status == 0)
            let report = try JSONValue.parse(try await cli.run(["audit", "--format", "json"]).stdout)
            guard case .array(let findings)? = report["findings"], findings.count >= 2 else {
                Issue.record("the sample log should have findings")
                return
            }
            let truth = findings.map { f in
                JSONValue.makeObject([
                    ("key", f["key"]!),
                    (
                        "position",
                        f["positions"].flatMap { if case .array(let p) = $0 { return p.last } else { return nil } }
                            ?? .null
                    ),
                    ("amountAtRisk", f["amountAtRisk"] ?? .null),
                ])
            }
            func run(_ items: [JSONValue]) async throws -> CLI.Output {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "truth-\(UUID().uuidString).json"
                ).path
                defer { try? FileManager.default.removeItem(atPath: file) }
                try JSONValue.makeObject([("findings", .array(items))]).compactText.write(
                    toFile: file, atomically: true, encoding: .utf8)
                return try await cli.run(["audit", "--expect", file])
            }
            let right = try await run(truth)
            #expect(right.status == 0, "\(right.stderr)")
            #expect(right.stderr.contains("0 differences"))

            func amountPlusOne(_ v: JSONValue) -> JSONValue {
                guard let a = v["amountAtRisk"], let n = a["amount"]?.intValue, let c = a["currency"] else { return v }
                return .makeObject([
                    ("key", v["key"]!), ("position", v["position"]!),
                    ("amountAtRisk", .makeObject([("amount", .int(n + 1)), ("currency", c)])),
                ])
            }
            let withAmount = try #require(truth.firstIndex { $0["amountAtRisk"] != .null && $0["amountAtRisk"] != nil })
            let cases: [(String, [JSONValue])] = [
                ("unexpected:", Array(truth.dropFirst())),  // a finding the truth does not list
                ("missed:", truth + [truth[0]]),  // expected twice, found once
                ("missed:", [.makeObject([("key", .string("orphan-payment|appstore|no-such-tx||"))])] + truth),
                (
                    "position:",
                    [.makeObject([("key", truth[0]["key"]!), ("position", .int(999_999))])] + Array(truth.dropFirst())
                ),
                (
                    "amount:",
                    truth.enumerated().map { $0.offset == withAmount ? amountPlusOne($0.element) : $0.element }
                ),
            ]
            for (word, items) in cases {
                let r = try await run(items)
                #expect(r.status == 1, "\(word) \(r.stderr)")
                #expect(r.stderr.contains(word), "\(word) \(r.stderr)")
            }
        }
    }
}
