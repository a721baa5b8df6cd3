import LedgerCore
import LedgerDomain

/// One store file to write and import: its name, source, text and the period it covers (when the
/// file does not say).
public struct StatementFileText: Sendable, Hashable {
    public var name: String
    public var source: StatementSource
    public var text: String
    public var from: Timestamp?
    public var to: Timestamp?

    /// Parses it as `ledger import statement` would.
    public func parse() throws(StatementError) -> StatementFile {
        try StatementParser.parse(
            Array(text.utf8), source: source, options: StatementOptions(periodStart: from, periodEnd: to))
    }
}

extension StatementWriter {
    /// The files the stores would publish for these lines: a WeChat Pay trade bill per Beijing day
    /// given, the App Store history of each app and the financial report, the Google Play earnings
    /// report and voided purchases, each covering `[from, to)`.
    public static func files(
        wechatDays: [(day: Timestamp, lines: [StatementLine])], appstore: [StatementLine], googleplay: [StatementLine],
        from: Timestamp, to: Timestamp, bundleId: String, packageName: String,
        wechatAppId: String, wechatMerchant: String
    ) -> [StatementFileText] {
        var out: [StatementFileText] = []
        for (day, lines) in wechatDays {
            let date = Timestamp(microsecondsSince1970: day.microseconds + WeChatBill.beijingSeconds * 1_000_000)
                .iso8601.prefix(10)
            out.append(
                StatementFileText(
                    name: "wechat-tradebill-\(date).csv", source: .wechatTradeBill,
                    text: wechatBill(lines, refundBill: false, appId: wechatAppId, merchantId: wechatMerchant),
                    from: day, to: Timestamp(microsecondsSince1970: day.microseconds + Times.day)))
        }
        // The App Store Server API answers per app: one history for each app the lines name.
        let apps = Set(appstore.compactMap(\.app)).subtracting([bundleId]).sorted()
        out.append(
            StatementFileText(
                name: "appstore-history.json", source: .appstoreHistory,
                text: appstoreHistory(appstore.filter { $0.app == nil || $0.app == bundleId }, bundleId: bundleId),
                from: from, to: to))
        for app in apps {
            out.append(
                StatementFileText(
                    name: "appstore-history-\(app).json", source: .appstoreHistory,
                    text: appstoreHistory(appstore.filter { $0.app == app }, bundleId: app), from: from, to: to))
        }
        out.append(
            StatementFileText(
                name: "appstore-finance.tsv", source: .appstoreFinance,
                text: appstoreFinance(appstore, from: from, to: to)))
        out.append(
            StatementFileText(
                name: "googleplay-earnings.csv", source: .googleplayEarnings,
                text: googleplayEarnings(googleplay, packageName: packageName), from: from, to: to))
        out.append(
            StatementFileText(
                name: "googleplay-voided.json", source: .googleplayVoided, text: googleplayVoided(googleplay),
                from: from, to: to))
        return out
    }
}
