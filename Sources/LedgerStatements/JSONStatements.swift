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

    /// One page of a paged answer: a JSON object (`what` names it), its errors after `prefix` (`"page 2: "`).
    static func page(_ text: String, _ prefix: String, _ what: String) throws(StatementError) -> JSONValue {
        let doc: JSONValue
        do throws(StatementError) { doc = try parse(text) } catch { throw error.prefixed(prefix) }
        guard case .object = doc else { throw StatementError(line: 1, column: 1, prefix + "\(what) is a JSON object") }
        return doc
    }

    static func fail(_ list: String, _ index: Int, _ field: String, _ message: String) -> StatementError {
        StatementError(line: index + 1, field: "\(list)[\(index)].\(field)", message)
    }
}

/// App Store Server API, Get Transaction History (v2): `{"bundleId", "appAppleId", "environment",
/// "hasMore", "revision", "signedTransactions": [JWS...]}`. Each JWS's payload is a
/// JWSTransactionDecodedPayload; the parser reads it without verifying the signature, and records the
/// statement's signatures as not verified until the importer verifies them with the App Store
/// root it is configured with (``StatementFile/verified(root:)``). Also accepted: the same document with
/// `"transactions"`, the decoded payloads, in place of `signedTransactions`, and optional
/// `"startDate"`/`"endDate"` (milliseconds, the query's period). A history longer than one page is
/// imported as its pages together, in order: every page but the last says `hasMore: true`, the last
/// `false`, all of one app and environment. A transaction with a `revocationDate` is also a refund:
/// of its price (`REFUND_FULL`, or no type), of `price x revocationPercentage / 100000`
/// (`REFUND_PRORATED`), or of nothing (`FAMILY_REVOKE`: a family member's access ended, no money
/// moved). `line` is the entry's 1-based index across the pages.
enum AppStoreHistory {
    static func parse(_ pages: [String], _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        var lines: [StatementLine] = []
        var bundle: String?, environment: String?
        var period: (Timestamp, Timestamp)?
        var index = 0
        var entries: [SignedEntry] = []
        for (k, text) in pages.enumerated() {
            let where_ = pages.count > 1 ? "page \(k + 1): " : ""
            let doc = try JSONEntries.page(text, where_, "a transaction history")
            let last = k == pages.count - 1
            if (doc["hasMore"]?.boolValue ?? false) == last {
                throw StatementError(
                    field: "hasMore",
                    where_
                        + (last
                            ? "the history has more pages (hasMore true): import its pages together, in order (ledger import statement FILE...)"
                            : "hasMore is false, but another page follows it: give the pages in the order Apple returned them")
                )
            }
            let b = doc["bundleId"]?.stringValue, e = doc["environment"]?.stringValue
            if k > 0, b != bundle || e != environment {
                throw StatementError(
                    field: "bundleId",
                    where_
                        + "is of \(b ?? "?") (\(e ?? "?")), the first page of \(bundle ?? "?") (\(environment ?? "?"))")
            }
            bundle = b
            environment = e
            var items: [JSONValue] = []
            let list: String
            if case .array(let signed)? = doc["signedTransactions"] {
                list = "signedTransactions"
                for (i, jws) in signed.enumerated() {
                    guard let s = jws.stringValue, let payload = decodeJWSPayload(s) else {
                        throw JSONEntries.fail(
                            list, i, "", where_ + "is not a JWS (three base64url parts with a JSON payload)")
                    }
                    items.append(payload)
                    entries.append(SignedEntry(place: where_ + "\(list)[\(i)]", jws: s))
                }
            } else if case .array(let decoded)? = doc["transactions"] {
                list = "transactions"
                items = decoded
            } else {
                throw StatementError(
                    field: "signedTransactions",
                    where_ + "missing: a transaction history lists signedTransactions (or decoded transactions)")
            }
            for (i, t) in items.enumerated() {
                ctx.read(i + 1, of: items.count)
                do throws(StatementError) {
                    lines.append(
                        contentsOf: try transaction(t, index: i, line: index + 1, list: list, bundle: bundle, ctx))
                } catch { throw error.prefixed(where_) }
                index += 1
            }
            if let s = Times.millis(doc["startDate"]), let e = Times.millis(doc["endDate"]) {
                period = (min(period?.0 ?? s, s), max(period?.1 ?? e, e))
            }
        }
        return try ctx.statement(lines, fallback: period, app: bundle, signed: entries)
    }

