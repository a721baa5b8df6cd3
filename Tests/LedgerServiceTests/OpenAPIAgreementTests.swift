import Foundation
import Hummingbird
import LedgerService
import LedgerTesting
import Testing

/// schema/openapi.yaml and the router list the same routes (method and path), both ways.
@Suite("OpenAPI document", .timeLimit(.minutes(2)))
struct OpenAPIAgreementTests {
    /// The `METHOD /path` pairs of the document's `paths:` (paths at two spaces, methods at four),
    /// parameters written as `{}`.
    static func documented() throws -> Set<String> {
        let text = try String(
            contentsOf: TestDatabase.packageRoot.appendingPathComponent("schema/openapi.yaml"), encoding: .utf8)
        var out: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            if inPaths, !line.isEmpty, !line.hasPrefix(" ") { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                path = normalized(String(line.dropFirst(2).dropLast()))
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "),
                let method = ["get", "post", "put", "patch", "delete"].first(where: { line == "    \($0):" })
            {
                out.insert(method.uppercased() + " " + path)
            }
        }
        return out
    }

    static func normalized(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { s in
            s.hasPrefix("{") || s.hasPrefix(":") ? "{}" : String(s)
        }.joined(separator: "/")
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedRouteExists() async throws {
        try await ServiceFixture.with("openapi") { f in
            let routed = Set(f.service.router().routes.map { "\($0.method.rawValue) " + Self.normalized("\($0.path)") })
            let documented = try Self.documented()
            #expect(documented.count >= 11)
            #expect(
                routed.subtracting(documented).isEmpty,
                "routes missing from schema/openapi.yaml: \(routed.subtracting(documented).sorted())")
            #expect(
                documented.subtracting(routed).isEmpty,
                "documented routes the service lacks: \(documented.subtracting(routed).sorted())")
        }
    }
}
