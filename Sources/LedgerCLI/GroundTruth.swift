import LedgerCore
import LedgerDomain

/// `audit --expect FILE`: the findings a simulation planted (or any list of expected findings)
/// against the findings found. Compared as multisets by key (a finding expected twice and found
/// once is missed once; found twice and expected once is doubled), then, where the expectation
/// gives them, by position (the finding must cite it) and by amount at risk.
struct GroundTruthComparison {
    var expected = 0
    var found = 0
    /// One line per difference, "missed: KEY", "unexpected: KEY", "position: ...", "amount: ...".
    var problems: [String] = []

    init(expected items: [JSONValue], found findings: [Finding]) {
        expected = items.count
        found = findings.count
        var expectedByKey: [String: [JSONValue]] = [:]
        for item in items {
            guard let key = item["key"]?.stringValue else {
                problems.append("malformed: an expected finding without a \"key\": \(Echo.shown(item.compactText))")
                continue
            }
            expectedByKey[key, default: []].append(item)
        }
        let foundByKey = Dictionary(grouping: findings, by: \.key)
        for key in Set(expectedByKey.keys).union(foundByKey.keys).sorted() {
            let e = expectedByKey[key] ?? [], f = foundByKey[key] ?? []
            let shown = Echo.shown(key)
            if e.count > f.count { problems += Array(repeating: "missed:     \(shown)", count: e.count - f.count) }
            if f.count > e.count {
                problems += Array(
                    repeating: (e.isEmpty ? "unexpected: " : "doubled:    ") + shown, count: f.count - e.count)
            }
            for (want, got) in zip(e, f) {
                if let p = want["position"]?.intValue, !got.positions.contains(p) {
                    problems.append(
                        "position:   \(shown): expected at position \(p), found at \(got.positions.map(String.init).joined(separator: ", "))"
                    )
                }
                if let amount = want["amountAtRisk"], amount != .null {
                    let wanted = amount["amount"]?.intValue, currency = amount["currency"]?.stringValue
                    if got.amountAtRisk?.minorUnits != wanted || got.amountAtRisk?.currency.code != currency {
                        problems.append(
                            "amount:     \(shown): expected \(wanted.map(String.init) ?? "?") \(currency ?? "?"), found \(got.amountAtRisk?.description ?? "none")"
                        )
                    }
                }
            }
        }
    }
}
