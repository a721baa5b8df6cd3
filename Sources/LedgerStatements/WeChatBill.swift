import LedgerCore
import LedgerDomain

/// WeChat Pay daily bills: the trade bill (bill types ALL and SUCCESS) and the refund bill
/// (REFUND), in the API v3 layout or the older v2 one. A header, detail rows, then a summary
/// header (`总交易单数,...`) and one summary row. Every field of a detail or summary row starts with a
/// backtick (so spreadsheets keep long numbers) and fields are never CSV-quoted: a field may hold
/// commas and quotes (商户数据包 carries JSON), so a row is split at each comma followed by a
/// backtick. Columns are found by their header names (WeChat does not promise their order).
/// Amounts are yuan with two decimals, fees to five (kept exactly); times are Beijing time (UTC+8);
/// a bill covers one Beijing day.
enum WeChatBill {
    static let beijing = "+08:00"
    static let beijingSeconds: Int64 = 8 * 3600

    static let tradeHeader = [
        "交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识", "交易类型",
        "交易状态", "付款银行", "货币种类", "应结订单金额", "代金券金额", "微信退款单号", "商户退款单号", "退款金额",
        "充值券退款金额", "退款类型", "退款状态", "商品名称", "商户数据包", "手续费", "费率", "订单金额", "申请退款金额", "费率备注",
    ]
    static let refundHeader = [
        "交易时间", "公众账号ID", "商户号", "特约商户号", "设备号", "微信订单号", "商户订单号", "用户标识", "交易类型",
        "交易状态", "付款银行", "货币种类", "应结订单金额", "代金券金额", "退款申请时间", "退款成功时间", "微信退款单号",
        "商户退款单号", "退款金额", "充值券退款金额", "退款类型", "退款状态", "商品名称", "商户数据包", "手续费", "费率",
        "订单金额", "申请退款金额", "费率备注",
    ]
    static let summaryHeader = ["总交易单数", "应结订单总金额", "退款总金额", "充值券退款总金额", "手续费总金额", "订单总金额", "申请退款总金额"]
    /// Summary columns and the detail columns they total (API v3, then the older v2 names).
    static let totals: [(summary: String, detail: String)] = [
        ("应结订单总金额", "应结订单金额"), ("退款总金额", "退款金额"), ("充值券退款总金额", "充值券退款金额"),
        ("手续费总金额", "手续费"), ("订单总金额", "订单金额"), ("申请退款总金额", "申请退款金额"),
        ("总交易额", "总金额"), ("总退款金额", "退款金额"), ("总代金券或立减优惠退款金额", "代金券或立减优惠退款金额"),
    ]
    /// The detail columns some summary column totals, each once.
    static let totalled: [String] = totals.map(\.detail).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    /// Fee columns: WeChat prints them to five decimals of a yuan, kept exactly (in micros).
    static let feeColumns: Set<String> = ["手续费", "手续费总金额"]

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

        /// In minor units; an absent or empty column is zero.
        func amount(_ name: String, _ currency: Currency) throws(StatementError) -> Int64 {
            let v = raw(name) ?? ""
            if v.isEmpty { return 0 }
            guard let m = Amounts.minorUnits(v, currency) else {
                throw fail(
                    name, "\"\(v)\" is not an amount of \(currency.code) (at most \(currency.exponent) decimals)")
            }
            return m
        }

        /// In millionths of the major unit (a fee to five decimals: `0.32001` is 320010).
        func micros(_ name: String, _ currency: Currency) throws(StatementError) -> Int64 {
            let v = raw(name) ?? ""
            if v.isEmpty { return 0 }
            guard let m = Amounts.micros(v) else {
                throw fail(name, "\"\(v)\" is not an amount of \(currency.code) (at most six decimals)")
            }
            return m
        }

