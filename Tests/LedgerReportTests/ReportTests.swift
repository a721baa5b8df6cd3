import LedgerCore
import LedgerDomain
@testable import LedgerReport
import Testing

/// The reports, tested directly (no database, no binary): the order a reader triages findings in,
/// the difference shown where revenue does not tie, the daily chart's time axis, money in CSV.
@Suite("Reports")
struct ReportTests {
    static let cny = Currency("CNY")!, usd = Currency("USD")!

    static func report(_ findings: [Finding], daily: [AuditReport.Day] = []) -> AuditReport {
        AuditReport(scope: .init(position: 10, logTime: nil, events: 10), findings: findings, daily: daily)
    }

    @Test func findingsAreInTriageOrderBySeverityThenMoney() {
        let findings = [
            Finding(
                kind: .staleOrder, orderId: "o1", positions: [1],
                amountAtRisk: Money(minorUnits: 9_900, currency: Self.cny), detail: "info"),
            Finding(
                kind: .doubleGrant, transactionId: "t1", positions: [2],
                amountAtRisk: Money(minorUnits: 600, currency: Self.cny), detail: "small"),
            Finding(
                kind: .doubleGrant, transactionId: "t2", positions: [3],
                amountAtRisk: Money(minorUnits: 1_800, currency: Self.cny), detail: "large"),
            Finding(kind: .doubleGrant, transactionId: "t3", positions: [4], detail: "no amount"),
            Finding(
                kind: .doubleGrant, transactionId: "t4", positions: [5],
                amountAtRisk: Money(minorUnits: 99, currency: Self.usd), detail: "usd"),
            Finding(
                kind: .missingGrant, transactionId: "t5", positions: [6],
                amountAtRisk: Money(minorUnits: 50_000, currency: Self.cny), detail: "error"),
        ]
        let order = Self.report(findings).findingsBySeverity.map(\.detail)
        // Critical first (CNY largest first, then the other currency, then none), then error, then info.
        #expect(order == ["large", "small", "usd", "no amount", "error", "info"])
    }

    @Test func aRowThatDoesNotTieShowsItsDifference() {
        var row = RevenueRow(period: "2026-03-02", channel: .wechat, currency: Self.cny)
        row.ledger.sales = 3
        row.ledger.gross = 1_800
        row.statements.sales = 2
        row.statements.gross = 1_200
        #expect(!row.ties)
        #expect(RevenueReport.difference(row) == "net +6.00 CNY, sales +1")
        row.statements.sales = 3
        row.statements.gross = 1_800
        #expect(row.ties && RevenueReport.difference(row).isEmpty)
        // The ledger short: a minus sign; gross and refunded off alike: the net ties, the parts do not.
        row.ledger.gross = 1_500
        #expect(RevenueReport.difference(row) == "net -3.00 CNY")
        row.ledger.gross = 1_800
        row.ledger.refunded = 100
        row.statements.refunded = 0
        row.statements.gross = 1_700
        #expect(RevenueReport.difference(row) == "gross +1.00 CNY, refunded +1.00 CNY")
    }

    @Test func theDailyChartPlacesEachDayAtItsDate() {
        let daily = [
            AuditReport.Day(day: "2026-01-01", payments: 1, grants: 1, refunds: 0, revocations: 0),
            AuditReport.Day(day: "2026-01-02", payments: 2, grants: 2, refunds: 0, revocations: 0),
            AuditReport.Day(day: "2026-01-11", payments: 1, grants: 0, refunds: 0, revocations: 0),
        ]
        let svg = Self.report([], daily: daily).dailyChart
        // Two runs (the gap of eight days is a gap), each day at 48 + 700 * (day - first) / 10.
        #expect(svg.components(separatedBy: "<polyline class=\"payments\"").count - 1 == 2)
        #expect(
            svg.contains(
                "<polyline class=\"payments\" points=\"48,102 118,12\"/><polyline class=\"payments\" points=\"748,102\"/>"
            ))
        #expect(svg.contains("<circle class=\"dot payments\" cx=\"748\""))
        #expect(svg.contains("the gaps are days with no facts"))
        // Grid values once each, however small the scale.
        #expect(svg.components(separatedBy: "text-anchor=\"end\">1</text>").count - 1 == 1)
    }

    @Test func csvAmountsAreInMinorUnitsAndDecimals() {
        let f = Finding(
            kind: .doubleGrant, transactionId: "t1", positions: [2, 3],
            amountAtRisk: Money(minorUnits: 153_600, currency: Self.cny),
            detail: "a \"quoted\", detail")
        let lines = Self.report([f]).csv.split(separator: "\r\n").map(String.init)
        #expect(
            lines[0].hasPrefix(
                "kind,severity,channel,user_id,order_id,transaction_id,positions,amount_minor_units,amount,currency,detail,key"
            ))
        #expect(lines[1].contains(",2 3,153600,1536.00,CNY,\"a \"\"quoted\"\", detail\","))
    }

    @Test func textTablesHaveNoTrailingSpaces() {
        let table = textTable(["a", "long header"], [["x", ""], ["longer cell", "y"]])
        #expect(!table.split(separator: "\n").contains { $0.hasSuffix(" ") })
        #expect(table.hasPrefix("a            long header\n"))
    }
}
