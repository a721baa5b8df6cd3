import Foundation
import LedgerServer

/// The process's own peak resident set (VmHWM) and the CPU time it used (user and system, every
/// thread), written at exit to the file named by LEDGER_PEAK_RSS_FILE: how `ledger bench` measures
/// a child. (wait4's `ru_maxrss` is no use there: on Linux a child inherits its parent's peak across
/// fork and exec.) CPU time says what a run cost where wall time, on a machine shared with other
/// work, also says how busy the machine was.
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

    /// The CPU time of this process so far, user and system, in microseconds.
    static func ownCPUMicroseconds() -> Int64 {
        var usage = rusage()
        #if canImport(Glibc)
        let who = RUSAGE_SELF.rawValue
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func micros(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000 + Int64(t.tv_usec) }
        return micros(usage.ru_utime) + micros(usage.ru_stime)
    }

    static func writeIfAsked() {
        guard let path = ProcessInfo.processInfo.environment[fileVariable], let peak = ownPeakBytes() else { return }
        try? "\(peak) \(ownCPUMicroseconds())".write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// What a child reported of itself: its peak RSS in bytes and its CPU time in seconds.
    struct Usage {
        var peakBytes: Int64?
        var cpuSeconds: Double?
    }

    /// Runs `ledger ARGS` as a child and returns its output and what it used.
    static func runMeasured(_ arguments: [String]) async throws -> (ChildProcess.Output, Usage) {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-peak-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var env = ProcessInfo.processInfo.environment
        env[fileVariable] = file
        let out = try await ChildProcess.run(exe, arguments, environment: env)
        let fields = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: " ")
        return (
            out,
            Usage(
                peakBytes: fields.first.flatMap { Int64($0) },
                cpuSeconds: fields.dropFirst().first.flatMap { Int64($0) }.map { Double($0) / 1_000_000 })
        )
    }
}

/// Named exit codes (documented in `ledger --help` and docs/cli.md).