        func fail(_ name: String, _ message: String) -> StatementError {
            StatementError(line: line, column: columns[name].map { $0 + 1 }, field: name, message)
        }
    }

    /// The bill's lines, split as WeChat writes them: a header row's names at commas, a backtick
    /// row's fields at each comma followed by a backtick (a field's own commas stay in it).
    static func rows(_ text: String) -> [(line: Int, fields: [String])] {
        var out: [(Int, [String])] = []
        // "\r\n" is one Character in Swift: split at any line break.
        for (i, l) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            if l.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            if l.hasPrefix("`") {
                out.append(
                    (i + 1, l.components(separatedBy: ",`").enumerated().map { $0 == 0 ? String($1) : "`" + $1 }))
            } else {
                out.append(
                    (
                        i + 1,
                        l.split(separator: ",", omittingEmptySubsequences: false).map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                    ))
            }
        }
        return out
    }

    /// Which bill a header is: the sale amount's and the settlement's columns (v3 or v2), and
    /// whether it lists refunds (ALL and REFUND do; SUCCESS does not).
    struct Layout {
        let sale: String
        let listsRefunds: Bool
    }

    static func layout(_ columns: [String: Int], _ header: [String], refundBill: Bool) throws(StatementError) -> Layout
    {
        let sale = columns["订单金额"] != nil ? "订单金额" : columns["总金额"] != nil ? "总金额" : nil
        let missing = ["交易时间", "微信订单号", "商户订单号", "交易状态", "货币种类", "手续费"].filter { columns[$0] == nil }
        guard let sale, missing.isEmpty, !refundBill || columns["退款金额"] != nil else {
            let expected = (refundBill ? refundHeader : tradeHeader).joined(separator: ",")
            throw StatementError(
                line: 1, field: missing.first ?? (sale == nil ? "订单金额" : "退款金额"),
                "not a WeChat Pay \(refundBill ? "refund" : "trade") bill header: expected the API v3 header \(expected) "
                    + "(or the v2 one with 总金额, or the SUCCESS bill's without refund columns); found \(header.joined(separator: ","))"
            )
        }
        return Layout(sale: sale, listsRefunds: columns["退款金额"] != nil)
    }

    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let all = rows(text)
        guard let first = all.first else { throw StatementError(line: 1, "the bill is empty") }
        let refundBill = ctx.source == .wechatRefundBill
        let header = first.fields
        let columns = Dictionary(header.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let layout = try layout(columns, header, refundBill: refundBill)
        let rows = all.dropFirst().map { Row(fields: $0.fields, line: $0.line, columns: columns) }
        guard let summaryAt = rows.firstIndex(where: { $0.fields.first == summaryHeader[0] }) else {
            throw StatementError(
                line: (rows.last?.line ?? 1) + 1, "no summary rows (\(summaryHeader[0]),...) at the end of the bill")
        }
        guard summaryAt == rows.count - 2 else {
            throw StatementError(
                line: rows[summaryAt].line,
                "the summary header must be followed by exactly one summary row, at the end of the bill")
        }
        let details = Array(rows[..<summaryAt])
        let summaryColumns = Dictionary(
            rows[summaryAt].fields.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let summary = Row(fields: rows[summaryAt + 1].fields, line: rows[summaryAt + 1].line, columns: summaryColumns)
        var lines: [StatementLine] = []
        var sums: [String: Int64] = [:]
        var currency = Currency("CNY")!
        var apps: Set<String> = [], merchant: String?
        for (done, row) in details.enumerated() {
            ctx.read(done + 1, of: details.count)
            guard let c = Currency(try row.text("货币种类")) else {
                throw row.fail("货币种类", "\"\(row.raw("货币种类") ?? "")\" is not an ISO 4217 currency")
            }
            currency = c
            for detail in totalled where columns[detail] != nil {
                let value = feeColumns.contains(detail) ? try row.micros(detail, c) : try row.amount(detail, c)
                let (sum, overflow) = sums[detail, default: 0].addingReportingOverflow(value)
                guard !overflow else { throw row.fail(detail, "the column's sum up to this row is out of range") }
                sums[detail] = sum
            }
            if let app = row.optional("公众账号ID") { apps.insert(app) }
            merchant = merchant ?? row.optional("商户号")
            if let line = try detailLine(row, refundBill: refundBill, layout: layout, currency: c, ctx) {
                lines.append(line)
            }
        }
        try checkSummary(summary, count: details.count, sums: sums, currency: currency)
        return try ctx.statement(
            lines, offsetSeconds: beijingSeconds, app: ParseContext.statementApp(apps), merchant: merchant)
    }

    static func detailLine(
        _ row: Row, refundBill: Bool, layout: Layout, currency c: Currency, _ ctx: ParseContext
    ) throws(StatementError) -> StatementLine? {
        guard let time = Times.local(try row.text("交易时间"), offset: beijing) else {
            throw row.fail("交易时间", "\"\(row.raw("交易时间") ?? "")\" is not a time such as 2026-03-02 09:15:07")
        }
        let tx = try row.text("微信订单号")
        let state = try row.text("交易状态")
        // The fee as WeChat prints it, to five decimals of a yuan, exactly; negative on a refund (given back).
        let feeMicros = try row.micros("手续费", c)
        guard let fee = Money(storeAmount: abs(feeMicros), unit: .micros, currency: c) else {
            throw row.fail(
                "手续费",
                "\(Amounts.microsText(feeMicros, decimals: 5)) \(c.code) is out of range for a fee: check the bill's 手续费 column"
            )
        }
        var line: StatementLine
        if refundBill || (layout.listsRefunds && (state == "REFUND" || state == "REVOKED")) {
            // PROCESSING, ABNORMAL, CLOSED: no money returned.
            if let status = row.optional("退款状态"), status != "SUCCESS" { return nil }
            var at = time
            if let done = row.optional("退款成功时间") {
                guard let t = Times.local(done, offset: beijing) else {
                    throw row.fail("退款成功时间", "\"\(done)\" is not a time such as 2026-03-02 09:15:07")
                }
                at = t
            }
            // The refund as asked, coupons included (申请退款金额, as a sale is its 订单金额, and as the
            // refund's notification says it); 退款金额 is that less the non-recharge coupons' part.
            // The v2 bill has only 退款金额.
            let refunded = row.raw("申请退款金额") != nil ? "申请退款金额" : "退款金额"
            let amount =
                state == "REVOKED" && !refundBill ? try row.amount(layout.sale, c) : try row.amount(refunded, c)
            guard amount > 0 else {
                throw row.fail(refunded, "a refund of \(Amounts.text(amount, c)) \(c.code): must be more than zero")
            }
            line = ctx.line(row.line, kind: .refund, tx: tx, amount: Money(minorUnits: amount, currency: c), at: at)
            // Sales carry `0 as their refund ids; a refund names its own.
            line.refundId = row.optional("微信退款单号").flatMap { $0 == "0" ? nil : $0 }
        } else if state == "SUCCESS" {
            let amount = try row.amount(layout.sale, c)
            guard amount >= 0 else {
                throw row.fail(layout.sale, "a sale of \(Amounts.text(amount, c)) \(c.code): must not be negative")
            }
            line = ctx.line(row.line, kind: .sale, tx: tx, amount: Money(minorUnits: amount, currency: c), at: time)
            // Settled: 应结订单金额 (v3), else the total less the coupon (v2); the fee comes off it exactly.
            let settled =
                row.raw("应结订单金额") != nil
                ? try row.amount("应结订单金额", c)
                : amount - (try row.amount("代金券或立减优惠金额", c))
            if let net = Money(minorUnits: settled, currency: c).adding(feeMicros < 0 ? fee : fee.negated) {
                line.net = net.millionths < 0 ? Money(minorUnits: 0, currency: c) : net
            }
        } else {
            throw row.fail("交易状态", "\"\(state)\" is not a state a bill lists (SUCCESS, REFUND, REVOKED)")
        }
        if feeMicros != 0 { line.fee = fee }
        line.orderId = row.optional("商户订单号")
        line.productId = row.optional("商品名称")
        line.app = row.optional("公众账号ID")
        line.merchant = row.optional("商户号")
        return line
    }

    static func checkSummary(
        _ summary: Row, count: Int, sums: [String: Int64], currency: Currency
    ) throws(StatementError) {
        guard let n = Int(try summary.text(summaryHeader[0])) else {
            throw summary.fail(summaryHeader[0], "\"\(summary.raw(summaryHeader[0]) ?? "")\" is not a count")
        }
        guard n == count else {
            throw summary.fail(summaryHeader[0], "says \(n) rows, but the bill has \(count) detail rows")
        }
        for (total, detail) in totals where summary.columns[total] != nil {
            let fee = feeColumns.contains(detail)
            let stated = fee ? try summary.micros(total, currency) : try summary.amount(total, currency)
            let sum = sums[detail] ?? 0
            guard stated == sum else {
                let show = { (v: Int64) in fee ? Amounts.microsText(v, decimals: 5) : Amounts.text(v, currency) }
                throw summary.fail(total, "says \(show(stated)), but the detail rows' \(detail) add up to \(show(sum))")
            }
        }
    }
}
