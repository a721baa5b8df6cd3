import Foundation
import Testing

/// The shape the sources keep: no file over 400 lines (split by concern, an extension per file).
@Suite("Source shape")
struct SourceShapeTests {
    @Test func noSourceFileIsOver400Lines() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 100)
        var long: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            if lines > 400 { long.append("\(file): \(lines) lines") }
        }
        #expect(long.isEmpty, "\(long.sorted())")
    }
}
