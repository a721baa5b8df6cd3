import ArgumentParser
import Foundation
import LedgerCore
import LedgerDomain
import LedgerReport
import LedgerLog
import LedgerProjection
import Synchronization

/// A progress bar on stderr: events done, events/s and ETA. Silent when stderr is not a terminal.
final class ProgressBar: Sendable {
    let label: String
    let enabled: Bool
    let start = ContinuousClock.now
    let last = Mutex<ContinuousClock.Instant?>(nil)

    let unit: String

    init(_ label: String, unit: String = "events", enabled: Bool = Diagnostics.isTerminal) {
        self.label = label
        self.unit = unit
        self.enabled = enabled
    }

    func update(_ done: Int64, _ total: Int64) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let due = last.withLock { l -> Bool in
            if let l, now - l < .milliseconds(200), done < total { return false }
            l = now
            return true
        }
        guard due else { return }
        let elapsed = max((now - start).seconds, 0.001)
        let rate = Double(done) / elapsed
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let line = String(
            format: "\r%@ [%@] %3.0f%% %@/%@ %@  %@/s  ETA %.0fs ",
            label, bar, fraction * 100, grouped(done), grouped(total), unit, grouped(Int64(rate)), eta)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

func grouped(_ n: Int64) -> String {
    let s = String(n.magnitude)
    var out = ""
    for (i, c) in s.enumerated() {
        if i > 0 && (s.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}

struct Project: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Run the projector: apply new facts to the read models (orders, transactions, subscriptions, entitlements, anomalies).",
        discussion: paragraphs(
            """
            Each batch of changed rows is committed with the projector's checkpoint in one transaction, so a
            projector that stops (or crashes) resumes exactly where the tables are. Only one projector (or
            rebuild) runs per ledger: a second one exits 75.

            It starts from the latest snapshot of its fold. With a fold memory limit (the default has
            one), the snapshot's views but the newest go to the spill file as they are, decoded when the
            fold first needs them: the start takes about as long as reading the snapshot, and the spill
            directory needs room for about its size. With --fold-memory none every view is decoded at start.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Flag(
        name: .shortAndLong,
        help:
            "Keep applying facts as they are appended (wakes on NOTIFY, polls every second) until interrupted; survives server restarts (reconnects with backoff, resumes where the tables are)."
    )
    var follow = false

    @Option(
        help:
            "Write a snapshot of the fold after this many facts were folded since the last one, for the next start to begin from (0: never)."
    )
    var snapshotEvery: Int64 = 1_000_000

    @OptionGroup var foldMemory: FoldMemoryOptions

    func run() async throws {
        try await runReportingErrors {
            if follow {
                let store = try await EventStore.open(try await connection.configuration(as: .projector))
                defer { Task { await store.close() } }
                Diagnostics.say("ledger: following the log (Ctrl-C to stop)")
                try await Projector.followSurvivingRestarts(
                    store, snapshotEvery: snapshotEvery, memory: try foldMemory.memory,
                    onStart: { p in Diagnostics.say("ledger: projector at position \(p)") },
                    onBatch: { n, p in Diagnostics.say("ledger: applied \(n) events; at position \(p)") },
                    onRestart: { error, wait in
                        Diagnostics.say("ledger: database unavailable (\(error)); reconnecting in \(wait)")
                    })
                return
            }
            let store = try await EventStore.open(try await connection.configuration(as: .projector))
            let bar = ProgressBar("restore")
            let projector: Projector
            do {
                projector = try await Projector.start(
                    store, progress: bar.update, snapshotEvery: snapshotEvery, memory: try foldMemory.memory)
            } catch {
                await store.close()
                throw error
            }
            bar.finish()
            Diagnostics.say(Self.startLine(projector.startedFrom, at: await projector.position))
            do {
                let n = try await projector.catchUp()
                Diagnostics.say(
                    "ledger: projector applied \(grouped(n)) events; read models at position \(await projector.position)"
                )
            } catch {
                await projector.close()
                await store.close()
                throw error
            }
            await projector.close()
            await store.close()
        }
    }
}

extension Project {
    /// Where a projector's fold began.
    static func startLine(_ snapshot: SnapshotInfo?, at position: Int64) -> String {
        guard let snapshot else {
            return "ledger: projector folded the log from the first event to position \(position)"
        }
        return
            "ledger: projector started from the snapshot at position \(snapshot.position) (\(snapshot.bytes / 1_048_576) MiB) and folded to position \(position)"
    }
}

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild read models from the log into shadow tables, then swap them in atomically.",
        discussion: paragraphs(
            """
            NAME is one of: \(ReadModel.allCases.map(\.rawValue).joined(separator: ", ")), or all (the default).
            The live tables keep serving until the swap. With --verify nothing is swapped: the rebuilt tables are
            compared with the live ones (per-table checksum and the differing rows) and the exit code is 1 when
            they differ. Progress goes to stderr when it is a terminal; the report goes to stdout.
            """))

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "The read model to rebuild, or all.")
    var name: String = "all"

    @OptionGroup var replay: ReplayOptions

    @OptionGroup var foldMemory: FoldMemoryOptions

    @Flag(help: "Compare the rebuilt tables with the live ones instead of swapping; exit 1 on a difference.")
    var verify = false

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Flag(
        help: "Do not write a snapshot of the fold for the projector to start from (written by default after a swap).")
    var noSnapshot = false

    func validate() throws {
        if name != "all" && ReadModel(rawValue: name) == nil {
            throw ValidationError(
                "unknown read model '\(name)'; expected one of: all, \(ReadModel.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if verify && replay.isSet {
            throw ValidationError(
                "--verify compares with the live tables at their own checkpoint; leave out --to-position and --as-of")
        }
    }

    func run() async throws {
        var differs = false
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: nil))
            do {
                let through = try await replay.through(store)
                let models = name == "all" ? ReadModel.allCases : [ReadModel(rawValue: name)!]
                let bar = ProgressBar("rebuild")
                let report = try await LogReplay(store).rebuild(
                    RebuildOptions(
                        models: models, through: through, verify: verify, snapshot: !noSnapshot,
                        memory: try foldMemory.memory), progress: bar.update)
                bar.finish()
                print(json ? Self.json(report) : Self.table(report), terminator: "")
                differs = report.hasDifferences
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
        if differs { throw Exit.verificationFailed }
    }

    static func table(_ r: RebuildReport) -> String {
        let rate = r.foldSeconds > 0 ? Double(r.position) / r.foldSeconds : 0
        var s =
            "rebuilt as of position \(grouped(r.position)): folded the log in \(String(format: "%.2f", r.foldSeconds)) s (\(grouped(Int64(rate))) ev/s), wrote in \(String(format: "%.2f", r.writeSeconds)) s\n"
        if let spill = r.spill { s += "the fold kept to its memory: \(spill.description)\n" }
        let header = ["table", "rows", "checksum"] + (r.swapped ? [] : ["live rows", "live checksum", "result"])
        var rows: [[String]] = []
        for t in r.tables {
            var row = [t.table, grouped(t.rows), t.checksum]
            if !r.swapped {
                row += [
                    t.liveRows.map(grouped) ?? "-", t.liveChecksum ?? "-",
                    t.matches ? "same" : "DIFFERS (\(t.differingRows) rows)",
                ]
            }
            rows.append(row)
        }
        s += textTable(header, rows)
        if r.swapped {
            s += "swapped in; checkpoints set to \(grouped(r.position))\n"
            if let snapshot = r.snapshot {
                s +=
                    "wrote a snapshot of the fold (\(snapshot.bytes / 1_048_576) MiB) in \(String(format: "%.2f", r.snapshotSeconds)) s: the projector starts from it\n"
            }
            if let why = r.snapshotSkipped { s += "wrote no snapshot: \(why)\n" }
        } else {
            for t in r.tables where !t.matches {
                s += "\n\(t.table): \(t.differingRows) rows differ\n"
                for d in t.differences { s += "  \(d)\n" }
            }
            s +=
                r.hasDifferences
                ? "verify: the rebuilt read models DIFFER from the live ones (nothing swapped)\n"
                : "verify: the rebuilt read models equal the live ones (nothing swapped)\n"
            if let head = r.logHead, head > r.position {
                s +=
                    "verify: compared as of position \(grouped(r.position)), where the live read models are; the log's head is \(grouped(head)): \(head - r.position == 1 ? "1 event is" : "\(grouped(head - r.position)) events are") not projected yet (run `ledger project`)\n"
            }
        }
        return s
    }

    static func json(_ r: RebuildReport) -> String {
        let tables: [JSONValue] = r.tables.map { t in
            var m: [(String, JSONValue)] = [
                ("table", .string(t.table)), ("rows", .int(t.rows)), ("checksum", .string(t.checksum)),
            ]
            if let l = t.liveRows { m.append(("liveRows", .int(l))) }
            if let c = t.liveChecksum { m.append(("liveChecksum", .string(c))) }
            if !r.swapped {
                m.append(("matches", .bool(t.matches)))
                m.append(("differingRows", .int(t.differingRows)))
                m.append(("differences", .array(t.differences.map { .string($0) })))
            }
            return .makeObject(m)
        }
        return JSONValue.makeObject([
            ("position", .int(r.position)), ("swapped", .bool(r.swapped)),
            ("foldMilliseconds", .int(Int64(r.foldSeconds * 1000))),
            ("writeMilliseconds", .int(Int64(r.writeSeconds * 1000))),
            ("writeConnections", .int(Int64(r.writeConnections))),
            ("snapshotBytes", r.snapshot.map { .int(Int64($0.bytes)) } ?? .null),
            ("snapshotMilliseconds", .int(Int64(r.snapshotSeconds * 1000))),
            ("snapshotSkipped", r.snapshotSkipped.map { .string($0) } ?? .null),
            ("tables", .array(tables)), ("differs", .bool(r.hasDifferences)),
            ("logHead", r.logHead.map { .int($0) } ?? .null),
            (
                "spill",
                r.spill.map {
                    .makeObject([
                        ("views", .int(Int64($0.views))), ("bytes", .int($0.bytes)), ("reads", .int(Int64($0.reads))),
                        ("failure", $0.failure.map { .string($0) } ?? .null),
                    ])
                } ?? .null
            ),
        ]).compactText + "\n"
    }
}
