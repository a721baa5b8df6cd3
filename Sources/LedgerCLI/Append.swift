import ArgumentParser
import Foundation
import LedgerCore
import LedgerStore

struct Append: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append facts from JSON lines (one event per line) as one atomic batch.",
        discussion: """
            Every line is parsed and validated before anything is written; any error names its line and
            field and nothing is written (exit 65). Prints one JSON line per event with its position.
            Line format: schema/event-line.schema.json.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .shortAndLong, help: "JSON lines file (default: standard input).")
    var file: String?

    @Flag(help: "Store event types outside the fact catalogue instead of refusing them.")
    var allowUnknownTypes = false

    func run() async throws {
        try await runReportingErrors {
            let data: Data
            if let file {
                guard let d = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("cannot read \(file)")
                }
                data = d
            } else {
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            var validation = EventValidation(allowUnknownTypes: allowUnknownTypes)
            if let raw = ProcessInfo.processInfo.environment["LEDGER_MAX_PAYLOAD_BYTES"], let n = Int(raw), n > 0 {
                validation.maximumPayloadBytes = n
            }
            let (events, lines) = try Self.decode(data, decoder: EventLineDecoder(validation: validation))
            if events.isEmpty {
                Diagnostics.say("ledger: no events in the input; nothing to do")
                return
            }
            let config = try await connection.configuration(validation: validation)
            let store = try await EventStore.open(config)
            let appended: [AppendedEvent]
            do {
                appended = try await store.append(events)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            var out = ""
            for (line, a) in zip(lines, appended) {
                out += "{\"line\":\(line),\"eventId\":\"\(a.eventId.lowercased)\",\"stream\":\(JSONValue.string(a.stream).compactText),\"version\":\(a.version),\"position\":\(a.position),\"alreadyStored\":\(a.alreadyStored)}\n"
            }
            FileHandle.standardOutput.write(Data(out.utf8))
            let stored = appended.filter { !$0.alreadyStored }.count
            Diagnostics.say("ledger: appended \(stored) events, \(appended.count - stored) already stored")
        }
    }

    /// Decodes every non-blank line; the first error stops everything.
    static func decode(_ data: Data, decoder: EventLineDecoder) throws -> ([NewEvent], [Int]) {
        var events: [NewEvent] = []
        var lines: [Int] = []
        var lineNumber = 0
        var seen: [UUID: (line: Int, index: Int)] = [:]
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var bytes = raw
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw EventInputError(line: lineNumber, message: "not valid UTF-8")
            }
            let event = try decoder.decode(text, lineNumber: lineNumber)
            if let first = seen[event.eventId] {
                if events[first.index] != event {
                    throw EventInputError(line: lineNumber, field: "eventId", eventId: event.eventId.lowercased,
                                          message: "the same eventId is on line \(first.line) with different content")
                }
            } else {
                seen[event.eventId] = (lineNumber, events.count)
            }
            events.append(event)
            lines.append(lineNumber)
        }
        return (events, lines)
    }
}

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print events as JSON lines: the global log from a position, or one stream from a version.")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Read only this stream (then --from is a stream version).")
    var stream: String?

    @Option(help: "First global position (or stream version with --stream) to print, inclusive.")
    var from: Int64 = 0

    @Option(help: "Print at most this many events.")
    var limit: Int64?

    @Flag(name: .shortAndLong, help: "Keep printing events as they are appended (the global log only; wakes on NOTIFY, polls every second).")
    var follow = false

    func validate() throws {
        if from < 0 { throw ValidationError("--from must be >= 0") }
        if let limit, limit < 1 { throw ValidationError("--limit must be >= 1") }
        if follow, stream != nil { throw ValidationError("--follow reads the global log; leave out --stream") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration())
            defer { Task { await store.close() } }
            if let stream {
                var version = from
                var remaining = limit ?? Int64.max
                while remaining > 0 {
                    let page = try await store.readStream(stream, fromVersion: version, limit: Int(min(remaining, 1000)))
                    if page.isEmpty { break }
                    FileHandle.standardOutput.write(Data(page.map { $0.jsonLine + "\n" }.joined().utf8))
                    remaining -= Int64(page.count)
                    version = page.last!.version + 1
                }
            } else {
                let limit = self.limit
                let through = limit.map { max(from, 1) - 1 + $0 }
                let writer = LineWriter()
                if follow {
                    var printed: Int64 = 0
                    for try await event in store.subscribe(after: max(from, 1) - 1) {
                        FileHandle.standardOutput.write(Data((event.jsonLine + "\n").utf8))
                        printed += 1
                        if let limit, printed >= limit { break }
                    }
                    return
                }
                try await store.scan(after: max(from, 1) - 1, through: through) { event in
                    writer.write(event.jsonLine)
                    return true
                }
                writer.flush()
            }
        }
    }
}

/// Buffers stdout writes (called from the connection's thread during a scan).
final class LineWriter: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    func write(_ line: String) {
        buffer.withLock { b in
            b.append(contentsOf: line.utf8)
            b.append(0x0A)
            if b.count > 1 << 16 { FileHandle.standardOutput.write(Data(b)); b.removeAll(keepingCapacity: true) }
        }
    }
    func flush() {
        buffer.withLock { b in FileHandle.standardOutput.write(Data(b)); b.removeAll() }
    }
}

import Synchronization

struct VerifyChain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-chain",
        abstract: "Re-hash the whole log (streaming) and name the first position that does not verify (exit 1).")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration())
            defer { Task { await store.close() } }
            let start = ContinuousClock.now
            let report = try await store.verifyChain { n in
                if Diagnostics.isTerminal { Diagnostics.say("ledger: verified \(n) events...") }
            }
            let seconds = (ContinuousClock.now - start).seconds
            if let problem = report.problem {
                print("{\"intact\":false,\"verified\":\(report.verified),\"firstBrokenPosition\":\(report.firstBrokenPosition ?? 0),\"problem\":\(JSONValue.string(problem).compactText)}")
                Diagnostics.say("ledger: chain BROKEN at position \(report.firstBrokenPosition ?? 0): \(problem)")
                throw Exit.verificationFailed
            }
            print("{\"intact\":true,\"verified\":\(report.verified),\"lastPosition\":\(report.lastPosition)}")
            Diagnostics.say("ledger: chain intact: \(report.verified) events verified in \(String(format: "%.2f", seconds)) s")
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
