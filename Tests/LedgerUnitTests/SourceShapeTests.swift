import Foundation
import Testing

/// The shape the sources keep: no file over 400 lines (split by concern, an extension per file).
@Suite("Source shape")
struct SourceShapeTests {
    @Test func noSourceFileIsOver400Lines() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let files =
            FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".swift")
            } ?? []
        #expect(files.count > 100)
        var long: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let lines =
                text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
            if lines > 400 { long.append("\(file): \(lines) lines") }
        }
        #expect(long.isEmpty, "\(long.sorted())")
    }

    /// Every source file the architecture names (`LedgerFoldStore/ViewTable.swift`,
    /// `Orders/OrderView+Snapshot.swift`, `Functions/chain_hash.sql`...) is where it says.
    @Test func everyFileTheArchitectureNamesExists() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var files: [String] = []
        for folder in ["Sources", "Tests"] {
            let base = root.appendingPathComponent(folder)
            let found = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String } ?? []
            files += found.map { "\(folder)/\($0)" }
        }
        let named = doc.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { ($0.hasSuffix(".swift") || $0.hasSuffix(".sql")) && !$0.contains(" ") && !$0.contains("*") }
        #expect(named.count > 30)
        let missing = Set(named.filter { name in !files.contains { $0 == name || $0.hasSuffix("/" + name) } })
        #expect(missing.isEmpty, "named in docs/architecture.md, not in the tree: \(missing.sorted())")
    }
}
