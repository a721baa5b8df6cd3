import LedgerPostgres
import Testing

@Suite("Query results")
struct QueryResultTests {
    /// A statement that found no row (or fewer columns than asked for) answers nil, as NULL does:
    /// a surprising answer from the database never stops the process.
    @Test func aRowOrColumnTheResultDoesNotHaveIsNil() {
        let empty = QueryResult(columns: ["body_digest"], rows: [])
        #expect(empty.string(0, 0) == nil && empty.int64(0, 0) == nil && empty.bool(0, 0) == nil)
        #expect(empty.bytea(0, 0) == nil)
        let one = QueryResult(columns: ["a", "b"], rows: [["42", nil]])
        #expect(one.int64(0, 0) == 42)
        #expect(one.string(0, 1) == nil && one.string(0, 2) == nil && one.string(1, 0) == nil)
        #expect(one.string(-1, 0) == nil)
        #expect(QueryResult(rows: [["\\x0aff"]]).bytea(0, 0) == [0x0A, 0xFF])
    }
}
