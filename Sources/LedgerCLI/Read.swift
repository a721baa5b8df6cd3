import ArgumentParser
import Foundation
import LedgerCore
import LedgerLog
import LedgerProjection
import Synchronization

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

    @Flag(
        name: .shortAndLong,
        help: "Keep printing events as they are appended (the global log only; wakes on NOTIFY, polls every second).")
    var follow = false

    func validate() throws {
        if from < 0 { throw ValidationError("--from must be >= 0") }
        if let limit, limit < 1 { throw ValidationError("--limit must be >= 1") }
        if follow, stream != nil { throw ValidationError("--follow reads the global log; leave out --stream") }
    }

    func run() async throws {
        try await runReportingErrors {
            let store = try await EventStore.open(try await connection.configuration(as: .reader))
            defer { Task { await store.close() } }
            if let stream {
                var version = from
                var remaining = limit ?? Int64.max
                while remaining > 0 {
                    let page = try await store.readStream(
                        stream, fromVersion: version, limit: Int(min(remaining, 1000)))
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
            if b.count > 1 << 16 {
                FileHandle.standardOutput.write(Data(b))
                b.removeAll(keepingCapacity: true)
            }
        }
    }
    func flush() {
        buffer.withLock { b in
            FileHandle.standardOutput.write(Data(b))
            b.removeAll()
        }
    }
}
