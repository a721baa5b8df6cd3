import LedgerCore
import LedgerDomain
import SwiftCSV

/// WeChat Pay API v3 daily bills (trade bill type ALL, refund bill type REFUND): CSV, a header,
/// detail rows whose every field starts with a backtick (so spreadsheets keep long numbers), then a
/// summary header (`总交易单数,应结订单总金额,...`) and one summary row. Columns are found by their
/// header names (WeChat does not promise their order). Amounts are yuan with two decimals; times are
/// Beijing time (UTC+8); a bill covers one Beijing day.
enum WeChatBill {
    static let beijing = "+08:00"
    static let beijingSeconds: Int64 = 8 * 3600

    static let tradeHeader = ["交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识", "交易类型",
                              "交易状态", "付款银行", "货币种类", "应结订单金额", "代金券金额", "微信退款单号", "商户退款单号", "退款金额",
                              "充值券退款金额", "退款类型", "退款状态", "商品名称", "商户数据包", "手续费", "费率", "订单金额", "申请退款金额", "费率备注"]
    static let refundHeader = ["交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识", "交易类型",
                               "交易状态", "付款银行", "货币种类", "应结订单金额", "代金券金额", "退款申请时间", "退款成功时间", "微信退款单号",
                               "商户退款单号", "退款金额", "充值券退款金额", "退款类型", "退款状态", "商品名称", "商户数据包", "手续费", "费率",
                               "订单金额", "申请退款金额", "费率备注"]
    static let summaryHeader = ["总交易单数", "应结订单总金额", "退款总金额", "充值券退款总金额", "手续费总金额", "订单总金额", "申请退款总金额"]
    /// Summary columns and the detail columns they total.
    static let totals: [(summary: String, detail: String)] = [
        ("应结订单总金额", "应结订单金额"), ("退款总金额", "退款金额"), ("充值券退款总金额", "充值券退款金额"),
        ("手续费总金额", "手续费"), ("订单总金额", "订单金额"), ("申请退款总金额", "申请退款金额"),
    ]

    /// One detail or summary row, with its line, read by column name.
    struct Row {
        let fields: [String]
        let line: Int
        let columns: [String: Int]

        func raw(_ name: String) -> String? {
            guard let i = columns[name] else { return nil }
            let f = i < fields.count ? fields[i] : ""
            return f.hasPrefix("`") ? String(f.dropFirst()) : f
        }

        func text(_ name: String) throws(StatementError) -> String {
            guard let v = raw(name), !v.isEmpty else { throw fail(name, "is empty") }
            return v
        }

        func optional(_ name: String) -> String? { raw(name).flatMap { $0.isEmpty ? nil : $0 } }

        func amount(_ name: String, _ currency: Currency) throws(StatementError) -> Int64 {
            let v = raw(name) ?? ""
            if v.isEmpty { return 0 }
            guard let m = Amounts.minorUnits(v, currency) else {
                throw fail(name, "\"\(v)\" is not an amount of \(currency.code) (at most \(currency.exponent) decimals)")
            }
            return m
        }

        func fail(_ name: String, _ message: String) -> StatementError {
            StatementError(line: line, column: columns[name].map { $0 + 1 }, field: name, message)
        }
    }

    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let csv: EnumeratedCSV
        do { csv = try EnumeratedCSV(string: text, delimiter: .comma, loadColumns: false) } catch {
            throw StatementError("not CSV: \(error)")
        }
        let refundBill = ctx.source == .wechatRefundBill
        let header = csv.header.map { $0.trimmingCharacters(in: .whitespaces) }
        let columns = Dictionary(header.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        for name in refundBill ? refundHeader : tradeHeader where columns[name] == nil && required.contains(name) {
            throw StatementError(line: 1, field: name, "the header has no column \(name) (is this a WeChat Pay \(refundBill ? "refund" : "trade") bill?)")
        }
        var rows = csv.rows.enumerated().map { Row(fields: $1, line: $0 + 2, columns: columns) }
        while let last = rows.last, last.fields.allSatisfy({ $0.isEmpty }) { rows.removeLast() }
        guard let summaryAt = rows.firstIndex(where: { $0.fields.first?.trimmingCharacters(in: .whitespaces) == summaryHeader[0] }) else {
            throw StatementError(line: (rows.last?.line ?? 1) + 1, "no summary rows (\(summaryHeader.joined(separator: ","))) at the end of the bill")
        }
        guard summaryAt == rows.count - 2 else {
            throw StatementError(line: rows[summaryAt].line, "the summary header must be followed by exactly one summary row, at the end of the bill")
        }
        let details = Array(rows[..<summaryAt])
        let summaryColumns = Dictionary(rows[summaryAt].fields.enumerated().map { ($1.trimmingCharacters(in: .whitespaces), $0) },
                                        uniquingKeysWith: { a, _ in a })
        let summary = Row(fields: rows[summaryAt + 1].fields, line: rows[summaryAt + 1].line, columns: summaryColumns)
        var lines: [StatementLine] = []
        var sums: [String: Int64] = [:]
        var currency = Currency("CNY")!
        var app: String?, merchant: String?
        for row in details {
            guard let c = Currency(try row.text("货币种类")) else { throw row.fail("货币种类", "\"\(row.raw("货币种类") ?? "")\" is not an ISO 4217 currency") }
            currency = c
            for (_, detail) in totals { sums[detail, default: 0] += try row.amount(detail, c) }
            app = app ?? row.optional("公众账号ID"); merchant = merchant ?? row.optional("商户号")
            if let line = try detailLine(row, refundBill: refundBill, currency: c, ctx) { lines.append(line) }
        }
        try checkSummary(summary, count: details.count, sums: sums, currency: currency)
        return try ctx.statement(lines, offsetSeconds: beijingSeconds, app: app, merchant: merchant)
    }

