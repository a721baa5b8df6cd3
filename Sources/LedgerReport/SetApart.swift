import LedgerCore
import LedgerDomain

// The report's sections set apart from the findings: sandbox purchases and grants by policy.
extension AuditReport {
    static func json(_ s: SandboxPurchase) -> JSONValue {
        func opt(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }
        return .makeObject([
            ("transactionId", .string(s.transactionId)), ("channel", opt(s.channel?.rawValue)),
            ("environment", .string(s.environment)),
            ("productId", opt(s.productId)), ("userId", opt(s.userId)), ("price", s.price?.jsonAmount ?? .null),
            ("position", s.position.map { .int($0) } ?? .null),
        ])
    }

    static func json(_ g: PolicyGrant) -> JSONValue {
        func opt(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }
        let units = g.grant.units
        return .makeObject([
            ("grantId", .string(g.grant.grantId)), ("userId", .string(g.grant.userId)),
            ("reason", .string(g.reason.raw)),
            ("authorizedBy", opt(g.authorizedBy)), ("transactionId", opt(g.transactionId)),
            ("unit", .string(units.unit)),
            ("units", .int(units.count)), ("unitsLeft", .int(g.grant.unitsLeft)), ("position", .int(g.grant.position)),
        ])
    }

    /// The JSON members of the sections (left out when empty, so reports without them are unchanged).
    var setApartMembers: [(String, JSONValue)] {
        (sandbox.isEmpty ? [] : [("sandbox", .array(sandbox.map(Self.json)))])
            + (policyGrants.isEmpty ? [] : [("policyGrants", .array(policyGrants.map(Self.json)))])
            + (subscriptionStates.isEmpty
                ? []
                : [
                    (
                        "subscriptions",
                        .makeObject(subscriptionStates.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
                    )
                ])
    }

    var setApartTable: String {
        var s = ""
        if !sandbox.isEmpty {
            s +=
                "\nsandbox purchases (no revenue, no finding)\n"
                + textTable(
                    ["transaction", "channel", "environment", "product", "user", "price", "position"],
                    sandbox.map {
                        [
                            $0.transactionId, $0.channel?.rawValue ?? "-", $0.environment, $0.productId ?? "-",
                            $0.userId ?? "-",
                            $0.price?.description ?? "-", $0.position.map(String.init) ?? "-",
                        ]
                    })
        }
        if !policyGrants.isEmpty {
            s +=
                "\ngrants by policy\n"
                + textTable(
                    ["grant", "user", "reason", "authorized by", "granted", "left", "position"],
                    policyGrants.map {
                        [
                            $0.grant.grantId, $0.grant.userId, $0.reason.raw, $0.authorizedBy ?? "-",
                            "\($0.grant.units.count) \($0.grant.units.unit)", String($0.grant.unitsLeft),
                            String($0.grant.position),
                        ]
                    })
        }
        if !subscriptionStates.isEmpty {
            s +=
                "\nsubscriptions by state (as the stores last signed it)\n"
                + textTable(
                    ["state", "subscriptions"],
                    subscriptionStates.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] })
        }
        return s
    }

    var setApartHTML: String {
        var s = ""
        if !sandbox.isEmpty {
            s +=
                "<section><h2>Sandbox purchases</h2><p class=\"sub\">Recorded, but no revenue, no money at risk and no finding.</p>"
            s +=
                "<table id=\"sandbox\"><thead><tr><th>transaction</th><th>channel</th><th>environment</th><th>product</th><th>user</th><th>price</th></tr></thead><tbody>\n"
            for p in sandbox {
                s +=
                    "<tr class=\"sandbox\"><td class=\"mono\">\(Self.esc(p.transactionId))</td><td>\(p.channel?.rawValue ?? "-")</td><td>\(Self.esc(p.environment))</td>"
                s +=
                    "<td class=\"mono\">\(Self.esc(p.productId ?? "-"))</td><td class=\"mono\">\(Self.esc(p.userId ?? "-"))</td><td class=\"num\">\(Self.esc(p.price?.description ?? "-"))</td></tr>\n"
            }
            s += "</tbody></table></section>\n"
        }
        if !policyGrants.isEmpty {
            s +=
                "<section><h2>Grants by policy</h2><p class=\"sub\">Goodwill, compensation, promotion and migration grants: no store transaction behind them.</p>"
            s +=
                "<table id=\"policy-grants\"><thead><tr><th>grant</th><th>user</th><th>reason</th><th>authorized by</th><th>granted</th><th>left</th></tr></thead><tbody>\n"
            for g in policyGrants {
                s +=
                    "<tr class=\"policy-grant\" data-units=\"\(g.grant.units.count)\"><td class=\"mono\">\(Self.esc(g.grant.grantId))</td><td class=\"mono\">\(Self.esc(g.grant.userId))</td>"
                s +=
                    "<td>\(Self.esc(g.reason.raw))</td><td>\(Self.esc(g.authorizedBy ?? "-"))</td><td class=\"num\">\(g.grant.units.count) \(Self.esc(g.grant.units.unit))</td><td class=\"num\">\(g.grant.unitsLeft)</td></tr>\n"
            }
            s += "</tbody></table></section>\n"
        }
        if !subscriptionStates.isEmpty {
            s +=
                "<section><h2>Subscriptions by state</h2><p class=\"sub\">As the stores last signed it: grace keeps access to its end; billing retry, on hold and paused give none.</p>"
            s +=
                "<table id=\"subscription-states\"><thead><tr><th>state</th><th>subscriptions</th></tr></thead><tbody>\n"
            for (state, n) in subscriptionStates.sorted(by: { $0.key < $1.key }) {
                s += "<tr><td>\(Self.esc(state))</td><td class=\"num\">\(n)</td></tr>\n"
            }
            s += "</tbody></table></section>\n"
        }
        return s
    }
}
