import Foundation
import LedgerServer

/// The process's own peak resident set (VmHWM), written at exit to the file named by
/// LEDGER_PEAK_RSS_FILE: how `ledger bench` measures a child. (wait4's `ru_maxrss` is no use
/// there: on Linux a child inherits its parent's peak across fork and exec.)
enum PeakMemory {
    static let fileVariable = "LEDGER_PEAK_RSS_FILE"

    /// VmHWM of this process in bytes, from /proc/self/status.
    static func ownPeakBytes() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kB = line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                Int64($0)
            }
            return kB.map { $0 * 1024 }
        }
        return nil
    }

    static func writeIfAsked() {
        guard let path = ProcessInfo.processInfo.environment[fileVariable], let peak = ownPeakBytes() else { return }
        try? String(peak).write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Runs `ledger ARGS` as a child and returns its output and its own peak RSS in bytes.
    static func runMeasured(_ arguments: [String]) async throws -> (ChildProcess.Output, Int64?) {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-peak-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var env = ProcessInfo.processInfo.environment
        env[fileVariable] = file
        let out = try await ChildProcess.run(exe, arguments, environment: env)
        let peak = (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int64($0) }
        return (out, peak)
    }
}

/// Named exit codes (documented in `ledger --help` and docs/cli.md).
