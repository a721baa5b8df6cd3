import Foundation
import Testing
import LedgerCore
import LedgerDomain
@testable import LedgerStatements

/// The stores' files, parsed and validated: each source's sample in schema/examples/statements,
/// malformed files refused with the line and column named, and the writers' files parsing back.
@Suite("Statement files")
struct StatementParserTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("schema/examples/statements")

    static func sample(
        _ name: String, _ source: StatementSource, _ options: StatementOptions = StatementOptions()
    ) throws -> StatementFile {
        let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
        return try StatementParser.parse(bytes, source: source, options: options)
    }

    static func money(_ minor: Int64, _ code: String = "CNY") -> Money {
        Money(minorUnits: minor, currency: Currency(code)!)
    }

    @Test("WeChat Pay trade bill: sales with fees, a refund, the summary rows checked, the Beijing day as the period")
    func wechatTradeBill() throws {
        let f = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill)
        #expect(f.lines.map(\.kind) == [.sale, .sale, .refund, .sale])
        #expect(f.lines.map(\.line) == [2, 3, 4, 5])
        #expect(
            f.lines[0].amount == Self.money(3000) && f.lines[0].fee == Self.money(18)
                && f.lines[0].orderId == "wx_20260302_0101")
        #expect(f.lines[0].at == Timestamp("2026-03-02T01:14:31Z"))
        #expect(f.lines[2].refundId == "50300001122026030200000001" && f.lines[2].amount == Self.money(1000))
        #expect(
            f.imported.periodStart == Timestamp("2026-03-01T16:00:00Z")
                && f.imported.periodEnd == Timestamp("2026-03-02T16:00:00Z"))
        // Shown as the bill's Beijing day, not as two UTC afternoons.
        #expect(
            f.imported.source.period(f.imported.periodStart, f.imported.periodEnd)
                == "2026-03-02 00:00 to 2026-03-03 00:00 UTC+08:00")
        #expect(f.imported.app == "wx5f0e6a0b9c8d7e6f" && f.imported.merchant == "1900000109")
        // The lines add up to the bill's own totals (应结订单总金额 128.00, 退款总金额 10.00).
        #expect(f.lines.filter { $0.kind == .sale }.compactMap(\.amount?.minorUnits).reduce(0, +) == 12800)
    }

    /// A merchant's bill lists the sales of every appid it serves, an earnings report every app of
    /// the account: a statement whose rows name several apps is of none (the whole channel), so
    /// that a payment of any of them that it lacks is judged, not only the first row's app's.
    @Test func aStatementOfSeveralAppsIsOfTheWholeChannel() throws {
        let bill = try Self.text("wechat-tradebill-2026-03-02.csv")
        let two = try StatementParser.parse(
            Array(Self.replacingLast(bill, "wx5f0e6a0b9c8d7e6f", with: "wx00000000000000bb").utf8),
            source: .wechatTradeBill)
        #expect(two.imported.app == nil && two.imported.merchant == "1900000109")
        let report = try Self.text("googleplay-earnings-2026-03.csv")
        let apps = try StatementParser.parse(
            Array(Self.replacingLast(report, "com.example.android", with: "com.example.other").utf8),
            source: .googleplayEarnings)
        #expect(apps.imported.app == nil && apps.lines.last?.app == "com.example.other")
        // One app named: the statement is that app's, as before.
        #expect(
            try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill).imported.app == "wx5f0e6a0b9c8d7e6f")
    }

    /// Sums and times beyond 64 bits are refused with the row and field named, never a trap.
    @Test func numbersBeyondRangeAreRefusedNotATrap() throws {
        // A WeChat bill: ten sales whose fee (in millionths of a yuan) sums past Int64.
        let bill = try Self.text("wechat-tradebill-2026-03-02.csv").split(whereSeparator: \.isNewline).map(String.init)
        let sale = bill[1].replacingOccurrences(of: "`0.18000,", with: "`999999999999.00000,")
        let fees = ([bill[0]] + Array(repeating: sale, count: 10) + bill.suffix(2)).joined(separator: "\n") + "\n"
        let wechat = Self.refusal(fees, .wechatTradeBill)
        #expect(wechat?.field == "手续费" && wechat?.line != nil, "\(String(describing: wechat?.description))")
        // An App Store financial report: units that sum past Int64.
        let report = try Self.text("appstore-finance-2026-03.tsv").split(whereSeparator: \.isNewline).map(String.init)
        let huge = report[1].split(separator: "\t", omittingEmptySubsequences: false).enumerated().map {
            $0.offset == 5 ? "9223372036854775807" : $0.offset == 20 ? "0.00" : String($0.element)
        }.joined(separator: "\t")
        let units = Self.refusal(
            ([report[0], huge, huge] + report.dropFirst(2)).joined(separator: "\n"), .appstoreFinance)
        #expect(units?.field == "Quantity" && units?.line == 3, "\(String(describing: units?.description))")
        // An App Store history whose purchase date is past what microseconds hold.
        let history = #"""
            {"bundleId":"com.example.purchases","environment":"Production","hasMore":false,"transactions":[{"transactionId":"1",\#
            "originalTransactionId":"1","bundleId":"com.example.purchases","productId":"p","purchaseDate":99999999999999999,\#
            "quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","environment":"Production","price":990,"currency":"USD"}]}
            """#
        #expect(Self.refusal(history, .appstoreHistory)?.description.contains("purchaseDate") == true)
    }

    static func replacingLast(_ text: String, _ old: String, with new: String) -> String {
        guard let r = text.range(of: old, options: .backwards) else { return text }
        return text.replacingCharacters(in: r, with: new)
    }

    @Test(
        "WeChat Pay bills as WeChat writes them: JSON with commas and quotes in 商户数据包, refund ids `0 on sales, fees to five decimals kept exactly"
    )
    func wechatRealShape() throws {
        let f = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill)
        #expect(
            f.lines[1].fee?.decimalText == "0.408" && f.lines[1].fee?.minorUnits == 40
                && f.lines[1].fee?.fraction == 800_000)
        #expect(f.lines[1].net?.decimalText == "67.592")
        #expect(
            f.lines[0].refundId == nil && f.lines[0].productId == "wx_coins_300"
                && f.lines[2].refundId == "50300001122026030200000001")
        #expect(f.lines[2].fee?.decimalText == "0.06")
        // The same bill with a BOM and bare line feeds reads the same lines.
        let text = try Self.text("wechat-tradebill-2026-03-02.csv").replacingOccurrences(of: "\r\n", with: "\n")
        let again = try StatementParser.parse(Array(("\u{FEFF}" + text).utf8), source: .wechatTradeBill)
        #expect(again.lines.map(\.amount) == f.lines.map(\.amount) && again.lines.map(\.fee) == f.lines.map(\.fee))
        // A non-zero fifth decimal is kept; one beyond the sixth is refused, naming the field.
        let fine = Self.refusal(Self.replacing(text, "`0.40800", "`0.40801", "`0.70800", "`0.70801"), .wechatTradeBill)
        #expect(fine == nil, "\(fine.map(\.description) ?? "")")
        let tooFine = Self.refusal(text.replacingOccurrences(of: "`0.40800", with: "`0.4080001"), .wechatTradeBill)
        #expect(tooFine?.field == "手续费" && tooFine?.line == 3)
    }

    static func replacing(_ text: String, _ pairs: String...) -> String {
        var t = text
        for i in stride(from: 0, to: pairs.count - 1, by: 2) {
            t = t.replacingOccurrences(of: pairs[i], with: pairs[i + 1])
        }
        return t
    }

    @Test(
        "a gzipped bill (WeChat's tar_type=GZIP) is the bill it holds: same lines, same digest; a corrupt one is refused"
    )
    func gzipped() throws {
        let plain = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill)
        let zipped = try Self.sample("wechat-tradebill-2026-03-02.csv.gz", .wechatTradeBill)
        #expect(zipped.lines == plain.lines && zipped.imported.digest == plain.imported.digest)
        // Stored and fixed-Huffman blocks (gzip -0, and a short text), besides the sample's dynamic ones.
        let text = Array("hello, hello, hello WeChat bill\n".utf8)
        for b64 in [
            "H4sIAAAAAAAEAwEgAN//aGVsbG8sIGhlbGxvLCBoZWxsbyBXZUNoYXQgYmlsbApe2EfmIAAAAA==",
            "H4sIAAAAAAACA8tIzcnJ11HIQKIUwlOdMxJLFJIyc3K4AF7YR+YgAAAA",
        ] {
            #expect(try Gzip.decompress([UInt8](Data(base64Encoded: b64)!)) == text)
        }
        var corrupt = [UInt8](
            try Data(contentsOf: Self.folder.appendingPathComponent("wechat-tradebill-2026-03-02.csv.gz")))
        corrupt[corrupt.count / 2] ^= 0x55
        do throws(StatementError) {
            _ = try StatementParser.parse(corrupt, source: .wechatTradeBill)
            Issue.record("a corrupt gzip file was accepted")
        } catch { #expect(error.message.contains("does not decompress")) }
    }

    @Test(
        "a zipped report (Google's Cloud Storage bucket) is the file it holds, deflated or stored; a corrupt one or one of several files is refused"
    )
    func zipped() throws {
        for (zip, csv) in [
            ("googleplay-earnings-2026-03.zip", "googleplay-earnings-2026-03.csv"),
            ("googleplay-earnings-2026-04-stored.zip", "googleplay-earnings-2026-04.csv"),
        ] {
            let plain = try Self.sample(csv, .googleplayEarnings)
            let zipped = try Self.sample(zip, .googleplayEarnings)
            #expect(zipped.lines == plain.lines && zipped.imported.digest == plain.imported.digest, "\(zip)")
        }
        let bytes = [UInt8](
            try Data(contentsOf: Self.folder.appendingPathComponent("googleplay-earnings-2026-03.zip")))
        var corrupt = bytes
        corrupt[150] ^= 0x55  // inside the deflated data
        // Two files: the same entry twice in the central directory.
        var two = bytes
        let end = two.count - 22
        two[end + 8] = 2
        two[end + 10] = 2
        let directory = Int(two[end + 16]) | Int(two[end + 17]) << 8
        let entry = Array(bytes[directory..<end])
        two.insert(contentsOf: entry, at: end)
        two[end + entry.count + 12] = UInt8((entry.count * 2) & 0xFF)
        two[end + entry.count + 13] = UInt8((entry.count * 2) >> 8)
        for (archive, says) in [(corrupt, "does not decompress"), (two, "holds 2 files")] {
            do throws(StatementError) {
                _ = try StatementParser.parse(archive, source: .googleplayEarnings)
                Issue.record("\(says): accepted")
            } catch { #expect(error.message.contains(says), "\(error.message)") }
        }
    }

    @Test("WeChat Pay SUCCESS bill (no refund columns) and the older v2 bill (总金额, a coupon, a five-column summary)")
    func wechatVariants() throws {
        let success = try Self.sample("wechat-tradebill-success-2026-03-03.csv", .wechatTradeBill)
        #expect(
            success.lines.map(\.kind) == [.sale, .sale]
                && success.lines.map(\.amount) == [Self.money(3000), Self.money(1234)])
        #expect(success.lines[1].fee?.decimalText == "0.07404" && success.lines[0].orderId == "wx_20260303_0201")
        #expect(
            success.imported.periodStart == Timestamp("2026-03-02T16:00:00Z")
                && success.imported.periodEnd == Timestamp("2026-03-03T16:00:00Z"))
        let v2 = try Self.sample("wechat-tradebill-v2-2026-03-04.csv", .wechatTradeBill)
        #expect(v2.lines.map(\.kind) == [.sale, .refund])
        #expect(
            v2.lines[0].amount == Self.money(3000) && v2.lines[0].net?.decimalText == "24.85"
                && v2.lines[0].fee == Self.money(15))
        #expect(v2.lines[1].amount == Self.money(3000) && v2.lines[1].refundId == "50300001122026030400000002")
        #expect(v2.lines[1].transactionId == "4200001900202603020000000101")
        // A header of no known variant says what was expected and what was found.
        let other = Self.refusal("时间,订单号,金额\r\n`2026-03-04 10:00:01,`1,`1.00\r\n", .wechatTradeBill)
        #expect(
            other?.line == 1 && other?.message.contains("expected the API v3 header 交易时间,") == true
                && other?.message.contains("found 时间,订单号,金额") == true, "\(other.map(\.description) ?? "")")
        // A SUCCESS bill lists no refunds: a REFUND row in one is refused.
        let refundInSuccess = Self.refusal(
            try Self.text("wechat-tradebill-success-2026-03-03.csv").replacingOccurrences(
                of: "`SUCCESS,", with: "`REFUND,"),
            .wechatTradeBill)
        #expect(refundInSuccess?.field == "交易状态")
    }

    @Test("WeChat Pay refund bill: only refunds that succeeded become lines; the refund's success time is its time")
    func wechatRefundBill() throws {
        let f = try Self.sample("wechat-refundbill-2026-03-02.csv", .wechatRefundBill)
        #expect(f.lines.count == 1)
        #expect(
            f.lines[0].kind == .refund && f.lines[0].amount == Self.money(1000)
                && f.lines[0].at == Timestamp("2026-03-02T08:02:47Z"))
    }

    /// A decoded two-transaction history page (the second's price and revocation as given).
    static func decodedHistory(price: Int64, revocation: String = "") -> String {
        let t = { (id: String, p: Int64, extra: String) in
            #"{"transactionId":"\#(id)","originalTransactionId":"\#(id)","bundleId":"com.example.purchases","productId":"com.example.coins60","purchaseDate":1772414411000,"quantity":1,"type":"Consumable","inAppOwnershipType":"PURCHASED","environment":"Production","price":\#(p),"currency":"USD"\#(extra)}"#
        }
        return #"{"bundleId":"com.example.purchases","environment":"Production","hasMore":false,"transactions":["#
            + t("1", 990, "") + "," + t("2", price, revocation) + "]}"
    }

    @Test(
        "App Store history as the API answers: signedTransactions read, prices from milliunits exactly, a REFUND_PRORATED refund of its share, a FAMILY_REVOKE of no money, family-shared copies with no revenue"
    )
    func appstoreHistory() throws {
        let f = try Self.sample("appstore-history.json", .appstoreHistory)
        #expect(f.lines.count == 7)
        #expect(
            f.lines[0].amount == Self.money(600) && f.lines[0].transactionId == "2000000901234501"
                && f.lines[0].line == 1)
        let refunds = f.lines.filter { $0.kind == .refund }
        #expect(refunds.map(\.transactionId) == ["2000000901234503", "2000000901234504"])
        // FAMILY_REVOKE: the family member's copy taken back, no money moved; the copy carries no revenue.
        #expect(refunds[0].amount == Self.money(0) && refunds[0].isRevenue == false)
        #expect(f.lines.first { $0.kind == .sale && $0.ownership == .familyShared }?.isRevenue == false)
        // REFUND_PRORATED with revocationPercentage 50000: half of 30.00.
        #expect(refunds[1].amount == Self.money(1500) && refunds[1].orderId == "7d1c1e8a-3f9b-4a51-9a55-2b8f0c6b8e11")
        #expect(f.lines.last?.amount == Self.money(99, "USD"))
        // No startDate/endDate in the API's answer: the whole UTC days of its lines.
        #expect(
            f.imported.periodStart == Timestamp("2026-03-02T00:00:00Z") && f.imported.app == "com.example.purchases")
    }

    @Test(
        "a history's signed transactions are kept for the verifier and recorded as not verified; verified, the record names the root, and is one event of its own"
    )
    func appstoreHistorySignatures() throws {
        let f = try Self.sample("appstore-history.json", .appstoreHistory)
        #expect(f.signed.count == 5 && f.signed[4].place == "signedTransactions[4]")
        #expect(
            f.signatures
                == StatementSignatures(
                    source: .appstoreHistory, digest: f.imported.digest, signed: 5, root: nil,
                    app: "com.example.purchases"))
        #expect(f.facts.last.map { if case .statementSignatures = $0 { true } else { false } } == true)
        let root = "sha256:" + String(repeating: "ab", count: 32)
        let v = f.verified(root: root)
        #expect(v.signatures?.root == root && v.signatures?.verified == true)
        // The statement and its lines are the same events; the signatures' record is another event.
        let (a, b) = (f.events(), v.events())
        #expect(Array(a.dropLast()) == Array(b.dropLast()) && a.last?.eventId != b.last?.eventId)
        #expect(
            b.last?.idempotencyKey == "statement:\(f.imported.digest):signatures:\(root)"
                && a.last?.idempotencyKey?.hasSuffix(":signatures:unverified") == true)
        // Decoded transactions and other sources carry no signatures.
        let decoded = try StatementParser.parse(Array(Self.decodedHistory(price: 990).utf8), source: .appstoreHistory)
        #expect(decoded.signed.isEmpty && decoded.signatures == nil)
        #expect(try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill).signatures == nil)
    }

    @Test("the book keeps a verification over a record of none, in either order")
    func signaturesInTheBook() throws {
        let f = try Self.sample("appstore-history.json", .appstoreHistory)
        let verified = f.verified(root: "sha256:" + String(repeating: "cd", count: 32))
        for order in [[f.facts, [verified.facts.last!]], [verified.facts, [f.facts.last!]]] {
            var p = Projections()
            for (i, fact) in order.joined().enumerated() {
                p.apply(fact, FactContext(position: Int64(i + 1), occurredAt: f.imported.periodEnd))
            }
            #expect(p.statements.statements[f.imported.digest]?.signatures?.verified == true)
        }
    }

    @Test(
        "paged answers are one statement: the App Store history's hasMore pages and Google's nextPageToken pages, in order"
    )
    func pages() throws {
        func bytes(_ name: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(name)))
        }
        let history = try StatementParser.parse(
            pages: [try bytes("appstore-history-page-1.json"), try bytes("appstore-history-page-2.json")],
            source: .appstoreHistory)
        #expect(history.lines.map(\.transactionId) == ["2000000901234601", "2000000901234602", "2000000901234603"])
        #expect(history.lines.map(\.line) == [1, 2, 3])
        #expect(
            history.imported.digest
                == SHA256.digest(
                    try bytes("appstore-history-page-1.json") + (try bytes("appstore-history-page-2.json"))))
        // One page alone, or the pages out of order, is refused: the history is not whole.
        let alone = Self.refusal(try Self.text("appstore-history-page-1.json"), .appstoreHistory)
        #expect(alone?.field == "hasMore" && alone?.message.contains("import its pages together") == true)
        let (page1, page2) = (try bytes("appstore-history-page-1.json"), try bytes("appstore-history-page-2.json"))
        do throws(StatementError) {
            _ = try StatementParser.parse(pages: [page2, page1], source: .appstoreHistory)
            Issue.record("pages out of order were accepted")
        } catch { #expect(error.message.hasPrefix("page 1: ") && error.field == "hasMore") }
        let voided = try StatementParser.parse(
            pages: [try bytes("googleplay-voided-page-1.json"), try bytes("googleplay-voided-page-2.json")],
            source: .googleplayVoided)
        #expect(voided.lines.map(\.transactionId) == ["GPA.3361-0400-0000-00001", "GPA.3361-0400-0000-00002"])
        #expect(
            voided.lines.map(\.voidedReason) == ["other", "fraud"]
                && voided.lines.map(\.voidedSource) == ["developer", "user"])
        #expect(
            Self.refusal(try Self.text("googleplay-voided-page-1.json"), .googleplayVoided)?.field
                == "tokenPagination.nextPageToken")
        // `pageInfo.totalResults` is the whole list's size, on every page.
        func counted(_ total: Int, _ pages: Int...) throws -> [[UInt8]] {
            try pages.map { k in
                Array(
                    try Self.text("googleplay-voided-page-\(k).json").replacingOccurrences(
                        of: "\"voidedPurchases\": [",
                        with: "\"pageInfo\": {\"totalResults\": \(total)}, \"voidedPurchases\": ["
                    ).utf8)
            }
        }
        #expect(try StatementParser.parse(pages: try counted(2, 1, 2), source: .googleplayVoided).lines.count == 2)
        let eachCountingItsOwn = try counted(1, 1, 2)
        do throws(StatementError) {
            _ = try StatementParser.parse(pages: eachCountingItsOwn, source: .googleplayVoided)
            Issue.record("pages each counting only their own entries were accepted")
        } catch {
            #expect(
                error.field == "pageInfo.totalResults"
                    && error.message.hasPrefix("page 1: says 1 voided purchases in all, but the 2 pages list 2"))
        }
        // A WeChat bill is one file.
        let bill = try bytes("wechat-tradebill-2026-03-02.csv")
        do throws(StatementError) {
            _ = try StatementParser.parse(pages: [bill, bill], source: .wechatTradeBill)
            Issue.record("a WeChat bill in two pages was accepted")
        } catch { #expect(error.message.contains("is one file")) }
    }

    @Test("Google voided purchases keep the token and why: a chargeback told apart; {} is no voids in the period given")
    func googleVoided() throws {
        let f = try Self.sample("googleplay-voided.json", .googleplayVoided)
        #expect(
            f.lines.map(\.voidedReason) == ["remorse", "chargeback"]
                && f.lines.map(\.voidedSource) == ["user", "google"])
        #expect(
            f.lines[1].isChargeback && f.lines[1].purchaseToken == "pmnaaoilgkcjdbjjkbnkloag.AO-J1OzQ7s1mXbq5Vw2"
                && f.lines[1].quantity == 1)
        let empty = try StatementParser.parse(
            Array("{}".utf8), source: .googleplayVoided,
            options: StatementOptions(
                periodStart: Timestamp("2026-03-01T00:00:00Z"), periodEnd: Timestamp("2026-04-01T00:00:00Z")))
        #expect(empty.lines.isEmpty && empty.imported.periodEnd == Timestamp("2026-04-01T00:00:00Z"))
        #expect(Self.refusal("{}", .googleplayVoided)?.message.contains("--from and --to") == true)
    }

    @Test("App Store financial report: aggregated rows, checked against Total_Rows, Total_Amount and Total_Units")
    func appstoreFinance() throws {
        let f = try Self.sample("appstore-finance-2026-03.tsv", .appstoreFinance)
        #expect(f.lines.count == 4 && f.lines.allSatisfy { $0.transactionId == nil })
        #expect(f.lines[0].amount == Self.money(412 * 600) && f.lines[0].net == Self.money(173_040))
        // A return as Apple writes it: negative quantity and price; the money returned is 3 x 30.00.
        #expect(f.lines[2].kind == .refund && f.lines[2].quantity == -3 && f.lines[2].amount == Self.money(9000))
        #expect(f.imported.periodEnd == Timestamp("2026-03-29T00:00:00Z"))
        // Other years' header ("Sale or Return") reads the same; a header without the column says what it expected and found.
        let text = try Self.text("appstore-finance-2026-03.tsv")
        let older = try StatementParser.parse(
            Array(text.replacingOccurrences(of: "Sales or Return", with: "Sale or Return").utf8),
            source: .appstoreFinance)
        #expect(older.lines.map(\.amount) == f.lines.map(\.amount))
        // Another region's report for the month: customer prices in several currencies, the partner share in euros.
        let euro = try Self.sample("appstore-finance-2026-03-euro.tsv", .appstoreFinance)
        #expect(euro.lines.map { $0.amount?.currency.code } == ["EUR", "EUR", "EUR", "CHF"])
        #expect(
            euro.lines[2].kind == .refund && euro.lines[2].amount == Self.money(198, "EUR")
                && euro.lines[3].net == Self.money(2220, "EUR"))
        #expect(euro.imported.periodStart == f.imported.periodStart && euro.imported.digest != f.imported.digest)
        let missing = Self.refusal(text.replacingOccurrences(of: "Sales or Return", with: "Type"), .appstoreFinance)
        #expect(
            missing?.field == "Sale or Return" && missing?.message.contains("(nor Sales or Return)") == true
                && missing?.message.contains("found Start Date") == true)
    }

    @Test("Google Play earnings: charges, fees and refunds per order; tax rows checked and left out")
    func googleplayEarnings() throws {
        let f = try Self.sample("googleplay-earnings-2026-03.csv", .googleplayEarnings)
        #expect(f.lines.map(\.kind) == [.sale, .fee, .sale, .fee, .refund, .feeRefund, .other])
        #expect(f.lines[0].at == Timestamp("2026-03-02T09:14:09Z") && f.lines[1].amount == Self.money(180))
        // The product is the Sku Id; the Product id column is the app's package name.
        #expect(
            f.lines[0].productId == "coins_120" && f.lines[0].app == "com.example.android"
                && f.imported.app == "com.example.android")
        // A type this version does not know is kept as a line of its own, never a refusal of the file.
        #expect(f.lines[6].storeKind == "Promotional credit" && f.lines[6].amount == Self.money(200))
        // The report's month, in Pacific time.
        #expect(
            f.imported.periodStart == Timestamp("2026-03-01T08:00:00Z")
                && f.imported.periodEnd == Timestamp("2026-04-01T07:00:00Z"))
        // Shown as the store means it: the Pacific month, its standard and daylight halves.
        #expect(
            f.imported.source.period(f.imported.periodStart, f.imported.periodEnd)
                == "2026-03-01 00:00 UTC-08:00 to 2026-04-01 00:00 UTC-07:00")
    }

    @Test(
        "Google Play earnings as this year's reports write them: base plan, offer and promotion columns after the amounts; a yen charge; the month in PDT"
    )
    func googleplayEarningsWithPlans() throws {
        let f = try Self.sample("googleplay-earnings-2026-04.csv", .googleplayEarnings)
        #expect(f.lines.map(\.kind) == [.sale, .fee, .sale, .fee])
        #expect(
            f.lines[0].productId == "vip" && f.lines[0].amount == Self.money(499, "USD")
                && f.lines[0].at == Timestamp("2026-04-01T07:30:41Z"))
        #expect(f.lines[2].amount == Self.money(160, "JPY") && f.lines[3].amount == Self.money(24, "JPY"))
        // The last charge, at 23:59 Pacific on 30 April, is April's: the period is the Pacific month.
        #expect(
            f.imported.periodStart == Timestamp("2026-04-01T07:00:00Z")
                && f.imported.periodEnd == Timestamp("2026-05-01T07:00:00Z"))
    }

    @Test(
        "App Store financial report as Apple's reference spells the header (Sale or Return, ISRC / ISBN, Country of Sale), a fiscal month across two calendar months"
    )
    func appstoreFinanceReferenceHeader() throws {
        let f = try Self.sample("appstore-finance-2026-04.tsv", .appstoreFinance)
        #expect(
            f.lines.map(\.kind) == [.sale, .refund] && f.lines[1].amount == Self.money(499, "USD")
                && f.lines[1].quantity == -1)
        #expect(f.lines[0].net == Self.money(7350, "USD") && f.lines[0].productId == "com.example.vip")
        #expect(
            f.imported.periodStart == Timestamp("2026-03-29T00:00:00Z")
                && f.imported.periodEnd == Timestamp("2026-05-03T00:00:00Z"))
    }

    @Test(
        "real text in the reports: a \" in an App Store title, a Google title over two lines, amounts grouped in thousands; a decimal comma refused"
    )
    func reportsAsPeopleWriteThem() throws {
        // Apple's reports are tab-separated and never quoted: a quote in a title is the title's.
        let finance = try Self.text("appstore-finance-2026-03.tsv")
        let quoted = try StatementParser.parse(
            Array(finance.replacingOccurrences(of: "\t300 Coins\t", with: "\t300 \"Gold\" Coins\t").utf8),
            source: .appstoreFinance)
        #expect(
            quoted.lines.map(\.amount)
                == (try Self.sample("appstore-finance-2026-03.tsv", .appstoreFinance)).lines.map(\.amount))
        // The report's total may be grouped as its rows may.
        let groupedTotal = finance.replacingOccurrences(of: "Total_Amount\t5006.40", with: "Total_Amount\t5,006.40")
        #expect(try StatementParser.parse(Array(groupedTotal.utf8), source: .appstoreFinance).lines.count == 4)
        // A quoted CSV field over two lines: every later line keeps its own number, in errors and on the lines.
        let earnings = try Self.text("googleplay-earnings-2026-03.csv")
        let twoLines = earnings.replacingOccurrences(
            of: ",VIP Weekly (Example),", with: ",\"VIP Weekly\n(Example)\",")
        let parsed = try StatementParser.parse(Array(twoLines.utf8), source: .googleplayEarnings)
        #expect(parsed.lines.map(\.line) == [2, 3, 4, 6, 10, 11, 12])
        let badTime = Self.refusal(
            twoLines.replacingOccurrences(of: "8:02:17 AM PST", with: "08:02:17"), .googleplayEarnings)
        #expect(badTime?.line == 10 && badTime?.field == "Transaction Time")
        // Thousands grouped with commas read as they are; a decimal comma is refused, not read 100 times too large.
        let grouped = earnings.replacingOccurrences(
            of: ",CNY,12.00,1.000000,CNY,12.00", with: ",CNY,\"1,012.00\",1.000000,CNY,\"1,012.00\"")
        #expect(
            try StatementParser.parse(Array(grouped.utf8), source: .googleplayEarnings).lines[0].amount
                == Self.money(101_200))
        let comma = Self.refusal(
            earnings.replacingOccurrences(of: "CNY,-1.80,1.000000", with: "CNY,\"-1,80\",1.000000"), .googleplayEarnings
        )
        #expect(
            comma?.line == 3 && comma?.field == "Amount (Buyer Currency)"
                && comma?.message.contains("a decimal comma is refused") == true)
        // In a currency of three decimals, 1,234 is either; refused too.
        #expect(Amounts.groupedMinorUnits("1,234", Currency("KWD")!) == nil)
        #expect(Amounts.groupedMinorUnits("1,234.500", Currency("KWD")!) == 1_234_500)
        #expect(Amounts.groupedMinorUnits("-12,345,678", Currency("JPY")!) == -12_345_678)
        for bad in ["1,99", "12,34.00", "1,2345", ",123", "1,,234", "1.234,56", "1.000,00", "12.500,00", "1,000.00,0"] {
            #expect(Amounts.groupedMinorUnits(bad, Currency("USD")!) == nil, "\(bad)")
        }
    }

    @Test("a WeChat Pay refund is the refund asked (申请退款金额), coupons included, as its sale is the order's amount")
    func wechatRefundWithACoupon() throws {
        // A 2.00 non-recharge coupon paid part of order 0087: 退款金额 (8.00) leaves it out; the refund was 10.00.
        let bill = try Self.text("wechat-tradebill-2026-03-02.csv")
        let coupon = Self.replacing(
            bill, "`Rwx_20260301_0087,`10.00,", "`Rwx_20260301_0087,`8.00,", "`4,`128.00,`10.00,", "`4,`128.00,`8.00,")
        let f = try StatementParser.parse(Array(coupon.utf8), source: .wechatTradeBill)
        let refund = try #require(f.lines.first { $0.kind == .refund })
        #expect(refund.amount == Self.money(1000))
    }

    @Test("Google Play voided purchases: refunds without an amount, totalResults checked")
    func googleplayVoided() throws {
        let f = try Self.sample("googleplay-voided.json", .googleplayVoided)
        #expect(f.lines.count == 2 && f.lines.allSatisfy { $0.kind == .refund && $0.amount == nil })
        #expect(f.lines[1].quantity == 1)
    }

    @Test("a re-parse gives the same facts and event ids; the digest names the file")
    func deterministic() throws {
        let a = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill),
            b = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill)
        #expect(a == b)
        #expect(a.events().map(\.eventId) == b.events().map(\.eventId))
        #expect(a.events().map(\.idempotencyKey) == b.events().map(\.idempotencyKey))
        #expect(Set(a.events().compactMap(\.idempotencyKey)).count == a.events().count)
        #expect(a.imported.digest.hasPrefix("sha256:"))
        #expect(throws: StatementError.self) {
            try Self.sample(
                "wechat-tradebill-2026-03-02.csv", .wechatTradeBill,
                StatementOptions(expectedDigest: "sha256:" + String(repeating: "0", count: 64)))
        }
        _ = try Self.sample(
            "wechat-tradebill-2026-03-02.csv", .wechatTradeBill, StatementOptions(expectedDigest: a.imported.digest))
        // WeChat publishes SHA-1 (`sha1sum` of the file), given with its name or bare.
        let sha1 = "e8e62b9608e06306141811946440fdaea48afd20"
        for given in ["sha1:" + sha1, sha1.uppercased(), String(a.imported.digest.dropFirst("sha256:".count))] {
            _ = try Self.sample(
                "wechat-tradebill-2026-03-02.csv", .wechatTradeBill, StatementOptions(expectedDigest: given))
        }
        for (given, says) in [
            ("sha1:" + String(repeating: "0", count: 40), "not the one the store sent"),
            (String(repeating: "0", count: 40), "not the one the store sent"),
            ("md5:" + String(repeating: "0", count: 32), "not a SHA-1 or SHA-256 digest"),
            (String(sha1.dropLast()), "not a SHA-1 or SHA-256 digest"),
        ] {
            do {
                _ = try Self.sample(
                    "wechat-tradebill-2026-03-02.csv", .wechatTradeBill, StatementOptions(expectedDigest: given))
                Issue.record("\(given) was accepted")
            } catch let error as StatementError {
                #expect(error.message.contains(says), "\(given): \(error.message)")
            }
        }
    }

    static func refusal(_ text: String, _ source: StatementSource) -> StatementError? {
        do {
            _ = try StatementParser.parse(Array(text.utf8), source: source)
            return nil
        } catch { return error }
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    @Test("malformed files are refused with the line and column named")
    func malformed() throws {
        let bill = try Self.text("wechat-tradebill-2026-03-02.csv")
        let badAmount = Self.refusal(bill.replacingOccurrences(of: "`0.40800", with: "`0.4x800"), .wechatTradeBill)
        #expect(badAmount?.line == 3 && badAmount?.column == 23 && badAmount?.field == "手续费")
        let badTotal = Self.refusal(bill.replacingOccurrences(of: "`0.70800", with: "`0.70801"), .wechatTradeBill)
        #expect(badTotal?.line == 7 && badTotal?.field == "手续费总金额")
        let badCount = Self.refusal(bill.replacingOccurrences(of: "`4,`128.00", with: "`5,`128.00"), .wechatTradeBill)
        #expect(badCount?.line == 7 && badCount?.column == 1)
        let noSummary = Self.refusal(bill.components(separatedBy: "总交易单数")[0], .wechatTradeBill)
        #expect(noSummary?.message.contains("summary") == true)
        let badState = Self.refusal(bill.replacingOccurrences(of: "`REFUND,", with: "`NOTPAY,"), .wechatTradeBill)
        #expect(badState?.line == 4 && badState?.field == "交易状态")
        let finance = try Self.text("appstore-finance-2026-03.tsv")
        let badUnits = Self.refusal(
            finance.replacingOccurrences(of: "Total_Units\t664", with: "Total_Units\t661"), .appstoreFinance)
        #expect(badUnits?.field == "Total_Units" && badUnits?.line == 8)
        let earnings = try Self.text("googleplay-earnings-2026-03.csv")
        let badTime = Self.refusal(
            earnings.replacingOccurrences(of: "6:40:55 PM PST", with: "18:40:55"), .googleplayEarnings)
        #expect(badTime?.line == 4 && badTime?.field == "Transaction Time")
        let history = Self.decodedHistory(price: 990)
        #expect(Self.refusal(history, .appstoreHistory) == nil)
        let badPrice = Self.refusal(Self.decodedHistory(price: -990), .appstoreHistory)
        #expect(badPrice?.field == "transactions[1].price" && badPrice?.line == 2)
        // A price below a whole minor unit is kept exactly, not refused.
        #expect(Self.refusal(Self.decodedHistory(price: 995), .appstoreHistory) == nil)
        let badProrate = Self.refusal(
            Self.decodedHistory(
                price: 990, revocation: #","revocationDate":1772708400000,"revocationType":"REFUND_PRORATED""#),
            .appstoreHistory)
        #expect(badProrate?.field == "transactions[1].revocationPercentage")
        let notJSON = Self.refusal("{\n  \"transactions\": [,]\n}", .appstoreHistory)
        #expect(notJSON?.line == 2 && notJSON?.column != nil)
        let voided = try Self.text("googleplay-voided.json")
        #expect(
            Self.refusal(
                voided.replacingOccurrences(of: "\"totalResults\": 2", with: "\"totalResults\": 3"), .googleplayVoided)?
                .field == "pageInfo.totalResults")
    }

    @Test("what the writers write parses back to the same lines")
    func roundTrip() throws {
        let lines = try Self.sample("wechat-tradebill-2026-03-02.csv", .wechatTradeBill).lines
        let text = StatementWriter.wechatBill(
            lines, refundBill: false, appId: "wx5f0e6a0b9c8d7e6f", merchantId: "1900000109")
        let back = try StatementParser.parse(Array(text.utf8), source: .wechatTradeBill).lines
        func strip(_ l: StatementLine) -> [String] {
            [
                l.kind.rawValue, l.transactionId ?? "", l.orderId ?? "", l.refundId ?? "",
                "\(l.amount?.minorUnits ?? -1)", "\(l.fee?.minorUnits ?? -1)", l.at.iso8601,
            ]
        }
        #expect(back.map(strip) == lines.map(strip))
        let google = try Self.sample("googleplay-earnings-2026-03.csv", .googleplayEarnings).lines
        var sales = google.filter { $0.kind == .sale || $0.kind == .refund }
        for i in sales.indices {
            sales[i].fee =
                google.first {
                    $0.transactionId == sales[i].transactionId && ($0.kind == .fee || $0.kind == .feeRefund)
                }?.amount
        }
        let earnings = try StatementParser.parse(
            Array(StatementWriter.googleplayEarnings(sales, packageName: "com.example.android").utf8),
            source: .googleplayEarnings
        ).lines
        #expect(earnings.map(strip) == google.filter { $0.kind != .other }.map(strip))
    }
}
