#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The process's own figures in Prometheus' standard names (what client libraries call process
/// metrics), read from /proc on each scrape: CPU time, resident and virtual memory, open and
/// allowed file descriptors, start time. Empty where /proc is missing (not Linux).
enum ProcessMetrics {
    struct Sample: Equatable {
        var cpuSeconds: Double
        var residentBytes: Int64
        var virtualBytes: Int64
        var openFDs: Int
        var maximumFDs: Int64
        var startTimeSeconds: Double
    }

    /// `/proc/self/stat`'s fields after the command (which may hold spaces and parentheses).
    static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    static func sample() -> Sample? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let f = statFields(stat),
            f.count > 22,
            let utime = Double(f[11]), let stime = Double(f[12]), let start = Double(f[19]), let vsize = Int64(f[20]),
            let rss = Int64(f[21]),
            let boot = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?.split(separator: "\n")
                .first(where: { $0.hasPrefix("btime ") }).flatMap({ Double($0.dropFirst(6)) })
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Int64(sysconf(Int32(_SC_PAGESIZE)))
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        var limit = rlimit()
        let maximum = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int64(clamping: limit.rlim_cur) : 0
        return Sample(
            cpuSeconds: (utime + stime) / ticks, residentBytes: rss * page, virtualBytes: vsize, openFDs: fds,
            maximumFDs: maximum, startTimeSeconds: boot + start / ticks)
    }

    static let familyNames: Set<String> = [
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds",
        "process_start_time_seconds",
    ]

    /// The sample as Prometheus text, each family with its HELP and TYPE.
    static func text(_ s: Sample) -> String {
        let families: [(String, String, String, String)] = [
            (
                "process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.",
                String(s.cpuSeconds)
            ),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", String(s.residentBytes)),
            ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", String(s.virtualBytes)),
            ("process_open_fds", "gauge", "Open file descriptors (connections included).", String(s.openFDs)),
            ("process_max_fds", "gauge", "The most file descriptors the process may open.", String(s.maximumFDs)),
            (
                "process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.",
                String(s.startTimeSeconds)
            ),
        ]
        return families.map { "# HELP \($0.0) \($0.2)\n# TYPE \($0.0) \($0.1)\n\($0.0) \($0.3)\n" }.joined()
    }
}
