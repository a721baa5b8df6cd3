import Foundation
import LedgerService
import LedgerTesting
import Testing

/// tools/grafana/ledger-dashboard.json is built on the metrics the service shows: every family it
/// queries exists, every family the service shows is on it, and its panels do not overlap.
@Suite("Grafana dashboard")
struct DashboardTests {
    /// The dashboard's panels (Foundation's parser: Grafana's JSON has decimal thresholds).
    static func panels() throws -> [[String: Any]] {
        let url = TestDatabase.packageRoot.appendingPathComponent("tools/grafana/ledger-dashboard.json")
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: url)) as? [String: Any]
        return try #require(object?["panels"] as? [[String: Any]])
    }

    /// The metric families a PromQL expression names (a histogram's series by their family).
    static func families(_ expr: String) -> Set<String> {
        var out: Set<String> = []
        let regex = /\b((?:ledger|process)_[a-z_]+)/
        for match in expr.matches(of: regex) {
            var name = String(match.1)
            for suffix in ["_bucket", "_sum", "_count"]
            where name.hasSuffix(suffix) && name.hasPrefix("ledger_") && name.contains("duration") {
                name = String(name.dropLast(suffix.count))
            }
            out.insert(name)
        }
        return out
    }

    @Test func everyQueryNamesAShownFamilyAndEveryFamilyIsShown() throws {
        var queried: Set<String> = []
        for panel in try Self.panels() {
            for t in panel["targets"] as? [[String: Any]] ?? [] {
                queried.formUnion(Self.families(t["expr"] as? String ?? ""))
            }
        }
        let shown = ServiceMetrics.familyNames
        #expect(
            queried.subtracting(shown).isEmpty,
            "queried but not shown by /metrics: \(queried.subtracting(shown).sorted())")
        #expect(
            shown.subtracting(queried).isEmpty,
            "shown by /metrics but on no panel: \(shown.subtracting(queried).sorted())")
    }

    @Test func panelsHaveUniqueIdsAndDoNotOverlap() throws {
        var ids: Set<Int> = []
        var cells: Set<[Int]> = []
        let panels = try Self.panels()
        #expect(panels.count >= 10)
        for panel in panels {
            let id = try #require(panel["id"] as? Int)
            #expect(ids.insert(id).inserted, "panel id \(id) twice")
            let g = try #require(panel["gridPos"] as? [String: Int])
            let (x, y, w, h) = (g["x"] ?? -1, g["y"] ?? -1, g["w"] ?? 0, g["h"] ?? 0)
            #expect(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, "panel \(id) is off the grid")
            for cx in x..<(x + w) {
                for cy in y..<(y + h) {
                    #expect(cells.insert([cx, cy]).inserted, "panel \(id) overlaps another at \(cx),\(cy)")
                }
            }
        }
    }
}
