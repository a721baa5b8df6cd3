import LedgerCore
import LedgerDomain

/// A delimited file's rows, read by header name, with errors naming line, column and header.
struct Table {
    let header: [String]
    let rows: [(fields: [String], line: Int)]
    let columns: [String: Int]

    /// Columns are found by name whatever their case (`Sku Id`, `SKU ID`), and by the other names
    /// `aliases` gives (a report's header as another year wrote it: `Sales or Return` for `Sale or Return`).
    init(
        _ text: String, _ dialect: DelimitedText.Dialect, required: [String], aliases: [String: [String]] = [:]
    ) throws(StatementError) {
        var records = try DelimitedText.records(text, dialect)[...]
        header = (records.popFirst()?.fields ?? []).map { $0.trimmingCharacters(in: .whitespaces) }
        let byName = Dictionary(header.enumerated().map { ($1.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var columns: [String: Int] = [:]
        for (name, others) in aliases {
            if let i = ([name] + others).lazy.compactMap({ byName[$0.lowercased()] }).first { columns[name] = i }
        }
        for (i, name) in header.enumerated() where columns[name] == nil { columns[name] = i }
        for name in required where columns[name] == nil {
            if let i = byName[name.lowercased()] {
                columns[name] = i
                continue
            }
            throw StatementError(
                line: 1, field: name,
                "the header has no column \(name)\((aliases[name] ?? []).map { " (nor \($0))" }.joined()): expected "
                    + "\(required.joined(separator: ", ")); found \(header.joined(separator: ", "))")
        }
        for (i, name) in header.enumerated() where columns[name.lowercased()] == nil { columns[name.lowercased()] = i }
        self.columns = columns
        rows = Array(records)
    }

    func value(_ row: (fields: [String], line: Int), _ name: String) -> String {
        guard let i = columns[name] ?? columns[name.lowercased()], i < row.fields.count else { return "" }
        return row.fields[i].trimmingCharacters(in: .whitespaces)
    }

    func fail(_ row: (fields: [String], line: Int), _ name: String, _ message: String) -> StatementError {
        StatementError(line: row.line, column: columns[name].map { $0 + 1 }, field: name, message)
    }

    func money(_ row: (fields: [String], line: Int), _ name: String, _ c: Currency) throws(StatementError) -> Int64 {
        let v = value(row, name)
        guard let m = Amounts.groupedMinorUnits(v, c) else {
            throw fail(
                row, name,
                "\"\(v)\" is not an amount of \(c.code) (at most \(c.exponent) decimals"
                    + (v.contains(",")
                        ? "; a comma only groups thousands, as in 1,234.56: a decimal comma is refused, not guessed;"
                            + " download the report again, or export it with a point as the decimal mark)"
                        : ")"))
        }
        return m
    }

    func currency(_ row: (fields: [String], line: Int), _ name: String) throws(StatementError) -> Currency {
        guard let c = Currency(value(row, name)) else {
            throw fail(row, name, "\"\(value(row, name))\" is not an ISO 4217 currency")
        }
        return c
    }
}

/// App Store Connect financial report (tab-separated): one row per product, country, price and
/// sale or return, then a blank line and `Total_Rows`, `Total_Amount`, `Total_Units` rows, checked
/// against the rows. Rows are aggregates (no transaction ids): they feed revenue, not the per-
/// transaction findings. Amount: Customer Price x |Quantity| in the Customer Currency; net: Extended
/// Partner Share in the Partner Share Currency. Dates are MM/DD/YYYY (the fiscal period).
enum AppStoreFinance {
    static let required = [
        "Start Date", "End Date", "Vendor Identifier", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Sale or Return", "Customer Price", "Customer Currency",
    ]
    /// The names other years' reports give these columns.
    static let aliases = ["Sale or Return": ["Sales or Return"], "Start Date": ["Begin Date"]]

    static func date(_ text: String) -> Timestamp? {
        let p = text.split(separator: "/")
        guard p.count == 3, p[0].count == 2, p[1].count == 2, p[2].count == 4 else { return nil }
        return Timestamp("\(p[2])-\(p[0])-\(p[1])T00:00:00Z")
    }

    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let table = try Table(text, .tab, required: required, aliases: aliases)
        var lines: [StatementLine] = []
        var totals: [String: (value: String, line: Int, column: Int)] = [:]
        var units: Int64 = 0, amount: Int64 = 0
        var shareCurrencies: Set<String> = []
        var period: (Timestamp, Timestamp)?
        for (done, row) in table.rows.enumerated() {
            ctx.read(done + 1, of: table.rows.count)
            let first = row.fields.first?.trimmingCharacters(in: .whitespaces) ?? ""
            if first.hasPrefix("Total_") {
                totals[first] = (row.fields.count > 1 ? row.fields[1] : "", row.line, 2)
                continue
            }
            if row.fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
            guard totals.isEmpty else { throw StatementError(line: row.line, "a report row after the Total rows") }
            guard let start = date(table.value(row, "Start Date")) else {
                throw table.fail(row, "Start Date", "not a date such as 03/01/2026")
            }
            guard let end = date(table.value(row, "End Date")) else {
                throw table.fail(row, "End Date", "not a date such as 03/28/2026")
            }
            period = period ?? (start, Timestamp(microsecondsSince1970: end.microseconds + Times.day))
            guard let q = Int64(table.value(row, "Quantity")) else {
                throw table.fail(row, "Quantity", "not a whole number")
            }
            let c = try table.currency(row, "Customer Currency"), sc = try table.currency(row, "Partner Share Currency")
            let price = try table.money(row, "Customer Price", c)
            let ext = try table.money(row, "Extended Partner Share", sc)
            let sr = table.value(row, "Sale or Return")
            guard sr == "S" || sr == "R" else {
                throw table.fail(row, "Sale or Return", "\"\(sr)\" is neither S nor R")
            }
            // Apple's Total_Units counts the units sold: returns are not subtracted from it.
            if sr == "S" {
                let (sum, overflow) = units.addingReportingOverflow(q)
                guard !overflow else {
                    throw table.fail(row, "Quantity", "the units' sum up to this row is out of range")
                }
                units = sum
            }
            let (sum, overflow) = amount.addingReportingOverflow(ext)
            guard !overflow else {
                throw table.fail(row, "Extended Partner Share", "the sum up to this row is out of range")
            }
            amount = sum
            shareCurrencies.insert(sc.code)
            // A return row carries a negative quantity (and, in real reports, a negative price too): the
            // money returned is |price| x |quantity|.
            if sr == "R" && q > 0 {
                throw table.fail(row, "Quantity", "a return of \(q) units: a return's quantity is negative")
            }
            let (product, o) = price.magnitude.multipliedReportingOverflow(by: q.magnitude)
            guard !o, product <= UInt64(Money.maximumMinorUnits) else {
                throw table.fail(row, "Customer Price", "the price times the quantity is out of range")
            }
            let gross = Int64(product)
            var line = ctx.line(
                row.line, kind: sr == "S" ? .sale : .refund, tx: nil, amount: Money(minorUnits: gross, currency: c),
                at: start)
            line.quantity = q
            guard !table.value(row, "Vendor Identifier").isEmpty else {
                throw table.fail(row, "Vendor Identifier", "is empty (the product id)")
            }
            line.productId = table.value(row, "Vendor Identifier")
            line.net = Money(minorUnits: abs(ext), currency: sc)
            lines.append(line)
        }
        try check(
            totals, rows: lines.count, units: units, amount: amount,
            currency: shareCurrencies.count == 1 ? Currency(shareCurrencies.first!) : nil)
        return try ctx.statement(lines, fallback: period)
    }

    static func check(
        _ totals: [String: (value: String, line: Int, column: Int)], rows: Int, units: Int64, amount: Int64,
        currency: Currency?
    ) throws(StatementError) {
        guard let r = totals["Total_Rows"] else { throw StatementError("no Total_Rows row at the end of the report") }
        guard Int(r.value.trimmingCharacters(in: .whitespaces)) == rows else {
            throw StatementError(
                line: r.line, column: r.column, field: "Total_Rows", "says \(r.value), but the report has \(rows) rows")
        }
        if let u = totals["Total_Units"], Int64(u.value.trimmingCharacters(in: .whitespaces)) != units {
            throw StatementError(
                line: u.line, column: u.column, field: "Total_Units",
                "says \(u.value), but the units sold (the S rows' Quantity) add up to \(units)")
        }
        if let a = totals["Total_Amount"], let currency {
            guard Amounts.groupedMinorUnits(a.value, currency) == amount else {
                throw StatementError(
                    line: a.line, column: a.column, field: "Total_Amount",
                    "says \(a.value), but the rows' Extended Partner Share adds up to \(Amounts.text(amount, currency))"
                )
            }
        }
    }
}

/// Google Play earnings report (CSV): one row per charge, Google fee, refund and fee refund of an
/// order (`Description` is the order id), amounts signed as they move the merchant's money, in the
/// buyer's currency beside the merchant's. Charges are sales, charge refunds refunds, Google fees
/// fees and fee refunds fee refunds; tax rows are checked and not imported. Dates are
/// `Mar 2, 2026` with `9:15:07 AM PST` (or PDT, UTC).
enum GooglePlayEarnings {
    static let required = [
        "Description", "Transaction Date", "Transaction Time", "Transaction Type", "Product id",
        "Buyer Currency", "Amount (Buyer Currency)", "Merchant Currency", "Amount (Merchant Currency)",
    ]
    /// The names other years' reports give these columns.
    static let aliases = [
        "Description": ["Order Number"], "Sku Id": ["SKU ID", "Product SKU"],
        "Product id": ["Package ID", "Product ID"],
    ]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let zones: [String: String] = ["PST": "-08:00", "PDT": "-07:00", "UTC": "Z", "GMT": "Z"]

    static func time(_ date: String, _ time: String) -> Timestamp? {
        let d = date.replacingOccurrences(of: ",", with: "").split(separator: " ")
        let t = time.split(separator: " ")
        guard d.count == 3, let m = months.firstIndex(of: String(d[0])), let day = Int(d[1]), let year = Int(d[2]),
            t.count == 3, let zone = zones[String(t[2])]
        else { return nil }
        let hms = t[0].split(separator: ":").compactMap { Int($0) }
        guard hms.count == 3, (1...12).contains(hms[0]), t[1] == "AM" || t[1] == "PM" else { return nil }
        let hour = hms[0] % 12 + (t[1] == "PM" ? 12 : 0)
        func p(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return Timestamp("\(year)-\(p(m + 1))-\(p(day))T\(p(hour)):\(p(hms[1])):\(p(hms[2]))\(zone)")
    }

    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let table = try Table(text, .csv, required: required, aliases: aliases)
        var lines: [StatementLine] = []
        var apps: Set<String> = []
        var months: (first: Int, last: Int)?  // year * 12 + month - 1
        for (done, row) in table.rows.enumerated() where !row.fields.allSatisfy({ $0.isEmpty }) {
            ctx.read(done + 1, of: table.rows.count)
            let type = table.value(row, "Transaction Type")
            let kind: StatementLineKind?
            switch type {
            case "Charge": kind = .sale
            case "Charge refund": kind = .refund
            case "Google fee": kind = .fee
            case "Google fee refund": kind = .feeRefund
            case "Tax", "Tax refund": kind = nil
            default: kind = .other  // a type this version does not know: kept as a line of its own, in no figure
            }
            guard let at = time(table.value(row, "Transaction Date"), table.value(row, "Transaction Time")) else {
                throw table.fail(row, "Transaction Time", "not a time such as Mar 2, 2026 9:15:07 AM PST")
            }
            let c = try table.currency(row, "Buyer Currency")
            let amount = try table.money(row, "Amount (Buyer Currency)", c)
            let mc = try table.currency(row, "Merchant Currency")
            _ = try table.money(row, "Amount (Merchant Currency)", mc)
            let order = table.value(row, "Description")
            guard !order.isEmpty else { throw table.fail(row, "Description", "is empty (the order id)") }
            guard let kind else { continue }
            if let m = month(table.value(row, "Transaction Date")) {
                let k = m.year * 12 + m.month - 1
                months = (min(months?.first ?? k, k), max(months?.last ?? k, k))
            }
            let sign: Int64 = kind == .sale || kind == .feeRefund ? 1 : -1
            guard kind == .other || amount * sign >= 0 else {
                throw table.fail(
                    row, "Amount (Buyer Currency)",
                    "a \(type) of \(Amounts.text(amount, c)) \(c.code) has the wrong sign")
            }
            var line = ctx.line(
                row.line, kind: kind, tx: order, amount: Money(minorUnits: abs(amount), currency: c), at: at)
            if kind == .other { line.storeKind = type }
            // The product is the Sku Id; `Product id` is the app's package name.
            let sku = table.value(row, "Sku Id"), package = table.value(row, "Product id")
            line.productId = sku.isEmpty ? nil : sku
            line.app = package.isEmpty ? nil : package
            if let app = line.app { apps.insert(app) }
            lines.append(line)
        }
        // The report's month (or months), read in Google's own zone, Pacific time.
        let period = months.map {
            (
                pacificMonthStart($0.first / 12, $0.first % 12 + 1),
                pacificMonthStart(($0.last + 1) / 12, ($0.last + 1) % 12 + 1)
            )
        }
        return try ctx.statement(lines, fallback: period, app: ParseContext.statementApp(apps))
    }

    static func month(_ date: String) -> (year: Int, month: Int)? {
        let d = date.replacingOccurrences(of: ",", with: "").split(separator: " ")
        guard d.count == 3, let m = months.firstIndex(of: String(d[0])), let year = Int(d[2]) else { return nil }
        return (year, m + 1)
    }

    /// Midnight of the first of `month` in Los Angeles: PDT (UTC-7) from April to November, PST
    /// (UTC-8) otherwise (daylight time starts in March after the first and ends in November after it).
    static func pacificMonthStart(_ year: Int, _ month: Int) -> Timestamp {
        let offset = (4...11).contains(month) ? "-07:00" : "-08:00"
        return Timestamp("\(year)-\(month < 10 ? "0" : "")\(month)-01T00:00:00\(offset)")!
    }
}
