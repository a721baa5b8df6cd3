import LedgerCore
import LedgerDomain
import LedgerScenarios
import Testing

@Suite("The benchmarks' generated histories")
struct HistoryGeneratorTests {
    static func fold(_ ids: IdShape, facts: Int = 30_000) -> Projections {
        var p = Projections()
        for (i, (fact, at)) in HistoryGenerator(users: 400, seed: 11, ids: ids).prefix(facts).enumerated() {
            p.apply(fact, FactContext(position: Int64(i + 1), occurredAt: at))
        }
        return p
    }

    /// Short ids stay as the benchmark logs already loaded have them.
    @Test func shortIdsAreTheOnesLoadedLogsHave() {
        let facts = Array(HistoryGenerator(users: 400, seed: 11).prefix(8))
        guard case .orderCreated(let order) = facts[HistoryGenerator.catalogue.count].0 else {
            Issue.record("the first purchase starts with its order: \(facts)")
            return
        }
        #expect(order.orderId == "o1" && order.userId.hasPrefix("u") && order.userId.utf8.count <= 15)
    }

    /// Store-shaped ids are as long as the stores' (on the heap, past a String's 15 inline bytes),
    /// and distinct where short ones are: the same history folds to the same views and findings.
    @Test func storeIdsAreLongAndFoldAsShortOnesDo() {
        let short = Self.fold(.short), store = Self.fold(.store)
        #expect(store.orders.count == short.orders.count && store.orders.count > 1_000)
        #expect(store.transactions.count == short.transactions.count)
        #expect(store.subscriptions.count == short.subscriptions.count && store.subscriptions.count > 0)
        #expect(store.users.count == short.users.count)
        #expect(store.anomalies.isEmpty && short.anomalies.isEmpty)
        let ids = store.orders.keys + store.transactions.keys + store.users.keys
        #expect(ids.allSatisfy { $0.utf8.count > 15 }, "\(ids.filter { $0.utf8.count <= 15 }.prefix(5))")
        let lengths = Set(store.transactions.keys.map(\.utf8.count))
        #expect(lengths == [16, 24, 28], "\(lengths)")
        func balances(_ p: Projections) -> [Int64] { p.users.values.map(\.coinBalance).sorted() }
        #expect(balances(store) == balances(short))
        func kinds(_ p: Projections) -> [String: Int] {
            Dictionary(Audit.run(p).map { ($0.kind.rawValue, 1) }, uniquingKeysWith: +)
        }
        #expect(kinds(store) == kinds(short))
    }
}