    static let required: Set<String> = ["交易时间", "微信订单号", "商户订单号", "交易状态", "货币种类", "应结订单金额", "退款金额", "手续费", "订单金额"]

    static func detailLine(_ row: Row, refundBill: Bool, currency c: Currency, _ ctx: ParseContext) throws(StatementError) -> StatementLine? {
        guard let time = Times.local(try row.text("交易时间"), offset: beijing) else {
            throw row.fail("交易时间", "\"\(row.raw("交易时间") ?? "")\" is not a time such as 2026-03-02 09:15:07")
        }
        let tx = try row.text("微信订单号")
        let state = try row.text("交易状态")
        let fee = try row.amount("手续费", c)
        var line: StatementLine
        if refundBill || state == "REFUND" || state == "REVOKED" {
            if let status = row.optional("退款状态"), status != "SUCCESS" { return nil }   // PROCESSING, ABNORMAL, CLOSED: no money returned
            var at = time
            if let done = row.optional("退款成功时间") {
                guard let t = Times.local(done, offset: beijing) else { throw row.fail("退款成功时间", "\"\(done)\" is not a time such as 2026-03-02 09:15:07") }
                at = t
            }
            let amount = state == "REVOKED" && !refundBill ? try row.amount("订单金额", c) : try row.amount("退款金额", c)
            guard amount > 0 else { throw row.fail("退款金额", "a refund of \(Amounts.text(amount, c)) \(c.code): must be more than zero") }
            line = ctx.line(row.line, kind: .refund, tx: tx, amount: Money(minorUnits: amount, currency: c), at: at)
            line.refundId = row.optional("微信退款单号")
        } else if state == "SUCCESS" {
            let amount = try row.amount("订单金额", c)
            guard amount >= 0 else { throw row.fail("订单金额", "a sale of \(Amounts.text(amount, c)) \(c.code): must not be negative") }
            line = ctx.line(row.line, kind: .sale, tx: tx, amount: Money(minorUnits: amount, currency: c), at: time)
            line.net = Money(minorUnits: max(0, try row.amount("应结订单金额", c) - fee), currency: c)
        } else {
            throw row.fail("交易状态", "\"\(state)\" is not a state a bill lists (SUCCESS, REFUND, REVOKED)")
        }
        if fee != 0 { line.fee = Money(minorUnits: abs(fee), currency: c) }
        line.orderId = row.optional("商户订单号")
        line.productId = row.optional("商品名称")
        line.app = row.optional("公众账号ID")
        line.merchant = row.optional("商户号")
        return line
    }

    static func checkSummary(_ summary: Row, count: Int, sums: [String: Int64], currency: Currency) throws(StatementError) {
        guard let n = Int(try summary.text(summaryHeader[0])) else {
            throw summary.fail(summaryHeader[0], "\"\(summary.raw(summaryHeader[0]) ?? "")\" is not a count")
        }
        guard n == count else { throw summary.fail(summaryHeader[0], "says \(n) rows, but the bill has \(count) detail rows") }
        for (total, detail) in totals where summary.columns[total] != nil {
            let stated = try summary.amount(total, currency)
            let sum = sums[detail] ?? 0
            guard stated == sum else {
                throw summary.fail(total, "says \(Amounts.text(stated, currency)), but the detail rows' \(detail) add up to \(Amounts.text(sum, currency))")
            }
        }
    }
}
