import LedgerPostgres
import LedgerTesting
import Testing

/// Statement parameters reach the server as given (the append's claims and rows go as arrays).
@Suite("Statement parameters", .timeLimit(.minutes(2)))
struct ParameterTests {
    @Test func textArraysArriveElementByElement() async throws {
        let items: [String?] = [
            "plain", "with \"quotes\"", "back\\slash\\", "é ü 中文 🙂", "", nil, "NULL", "a,b", "{x}", " spaced ",
            "tab\tand\nline",
        ]
        let conn = try await PostgresConnection.connect(
            try await TestDatabase.url(), applicationName: "test-parameters")
        defer { Task { await conn.close() } }
        for value in [PostgresValue.textArray(items), .arrayOfLiterals(items, arrayOID: PostgresValue.OID.textArray)] {
            let r = try await conn.query(
                "SELECT x, x IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i) ORDER BY i", [value])
            #expect(r.count == items.count)
            #expect((0..<r.count).map { r.string($0, 0) } == items)
            #expect((0..<r.count).map { r.bool($0, 1) == true } == items.map { $0 == nil })
        }
    }
}
