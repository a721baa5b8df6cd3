import Foundation
import LedgerCore
import LedgerDomain

/// Writes store files in the stores' own formats from statement lines (their digest and line
/// numbers are ignored): what the simulator hands to `ledger import statement`, and the samples.
/// Whatever is written here parses back to the same lines.
public enum StatementWriter {
    /// A WeChat Pay daily bill (ALL, or REFUND) for the lines given, with its summary rows, as
    /// WeChat writes it: every field after a backtick, never quoted; refund ids `0` on sales; fees to
    /// five decimals; the order's attach data (JSON, with its commas) in 商户数据包.
    public static func wechatBill(
        _ lines: [StatementLine], refundBill: Bool, appId: String, merchantId: String
    ) -> String {
        let header = refundBill ? WeChatBill.refundHeader : WeChatBill.tradeHeader
        var out = header.joined(separator: ",") + "\r\n"
        var sums: [String: Int64] = [:]
        let cny = Currency("CNY")!
        var currency = cny
        for l in lines.sorted(by: {
            ($0.at, $0.kind, $0.transactionId ?? "") < ($1.at, $1.kind, $1.transactionId ?? "")
        }) {
            let c = l.amount?.currency ?? cny
            currency = c
            let amount = l.amount?.minorUnits ?? 0, fee = l.fee?.storeAmount(in: .micros) ?? 0
            let sale = l.kind == .sale
            var v: [String: String] = [
                "交易时间": Times.localText(l.at, offsetSeconds: WeChatBill.beijingSeconds), "公众账号ID": l.app ?? appId,
                "商户号": l.merchant ?? merchantId, "特约商户号": "0", "设备号": "", "微信订单号": l.transactionId ?? "",
                "商户订单号": l.orderId ?? "", "用户标识": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "交易类型": "APP",
                "交易状态": sale ? "SUCCESS" : "REFUND", "付款银行": "OTHERS", "货币种类": c.code,
                "代金券金额": "0.00", "微信退款单号": sale ? "0" : (l.refundId ?? ""),
                "商户退款单号": sale ? "0" : "R" + (l.orderId ?? ""),
                "充值券退款金额": "0.00", "退款类型": sale ? "" : "ORIGINAL", "退款状态": sale ? "" : "SUCCESS",
                "商品名称": l.productId ?? "", "商户数据包": l.orderId.map { #"{"order":"\#($0)","from":"app,ios"}"# } ?? "",
                "费率": "0.60%", "费率备注": "",
                "退款申请时间": "", "退款成功时间": sale ? "" : Times.localText(l.at, offsetSeconds: WeChatBill.beijingSeconds),
            ]
            let numbers: [String: Int64] = [
                "应结订单金额": sale ? amount : 0, "退款金额": sale ? 0 : amount,
                "订单金额": sale ? amount : 0, "申请退款金额": sale ? 0 : amount, "充值券退款金额": 0,
            ]
            for (k, n) in numbers {
                v[k] = Amounts.text(n, c)
                sums[k, default: 0] += n
            }
            let signedFee = sale ? fee : -fee
            v["手续费"] = Amounts.microsText(signedFee, decimals: 5)
            sums["手续费", default: 0] += signedFee
            out += header.map { "`" + (v[$0] ?? "") }.joined(separator: ",") + "\r\n"
        }
        out += WeChatBill.summaryHeader.joined(separator: ",") + "\r\n"
        var summary = ["`\(lines.count)"]
        for total in WeChatBill.summaryHeader.dropFirst() {
            let detail = WeChatBill.totals.first { $0.summary == total }?.detail ?? ""
            summary.append(
                "`"
                    + (WeChatBill.feeColumns.contains(detail)
                        ? Amounts.microsText(sums[detail] ?? 0, decimals: 5)
                        : Amounts.text(sums[detail] ?? 0, currency)))
        }
        return out + summary.joined(separator: ",") + "\r\n"
    }

    /// An App Store transaction history as the App Store Server API answers it: one page of
    /// `signedTransactions`, no period (the query's, given on import).
    /// Refund lines become the `revocationDate` of their sale.
    public static func appstoreHistory(_ lines: [StatementLine], bundleId: String) -> String {
        var revoked: [String: (at: Timestamp, amount: Money?)] = [:]
        for l in lines where l.kind == .refund { if let tx = l.transactionId { revoked[tx] = (l.at, l.amount) } }
        let sales = lines.filter { $0.kind == .sale }.sorted {
            ($0.at, $0.transactionId ?? "") < ($1.at, $1.transactionId ?? "")
        }
        let items: [JSONValue] = sales.map { l in
            let price = l.amount ?? Money(minorUnits: 0, currency: Currency("USD")!)
            var m: [(String, JSONValue)] = [
                ("transactionId", .string(l.transactionId ?? "")),
                ("originalTransactionId", .string(l.transactionId ?? "")),
                ("bundleId", .string(l.app ?? bundleId)), ("productId", .string(l.productId ?? "")),
                ("purchaseDate", .int(Times.millisValue(l.at))), ("quantity", .int(l.quantity ?? 1)),
                ("type", .string("Consumable")),
                ("inAppOwnershipType", .string(l.ownership?.raw ?? "PURCHASED")),
                ("environment", .string(l.environment?.raw ?? "Production")),
                ("price", .int(price.milliunits ?? 0)), ("currency", .string(price.currency.code)),
                ("storefront", .string("CHN")),
                ("transactionReason", .string("PURCHASE")),
            ]
            m.append(("signedDate", .int(Times.millisValue(l.at) + 1000)))
            if let tx = l.transactionId, let refund = revoked[tx] {
                m.append(("revocationDate", .int(Times.millisValue(refund.at))))
                m.append(("revocationReason", .int(0)))
                // A refund of part of the price is REFUND_PRORATED with its percentage in milliunits.
                if let amount = refund.amount, amount != price, price.millionths > 0 {
                    m.append(("revocationType", .string("REFUND_PRORATED")))
                    m.append(("revocationPercentage", .int(amount.millionths * 100_000 / price.millionths)))
                } else {
                    m.append(
                        ("revocationType", .string(l.ownership == .familyShared ? "FAMILY_REVOKE" : "REFUND_FULL")))
                }
            }
            return .makeObject(m)
        }
        // As the App Store Server API answers: signed transactions (here with a stand-in signature,
        // which the import does not verify), no period (the query's, given on import).
        let header = base64URL(Array(#"{"alg":"ES256","x5c":["simulated"]}"#.utf8))
        let signed: [JSONValue] = items.map { item in
            .string(header + "." + base64URL(Array(item.canonicalText.utf8)) + "." + base64URL(Array("simulated".utf8)))
        }
        let doc = JSONValue.makeObject([
            ("revision", .string("sim-\(items.count)")), ("bundleId", .string(bundleId)),
            ("environment", .string("Production")),
            ("hasMore", .bool(false)), ("signedTransactions", .array(signed)),
        ])
        return doc.canonicalText + "\n"
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// A Google Play voided purchases list for the refund lines given.
    public static func googleplayVoided(_ lines: [StatementLine]) -> String {
        let items: [JSONValue] = lines.filter { $0.kind == .refund }.sorted {
            ($0.at, $0.transactionId ?? "") < ($1.at, $1.transactionId ?? "")
        }.map { l in
            var m: [(String, JSONValue)] = [
                ("kind", .string("androidpublisher#voidedPurchase")),
                ("purchaseToken", .string("token-" + (l.transactionId ?? ""))),
                ("voidedTimeMillis", .string(String(Times.millisValue(l.at)))),
                ("orderId", .string(l.transactionId ?? "")),
                ("voidedSource", .int(0)), ("voidedReason", .int(1)), ("refundType", .int(l.quantity == nil ? 1 : 2)),
            ]
            if let q = l.quantity { m.append(("voidedQuantity", .int(q))) }
            return .makeObject(m)
        }
        return JSONValue.makeObject([
            ("voidedPurchases", .array(items)),
            (
                "pageInfo",
                .makeObject([
                    ("totalResults", .int(Int64(items.count))), ("resultPerPage", .int(Int64(items.count))),
                    ("startIndex", .int(0)),
                ])
            ),
        ]).canonicalText + "\n"
    }
}
