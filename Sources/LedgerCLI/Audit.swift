import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerReport
import LedgerLog
import LedgerProjection

extension FindingKind: ExpressibleByArgument {}
extension Severity: ExpressibleByArgument {}

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract:
            "Replay the log and report every double grant, missing grant, orphan payment, unrevoked refund... with evidence.",
        discussion: paragraphs(
            """
            Streams the log (bounded memory) as of the head, --to-position or --as-of, checks the hash chain on the
            way (a broken chain is reported as chain-broken and the rest is still audited), and reports the findings
            of docs/domain.md: \(FindingKind.allCases.map(\.rawValue).joined(separator: ", ")).
            Windows are measured in log time. The same log and options give a byte-identical report.
            Exit 1 when --fail-on is given and a finding at or above that severity exists (for a nightly job).
            """))

    typealias Format = ReportFormat

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var replay: ReplayOptions

    @OptionGroup var foldMemory: FoldMemoryOptions

    @Option(help: "Keep findings with evidence recorded at or after this time (the whole history is still replayed).")
    var from: String?

    @Option(help: "Keep findings about this user.")
    var user: String?

    @Option(name: .customLong("kind"), help: "Keep findings of this kind (repeatable).")
    var kinds: [FindingKind] = []

    @Option(help: "table, json, csv or html.")
    var format: Format = .table

    @Flag(help: "With --format csv: begin with a UTF-8 byte order mark, for spreadsheets that otherwise misread UTF-8.")
    var bom = false

    @Option(name: [.short, .customLong("output")], help: "Write the report to this file instead of stdout.")
    var output: String?

    @Option(
        name: .customLong("fail-on"),
        help: "Exit 1 when a finding at or above this severity exists: info, warning, error, critical.")
    var failOn: Severity?

    @Option(help: "Compare with an earlier JSON report: what appeared, disappeared or changed.")
    var diff: String?

    @Option(
        help: "Compare the findings with a ground truth written by `ledger simulate --truth`; exit 1 on any difference."
    )
    var expect: String?

    @Option(
        name: .customLong("missing-grant-window"),
        help: "Grace before a verified payment without a grant is a finding (e.g. 10m, 1h, 600s).")
    var missingGrantWindow: String = "10m"

    @Option(name: .customLong("refund-window"), help: "Grace before a refund without a revocation is a finding.")
    var refundWindow: String = "10m"

    @Option(
        name: .customLong("stale-order-window"), help: "Age after which a launched, unpaid, unclosed order is stale.")
    var staleOrderWindow: String = "24h"

    @Option(
        name: .customLong("statement-window"),
        help:
            "How late a store statement may list a sale or refund the log lacks before it is a finding (longer than WeChat Pay's 24h 4m of notification retries)."
    )
    var statementWindow: String = "25h"

    @Option(
        name: .customLong("statement-clock-slack"),
        help:
            "Clock slack at a statement's edges: a payment is unconfirmed only when a statement's period covers this much either side of it."
    )
    var statementClockSlack: String = "5m"

    static func duration(_ text: String, _ option: String) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let mult = units[unit], let n = Int64(text.dropLast()), n >= 0 else {
            throw ValidationError("\(option) '\(text)' is not a duration such as 600s, 10m, 24h or 7d")
        }
        let (seconds, overflow) = n.multipliedReportingOverflow(by: mult)
        guard !overflow, seconds <= 100 * 366 * 86_400 else {
            throw ValidationError("\(option) '\(text)' is longer than 100 years")
        }
        return .seconds(seconds)
    }

    func validate() throws {
        if let asOf = replay.asOf, let t = Timestamp(asOf) {
            let now = Timestamp(microsecondsSince1970: Int64(Date().timeIntervalSince1970 * 1_000_000))
            if t > now {
                throw ValidationError(
                    "--as-of \(asOf) is in the future: the log can only be replayed as of a moment that has passed")
            }
        }
        if let from, Timestamp(from) == nil { throw ValidationError("--from '\(from)' is not an RFC 3339 time") }
        _ = try Self.duration(missingGrantWindow, "--missing-grant-window")
        _ = try Self.duration(refundWindow, "--refund-window")
        _ = try Self.duration(staleOrderWindow, "--stale-order-window")
        _ = try Self.duration(statementWindow, "--statement-window")
        _ = try Self.duration(statementClockSlack, "--statement-clock-slack")
        if let diff, !FileManager.default.isReadableFile(atPath: diff) {
            throw ValidationError("--diff: cannot read '\(diff)'")
        }
        if let expect, !FileManager.default.isReadableFile(atPath: expect) {
            throw ValidationError("--expect: cannot read '\(expect)'")
        }
    }

    func run() async throws {
        var failing = false
        try await runReportingErrors {
            var previous: String?
            if let diff {
                guard let data = FileManager.default.contents(atPath: diff),
                    let text = String(data: data, encoding: .utf8)
                else {
                    throw InputProblem("--diff: cannot read '\(diff)' as UTF-8 text")
                }
                previous = text
            }
            let options = AuditOptions(
                missingGrantWindow: try Self.duration(missingGrantWindow, ""),
                refundWindow: try Self.duration(refundWindow, ""),
                staleOrderWindow: try Self.duration(staleOrderWindow, ""),
                statementWindow: try Self.duration(statementWindow, ""),
                statementClockSlack: try Self.duration(statementClockSlack, ""))
            let store = try await EventStore.open(try await connection.configuration(as: .auditor))
            let report: AuditReport
            do {
                let through = try await replay.through(store)
                let bar = ProgressBar("audit")
                let run = try await LogReplay(store).audit(
                    through: through, options: options, memory: try foldMemory.memory, progress: bar.update)
                bar.finish()
                if let spill = run.spill { Diagnostics.say("audit: \(spill.description)") }
                var findings = run.findings
                if let from, let t = Timestamp(from) {
                    let first =
                        try await LogReplay(store).position(asOf: Timestamp(microsecondsSince1970: t.microseconds - 1))
                        + 1
                    findings = findings.filter { ($0.positions.last ?? 0) >= first }
                }
                if let user { findings = findings.filter { $0.userId == user } }
                if !kinds.isEmpty { findings = findings.filter { kinds.contains($0.kind) } }
                let scope = AuditReport.Scope(
                    position: run.position, headHash: run.headHash.hexString, logTime: run.logTime, events: run.events,
                    asOf: replay.asOf, from: from,
                    user: user, kinds: kinds.sorted(), options: options)
                var r = AuditReport(
                    scope: scope, findings: findings,
                    daily: run.daily.map {
                        .init(
                            day: $0.day, payments: $0.payments, grants: $0.grants, refunds: $0.refunds,
                            revocations: $0.revocations)
                    },
                    verifiedByChannel: run.verifiedByChannel,
                    sandbox: run.sandbox.filter { user == nil || $0.userId == user },
                    policyGrants: run.policyGrants.filter { user == nil || $0.grant.userId == user })
                r.statements = run.statements
                r.revenue = run.revenue
                if user == nil { r.subscriptionStates = run.subscriptionStates }
                if let previous {
                    do throws(ReportDiff.ReadError) {
                        r.diff = try ReportDiff.compare(previous: previous, with: r)
                    } catch {
                        throw InputProblem("--diff \(diff!): \(error.description)")
                    }
                }
                report = r
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            try emit(report, as: format, to: output, what: "report", bom: bom)
            let summary = report.byKind.map { "\($0.kind.rawValue) \($0.count)" }.joined(separator: ", ")
            Diagnostics.say(
                "ledger: \(report.findings.count) findings as of position \(report.scope.position)"
                    + (summary.isEmpty ? "" : " (\(summary))"))
            if let expect {
                guard let data = FileManager.default.contents(atPath: expect),
                    let truth = try? JSONValue.parse(String(decoding: data, as: UTF8.self)),
                    case .array(let items)? = truth["findings"]
                else {
                    throw InputProblem(
                        "--expect \(expect): not a ground truth file (a JSON object with a \"findings\" array)")
                }
                let comparison = GroundTruthComparison(expected: items, found: report.findings)
                Diagnostics.say(
                    "ledger: ground truth \(Echo.quoted(expect)): \(comparison.expected) expected, \(comparison.found) found, \(comparison.problems.count) differences"
                )
                for line in comparison.problems { Diagnostics.say("  " + line) }
                if !comparison.problems.isEmpty { failing = true }
            }
            if let failOn, report.hasFindings(atOrAbove: failOn) {
                Diagnostics.say("ledger: findings at or above \(failOn.rawValue) exist (--fail-on)")
                failing = true
            }
        }
        if failing { throw Exit.verificationFailed }
    }
}
