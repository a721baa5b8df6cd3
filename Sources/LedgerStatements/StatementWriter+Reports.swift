import LedgerCore
import LedgerDomain

extension StatementWriter {
    static let earningsHeader = [
        "Description", "Transaction Date", "Transaction Time", "Tax Type", "Transaction Type", "Refund Type",
        "Product Title", "Product id", "Product Type", "Sku Id", "Hardware", "Buyer Country", "Buyer State",
        "Buyer Postal Code", "Buyer Currency", "Amount (Buyer Currency)", "Currency Conversion Rate",
        "Merchant Currency", "Amount (Merchant Currency)",
    ]

    /// A Google Play earnings report: each sale as a Charge and its Google fee, each refund as a
    /// Charge refund and its Google fee refund (fees from the lines' `fee`), times in Pacific Standard Time.
    public static func googleplayEarnings(_ lines: [StatementLine], packageName: String) -> String {
        var out = earningsHeader.joined(separator: ",") + "\n"
        let sorted = lines.sorted {
            ($0.at, $0.kind, $0.transactionId ?? "") < ($1.at, $1.kind, $1.transactionId ?? "")
        }
        for l in sorted where l.kind == .sale || l.kind == .refund {
            guard let amount = l.amount else { continue }
            let sale = l.kind == .sale
            out += earningsRow(
                l, sale ? "Charge" : "Charge refund", sale ? amount.minorUnits : -amount.minorUnits, amount.currency,
                packageName)
            if let fee = l.fee {
                out += earningsRow(
                    l, sale ? "Google fee" : "Google fee refund", sale ? -fee.minorUnits : fee.minorUnits, fee.currency,
                    packageName)
            }
        }
        return out
    }

    static func earningsRow(
        _ l: StatementLine, _ type: String, _ minor: Int64, _ c: Currency, _ package: String
    ) -> String {
        let pst = Timestamp(microsecondsSince1970: l.at.microseconds - 8 * 3_600_000_000).iso8601
        let months = GooglePlayEarnings.months
        let month = months[Int(pst.dropFirst(5).prefix(2))! - 1]
        let day = Int(pst.dropFirst(8).prefix(2))!, year = String(pst.prefix(4))
        let h = Int(pst.dropFirst(11).prefix(2))!
        let time = "\(h % 12 == 0 ? 12 : h % 12):\(pst.dropFirst(14).prefix(5)) \(h < 12 ? "AM" : "PM") PST"
        let amount = Amounts.text(minor, c)
        let fields = [
            l.transactionId ?? "", "\"\(month) \(day), \(year)\"", time, "", type,
            type == "Charge refund" ? "Full" : "",
            l.productId ?? "", package, "inapp", l.productId ?? "", "", "CN", "", "", c.code, amount, "1.000000",
            c.code, amount,
        ]
        return fields.joined(separator: ",") + "\n"
    }

    static let financeHeader = [
        "Start Date", "End Date", "UPC", "ISRC/ISBN", "Vendor Identifier", "Quantity", "Partner Share",
        "Extended Partner Share", "Partner Share Currency", "Sales or Return", "Apple Identifier",
        "Artist/Show/Developer/Author", "Title", "Label/Studio/Network/Developer/Publisher", "Grid",
        "Product Type Identifier", "ISAN/Other Identifier", "Country Of Sale", "Pre-order Flag", "Promo Code",
        "Customer Price", "Customer Currency",
    ]

    /// An App Store financial report for the period, as Apple writes it: sales and returns of the
    /// lines aggregated by product, currency and price (a return with a negative quantity and price),
    /// a made-up partner share of 70% (rounded down per unit), and the Total rows right after them
    /// (Total_Units counts the units sold; returns are not subtracted).
    public static func appstoreFinance(_ lines: [StatementLine], from: Timestamp, to: Timestamp) -> String {
        struct Key: Hashable, Comparable {
            var product: String, currency: String, price: Int64, sale: Bool
            static func < (a: Key, b: Key) -> Bool {
                (a.product, a.currency, a.price, a.sale ? 0 : 1) < (b.product, b.currency, b.price, b.sale ? 0 : 1)
            }
        }
        var groups: [Key: Int64] = [:]
        var currencies: [String: Currency] = [:]
        for l in lines where l.isRevenue && (l.kind == .sale || l.kind == .refund) {
            guard let a = l.amount else { continue }
            let q = max(1, l.quantity ?? 1)
            currencies[a.currency.code] = a.currency
            groups[
                Key(
                    product: l.productId ?? "", currency: a.currency.code, price: a.minorUnits / q,
                    sale: l.kind == .sale), default: 0] += q
        }
        func date(_ t: Timestamp) -> String {
            let s = t.iso8601
            return "\(s.dropFirst(5).prefix(2))/\(s.dropFirst(8).prefix(2))/\(s.prefix(4))"
        }
        let last = Timestamp(microsecondsSince1970: to.microseconds - Times.day)
        var out = financeHeader.joined(separator: "\t") + "\n"
        var units: Int64 = 0, total: Int64 = 0
        for key in groups.keys.sorted() {
            let c = currencies[key.currency]!
            let q = key.sale ? groups[key]! : -groups[key]!
            let share = key.price * 7 / 10
            if key.sale { units += q }
            total += share * q
            let fields = [
                date(from), date(last), "", key.product, key.product, String(q), Amounts.text(share, c),
                Amounts.text(share * q, c),
                c.code, key.sale ? "S" : "R", "6443210987", "Example Studio", key.product, "", "", "IA1", "", "CN", "",
                "",
                Amounts.text(key.sale ? key.price : -key.price, c), c.code,
            ]
            out += fields.joined(separator: "\t") + "\n"
        }
        let currency = currencies.count == 1 ? currencies.values.first! : Currency("USD")!
        out += "Total_Rows\t\(groups.count)\nTotal_Amount\t\(Amounts.text(total, currency))\nTotal_Units\t\(units)\n"
        return out
    }
}
