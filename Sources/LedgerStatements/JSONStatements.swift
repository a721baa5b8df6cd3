import Foundation
import LedgerCore
import LedgerDomain

/// A JSON document's entries, with errors that name the entry and the field.
struct JSONEntries {
    let list: String
    let items: [JSONValue]

    static func parse(_ text: String) throws(StatementError) -> JSONValue {
        do { return try JSONValue.parse(text) } catch {
            throw StatementError(line: error.line, column: error.column, "not JSON: \(error.message)")
        }
    }

    static func fail(_ list: String, _ index: Int, _ field: String, _ message: String) -> StatementError {
        StatementError(line: index + 1, field: "\(list)[\(index)].\(field)", message)
    }
}

/// App Store Server API, Get Transaction History (v2): `{"bundleId", "environment", "hasMore",
/// "revision", "signedTransactions": [JWS...]}`. Each JWS's payload is a JWSTransactionDecodedPayload;
/// the ledger reads it without verifying the signature (the statement is evidence finance asked
/// Apple for; its digest is kept). Also accepted: the same document with `"transactions"`, the
/// decoded payloads, in place of `signedTransactions`, and optional `"startDate"`/`"endDate"`
/// (milliseconds, the query's period). A transaction with a `revocationDate` is also a refund of
/// its price. `line` is the entry's 1-based index in the list.
enum AppStoreHistory {
    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let doc = try JSONEntries.parse(text)
        guard case .object = doc else { throw StatementError(line: 1, column: 1, "a transaction history is a JSON object") }
        if doc["hasMore"]?.boolValue == true {
            throw StatementError(field: "hasMore", "the history has more pages (hasMore true): import one document holding every page of the period")
        }
        var items: [JSONValue] = []
        let list: String
        if case .array(let signed)? = doc["signedTransactions"] {
            list = "signedTransactions"
            for (i, jws) in signed.enumerated() {
                guard let s = jws.stringValue, let payload = decodeJWSPayload(s) else {
                    throw JSONEntries.fail(list, i, "", "is not a JWS (three base64url parts with a JSON payload)")
                }
                items.append(payload)
            }
        } else if case .array(let decoded)? = doc["transactions"] {
            list = "transactions"; items = decoded
        } else {
            throw StatementError(field: "signedTransactions", "missing: a transaction history lists signedTransactions (or decoded transactions)")
        }
        let bundle = doc["bundleId"]?.stringValue
        var lines: [StatementLine] = []
        for (i, t) in items.enumerated() {
            lines.append(contentsOf: try transaction(t, index: i, list: list, bundle: bundle, ctx))
        }
        var period: (Timestamp, Timestamp)?
        if let s = Times.millis(doc["startDate"]), let e = Times.millis(doc["endDate"]) { period = (s, e) }
        return try ctx.statement(lines, fallback: period, app: bundle)
    }

    static func transaction(_ t: JSONValue, index i: Int, list: String, bundle: String?, _ ctx: ParseContext) throws(StatementError) -> [StatementLine] {
        func text(_ k: String) throws(StatementError) -> String {
            guard let v = t[k]?.stringValue, !v.isEmpty else { throw JSONEntries.fail(list, i, k, "missing or not a string") }
            return v
        }
        func int(_ k: String) throws(StatementError) -> Int64 {
            guard let v = t[k]?.intValue else { throw JSONEntries.fail(list, i, k, "missing or not a whole number") }
            return v
        }
        let tx = try text("transactionId")
        if let b = t["bundleId"]?.stringValue, let bundle, b != bundle {
            throw JSONEntries.fail(list, i, "bundleId", "\(b) is not the history's bundleId \(bundle)")
        }
        guard let purchased = Times.millis(t["purchaseDate"]) else { throw JSONEntries.fail(list, i, "purchaseDate", "missing or not milliseconds") }
        guard let currency = Currency(try text("currency")) else { throw JSONEntries.fail(list, i, "currency", "not an ISO 4217 currency") }
        let milli = try int("price")
        // Kept exactly, even below a minor unit (USD 1995 milliunits is 1.995 USD).
        guard milli >= 0, let price = Money(storeAmount: milli, unit: .milliunits, currency: currency) else {
            throw JSONEntries.fail(list, i, "price", "\(milli) milliunits of \(currency.code) is negative or does not fit")
        }
        var sale = ctx.line(i + 1, kind: .sale, tx: tx, amount: price, at: purchased)
        sale.productId = t["productId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        sale.quantity = t["quantity"]?.intValue
        sale.environment = t["environment"]?.stringValue.map { StoreEnvironment(raw: $0) }
        sale.ownership = t["inAppOwnershipType"]?.stringValue.map { Ownership(raw: $0) }
        sale.app = t["bundleId"]?.stringValue ?? bundle
        // The appAccountToken minted for our order: the audit names the order it was minted for.
        sale.orderId = t["appAccountToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        guard let revokedValue = t["revocationDate"], !revokedValue.isNull else { return [sale] }
        guard let revoked = Times.millis(revokedValue) else { throw JSONEntries.fail(list, i, "revocationDate", "not milliseconds") }
        var refund = sale
        refund.kind = .refund
        refund.at = revoked
        return [sale, refund]
    }

    static func decodeJWSPayload(_ jws: String) -> JSONValue? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var b64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let s = String(data: data, encoding: .utf8) else { return nil }
        return try? JSONValue.parse(s)
    }
}

/// Google Play Developer API, `purchases.voidedpurchases.list` (type 1: subscriptions too):
/// `{"voidedPurchases": [...], "pageInfo": {"totalResults": N}}`. Each voided purchase is a refund
/// line (the API gives no amount); `pageInfo.totalResults`, when present, must equal the entries, and
/// a document with a `tokenPagination.nextPageToken` is refused (a page, not the whole period).
enum GooglePlayVoided {
    static func parse(_ text: String, _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        let doc = try JSONEntries.parse(text)
        guard case .object = doc else { throw StatementError(line: 1, column: 1, "a voided purchases list is a JSON object") }
        if doc["tokenPagination"]?["nextPageToken"]?.stringValue != nil {
            throw StatementError(field: "tokenPagination.nextPageToken", "the list has more pages: import one document holding every page of the period")
        }
        let items: [JSONValue]
        switch doc["voidedPurchases"] {
        case .array(let a)?: items = a
        case nil, .null?: items = []
        default: throw StatementError(field: "voidedPurchases", "not a list")
        }
        if let total = doc["pageInfo"]?["totalResults"]?.intValue, total != Int64(items.count) {
            throw StatementError(field: "pageInfo.totalResults", "says \(total) voided purchases, but the list has \(items.count)")
        }
        var lines: [StatementLine] = []
        for (i, v) in items.enumerated() {
            guard let order = v["orderId"]?.stringValue, !order.isEmpty else { throw JSONEntries.fail("voidedPurchases", i, "orderId", "missing or not a string") }
            guard let at = Times.millis(v["voidedTimeMillis"]) else { throw JSONEntries.fail("voidedPurchases", i, "voidedTimeMillis", "missing or not milliseconds") }
            var line = ctx.line(i + 1, kind: .refund, tx: order, amount: nil, at: at)
            if let q = v["voidedQuantity"]?.intValue { line.quantity = q }
            lines.append(line)
        }
        return try ctx.statement(lines)
    }
}