    static func transaction(
        _ t: JSONValue, index i: Int, line: Int, list: String, bundle: String?, _ ctx: ParseContext
    ) throws(StatementError) -> [StatementLine] {
        func text(_ k: String) throws(StatementError) -> String {
            guard let v = t[k]?.stringValue, !v.isEmpty else {
                throw JSONEntries.fail(list, i, k, "missing or not a string")
            }
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
        guard let purchased = Times.millis(t["purchaseDate"]) else {
            throw JSONEntries.fail(list, i, "purchaseDate", "missing or not milliseconds")
        }
        guard let currency = Currency(try text("currency")) else {
            throw JSONEntries.fail(list, i, "currency", "not an ISO 4217 currency")
        }
        let milli = try int("price")
        // Kept exactly, even below a minor unit (USD 1995 milliunits is 1.995 USD).
        guard milli >= 0, let price = Money(storeAmount: milli, unit: .milliunits, currency: currency) else {
            throw JSONEntries.fail(
                list, i, "price", "\(milli) milliunits of \(currency.code) is negative or does not fit")
        }
        var sale = ctx.line(line, kind: .sale, tx: tx, amount: price, at: purchased)
        sale.productId = t["productId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        sale.quantity = t["quantity"]?.intValue
        sale.environment = t["environment"]?.stringValue.map { StoreEnvironment(raw: $0) }
        sale.ownership = t["inAppOwnershipType"]?.stringValue.map { Ownership(raw: $0) }
        sale.app = t["bundleId"]?.stringValue ?? bundle
        // The appAccountToken minted for our order: the audit names the order it was minted for.
        sale.orderId = t["appAccountToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        guard let revokedValue = t["revocationDate"], !revokedValue.isNull else { return [sale] }
        guard let revoked = Times.millis(revokedValue) else {
            throw JSONEntries.fail(list, i, "revocationDate", "not milliseconds")
        }
        var refund = sale
        refund.kind = .refund
        refund.at = revoked
        switch t["revocationType"]?.stringValue {
        case "REFUND_PRORATED"?:
            // A percentage in milliunits (50000 is 50 %) of the price, exactly.
            guard let pct = t["revocationPercentage"]?.intValue, pct > 0, pct <= 100_000 else {
                throw JSONEntries.fail(
                    list, i, "revocationPercentage",
                    "a REFUND_PRORATED revocation needs a percentage in milliunits, 1 to 100000")
            }
            refund.amount = price.share(pct, 100_000)
        case "FAMILY_REVOKE"?:
            refund.amount = Money(minorUnits: 0, currency: currency)
        case "REFUND_FULL"?, nil:
            break
        case let other?:
            throw JSONEntries.fail(
                list, i, "revocationType",
                "\(other) is not a revocation type Apple sends (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE)")
        }
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
/// `{"voidedPurchases": [...], "pageInfo": {"totalResults": N}, "tokenPagination": {"nextPageToken"}}`.
/// Each voided purchase is a refund line (the API gives no amount) keeping its `purchaseToken` and
/// why it was voided (`voidedSource`, `voidedReason`: a chargeback is told apart from a refund). A
/// list longer than one page is imported as its pages together, in order: every page but the last
/// names a `nextPageToken`. The empty answer `{}` is "no voids": give the period the query asked
/// for (`--from`, `--to`). `pageInfo.totalResults`, when present, is the whole list's size: it must
/// equal the entries of every page together.
enum GooglePlayVoided {
    /// Google's `voidedReason` and `voidedSource` codes, by name.
    static let reasons = [
        "0": "other", "1": "remorse", "2": "not-received", "3": "defective", "4": "accidental-purchase", "5": "fraud",
        "6": "friendly-fraud", "7": "chargeback", "8": "unacknowledged-purchase",
    ]
    static let sources = ["0": "user", "1": "developer", "2": "google"]

    static func parse(_ pages: [String], _ ctx: ParseContext) throws(StatementError) -> StatementFile {
        var lines: [StatementLine] = []
        var index = 0
        // Each page's `pageInfo.totalResults`: the whole list's size, not the page's.
        var totals: [(where_: String, total: Int64)] = []
        for (k, text) in pages.enumerated() {
            let where_ = pages.count > 1 ? "page \(k + 1): " : ""
            let doc = try JSONEntries.page(text, where_, "a voided purchases list")
            let next = doc["tokenPagination"]?["nextPageToken"]?.stringValue
            if (next == nil) != (k == pages.count - 1) {
                throw StatementError(
                    field: "tokenPagination.nextPageToken",
                    where_
                        + (next != nil
                            ? "the list has more pages: import its pages together, in order (ledger import statement FILE...)"
                            : "no nextPageToken, but another page follows it: give the pages in the order Google returned them")
                )
            }
            let items: [JSONValue]
            switch doc["voidedPurchases"] {
            case .array(let a)?: items = a
            case nil, .null?: items = []
            default: throw StatementError(field: "voidedPurchases", where_ + "not a list")
            }
            if let total = doc["pageInfo"]?["totalResults"]?.intValue { totals.append((where_, total)) }
            for (i, v) in items.enumerated() {
                index += 1
                guard let order = v["orderId"]?.stringValue, !order.isEmpty else {
                    throw JSONEntries.fail("voidedPurchases", i, "orderId", where_ + "missing or not a string")
                }
                guard let at = Times.millis(v["voidedTimeMillis"]) else {
                    throw JSONEntries.fail(
                        "voidedPurchases", i, "voidedTimeMillis", where_ + "missing or not milliseconds")
                }
                var line = ctx.line(index, kind: .refund, tx: order, amount: nil, at: at)
                if let q = v["voidedQuantity"]?.intValue { line.quantity = q }
                line.purchaseToken = v["purchaseToken"]?.stringValue
                let code = { (key: String) in v[key]?.intValue.map(String.init) ?? v[key]?.stringValue }
                line.voidedReason = code("voidedReason").map { reasons[$0] ?? $0 }
                line.voidedSource = code("voidedSource").map { sources[$0] ?? $0 }
                lines.append(line)
            }
        }
        for (where_, total) in totals where total != Int64(index) {
            throw StatementError(
                field: "pageInfo.totalResults",
                where_ + "says \(total) voided purchases in all, but "
                    + (pages.count > 1 ? "the \(pages.count) pages list \(index)" : "the list has \(index)"))
        }
        if lines.isEmpty && (ctx.options.periodStart == nil || ctx.options.periodEnd == nil) {
            throw StatementError(
                "no voided purchases: give the period the query asked for (--from and --to) to record that none were voided in it"
            )
        }
        return try ctx.statement(lines)
    }
}
