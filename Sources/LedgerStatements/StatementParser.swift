import Crypto
import Foundation
import LedgerCore
import LedgerDomain

/// Why a statement file was refused: where (line, and column or field) and what. Nothing of it is written.
public struct StatementError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based line of the file (for JSON sources: the line of the text, or the entry's index in its list).
    public var line: Int?
    /// 1-based column (CSV: the field's position; JSON syntax: the character).
    public var column: Int?
    /// The column's header or the JSON field.
    public var field: String?
    public var message: String

    public init(line: Int? = nil, column: Int? = nil, field: String? = nil, _ message: String) {
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    /// The same error with `prefix` (`"page 2: "`) before its message.
    func prefixed(_ prefix: String) -> StatementError {
        var e = self
        e.message = prefix + message
        return e
    }

    public var description: String {
        var place: [String] = []
        if let line { place.append("line \(line)") }
        if let column { place.append("column \(column)") }
        if let field { place.append("(\(field))") }
        return (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + message
    }
}

/// What the caller knows about the file beyond its bytes.
public struct StatementOptions: Sendable, Hashable {
    /// The period covered, when the file does not say (WeChat bills: the bill date; else from the lines).
    public var periodStart: Timestamp?
    public var periodEnd: Timestamp?
    /// The digest the store published for the file (WeChat's hash_value: `sha1:<hex>`, `sha256:<hex>`, or bare hex told
    /// by its length; other algorithms are refused):
    /// the bytes must match it.
    public var expectedDigest: String?

    /// No file name: a statement is its bytes, and the same bytes under another name are the same
    /// statement (the fact's `fileName` is read from statements imported before, never written).
    public init(periodStart: Timestamp? = nil, periodEnd: Timestamp? = nil, expectedDigest: String? = nil) {
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.expectedDigest = expectedDigest
    }
}

/// Progress of a long parse, by stage (`read`: the file's rows or entries; `check`: the facts
/// made of them): how many are done of how many.
public typealias StatementProgress = @Sendable (_ stage: String, _ done: Int, _ total: Int) -> Void

/// One signed entry of a statement (an App Store history's signed transaction): where it is and its JWS.
public struct SignedEntry: Sendable, Hashable {
    /// `signedTransactions[3]`, with `page 2: ` before it when the statement has pages.
    public var place: String
    public var jws: String
}

/// A parsed, validated statement: the statement fact and its lines, and, for a statement of signed
/// entries, those entries and what is known of their signatures.
public struct StatementFile: Sendable, Hashable {
    public var imported: StatementImported
    public var lines: [StatementLine]
    /// The signed entries, in order, for a verifier (the parser reads their payloads, unverified).
    public var signed: [SignedEntry] = []
    /// For a statement with signed entries: not verified, until the importer verifies them and
    /// calls ``verified(root:)``.
    public var signatures: StatementSignatures?

    public init(imported: StatementImported, lines: [StatementLine], signed: [SignedEntry] = []) {
        self.imported = imported
        self.lines = lines
        self.signed = signed
        if !signed.isEmpty {
            signatures = StatementSignatures(
                source: imported.source, digest: imported.digest, signed: Int64(signed.count), root: nil,
                app: imported.app, merchant: imported.merchant)
        }
    }

    /// The same statement, its signatures verified to `root` (`sha256:<hex>` of the root certificate).
    public func verified(root: String) -> StatementFile {
        var file = self
        file.signatures?.root = root
        return file
    }

    /// The facts to append, the statement first, its signatures' record last.
    public var facts: [Fact] {
        [.statementImported(imported)] + lines.map(Fact.statementLine)
            + (signatures.map { [.statementSignatures($0)] } ?? [])
    }

    /// The facts as events: deterministic ids (from the digest and the line, and for the
    /// signatures' record from the root) and times (the period's end), so a re-import is the same
    /// events, and a verification after an unverified import is one new event.
    public func events(source: String = "statement-import") -> [NewEvent] {
        let at = imported.periodEnd
        return facts.enumerated().map { i, fact in
            var name = String(i)
            if case .statementSignatures(let s) = fact { name = "signatures:" + (s.root ?? "unverified") }
            return fact.newEvent(
                occurredAt: at, eventId: Self.eventId(imported.digest, name), metadata: EventMetadata(source: source))
        }
    }

    /// The id of the statement's fact `name` (its index, or `signatures:<root>`).
    static func eventId(_ digest: String, _ name: String) -> UUID {
        UUID(bytes: SHA256.hash(Array("\(digest)#\(name)".utf8)), version: 4)
    }
}

public enum StatementParser {
    /// Parses and validates a store file. Every error names its line and column (or field), and the
    /// whole file is refused.
    public static func parse(
        _ bytes: [UInt8], source: StatementSource, options: StatementOptions = StatementOptions()
    ) throws(StatementError) -> StatementFile {
        try parse(pages: [bytes], source: source, options: options)
    }

    /// Sources whose answer comes in pages (the App Store history's `hasMore`, Google's
    /// `nextPageToken`): their pages, in order, are one statement.
    public static let paged: Set<StatementSource> = [.appstoreHistory, .googleplayVoided]

    /// Parses one statement from its file, or from the pages of a paged source in the order the
    /// store returned them. The statement's digest is that of the file (of one page), or of the
    /// pages' bytes one after another.
    public static func parse(
        pages: [[UInt8]], source: StatementSource, options: StatementOptions = StatementOptions(),
        progress: StatementProgress? = nil
    ) throws(StatementError) -> StatementFile {
        guard !pages.isEmpty else { throw StatementError("no file given") }
        guard pages.count == 1 || paged.contains(source) else {
            throw StatementError(
                "a \(source.rawValue) statement is one file (only \(paged.map(\.rawValue).sorted().joined(separator: " and ")) come in pages)"
            )
        }
        // A gzipped download (WeChat's tar_type=GZIP) is read as the bill it holds: its digest is the
        // bill's (as WeChat's hash_value is), so the same bill gzipped or not is the same statement.
        // So is a zip archive of one file (Google's reports in its Cloud Storage bucket).
        var pages = pages
        for (k, page) in pages.enumerated() where Gzip.isGzip(page) || Zip.isZip(page) {
            let zipped = Zip.isZip(page)
            do throws(Gzip.Failure) {
                pages[k] = zipped ? try Zip.extract(page).bytes : try Gzip.decompress(page)
            } catch {
                throw StatementError(
                    (pages.count > 1 ? "page \(k + 1): " : "")
                        + "a \(zipped ? "zip" : "gzip") file that does not decompress: \(error.message)")
            }
        }
        let bytes = pages.count == 1 ? pages[0] : pages.flatMap { $0 }
        let digest = SHA256.digest(bytes)
        try checkDigest(bytes, digest: digest, expected: options.expectedDigest)
        var texts: [String] = []
        for (k, page) in pages.enumerated() {
            guard var text = String(validating: page, as: UTF8.self) else {
                throw StatementError(
                    line: firstInvalidUTF8Line(page),
                    (pages.count > 1 ? "page \(k + 1): " : "") + "the file is not UTF-8 text")
            }
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            texts.append(text)
        }
        let text = texts[0]
        var file: StatementFile
        let context = ParseContext(source: source, digest: digest, options: options, progress: progress)
        switch source {
        case .wechatTradeBill, .wechatRefundBill: file = try WeChatBill.parse(text, context)
        case .appstoreHistory: file = try AppStoreHistory.parse(texts, context)
        case .appstoreFinance: file = try AppStoreFinance.parse(text, context)
        case .googleplayVoided: file = try GooglePlayVoided.parse(texts, context)
        case .googleplayEarnings: file = try GooglePlayEarnings.parse(text, context)
        }
        // Every fact must be one the ledger accepts (the catalogue's own checks: lengths, bounds).
        let facts = file.facts
        for (i, fact) in facts.enumerated() {
            if i % 1024 == 0 || i == facts.count - 1 { progress?("check", i + 1, facts.count) }
            do throws(FactError) {
                _ = try FactCatalogue.decode(
                    type: fact.typeName, schemaVersion: FactCatalogue.currentVersions[fact.typeName] ?? 1,
                    payload: fact.payload)
            } catch {
                let line = i == 0 || i > file.lines.count ? nil : Int(file.lines[i - 1].line)
                throw StatementError(line: line, field: error.field, "not a valid \(fact.typeName): \(error.message)")
            }
        }
        return file
    }

    static func checkDigest(_ bytes: [UInt8], digest: String, expected: String?) throws(StatementError) {
        guard let expected = expected?.lowercased() else { return }
        let parts = expected.split(separator: ":", maxSplits: 1).map(String.init)
        // A bare value is told by its length: WeChat's bill API publishes SHA-1 (`hash_type` SHA1).
        let (algorithm, hex) =
            parts.count == 2 ? (parts[0], parts[1]) : (parts[0].count == 40 ? "sha1" : "sha256", parts[0])
        guard hex.count == (algorithm == "sha1" ? 40 : 64), hex.allSatisfy(\.isHexDigit) else {
            throw StatementError(
                "--digest \(expected): not a SHA-1 or SHA-256 digest (sha1:<40 hex digits>, sha256:<64 hex digits>, or the bare hex)"
            )
        }
        let actual: String
        switch algorithm {
        case "sha256": actual = digest
        case "sha1": actual = "sha1:" + Insecure.SHA1.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        default:
            throw StatementError(
                "--digest \(algorithm): only sha1 and sha256 digests can be checked (give sha256:<hex>)")
        }
        guard algorithm + ":" + hex == actual else {
            throw StatementError(
                "the file's digest is \(actual), not the \(algorithm):\(hex) the store published: the file is not the one the store sent"
            )
        }
    }

    static func firstInvalidUTF8Line(_ bytes: [UInt8]) -> Int {
        var line = 1, start = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            if String(validating: bytes[start..<i], as: UTF8.self) == nil { return line }
            line += 1
            start = i + 1
        }
        return line
    }
}

/// What every source parser needs.
struct ParseContext: Sendable {
    let source: StatementSource
    let digest: String
    let options: StatementOptions
    var progress: StatementProgress? = nil

    /// The app a statement is of: the one its rows name, or none when they name several (a WeChat
    /// Pay merchant's bill lists the sales of every appid it serves, a Google Play earnings report
    /// every app of the account): such a statement covers the whole channel, so that a payment of
    /// any of its apps that it lacks is unconfirmed, not only one of the first row's app.
    static func statementApp(_ apps: Set<String>) -> String? { apps.count == 1 ? apps.first : nil }

    /// Reports every 1,024th row (and the last) read of `total`.
    func read(_ done: Int, of total: Int) {
        if let progress, done % 1024 == 0 || done == total { progress("read", done, total) }
    }

    func line(_ n: Int, kind: StatementLineKind, tx: String?, amount: Money?, at: Timestamp) -> StatementLine {
        StatementLine(
            digest: digest, line: Int64(n), source: source, kind: kind, transactionId: tx, amount: amount, at: at)
    }

    /// The statement, its period from the options, else `fallback` (from the file), else the whole
    /// days (UTC, or `offsetSeconds` east) of the lines' times.
    func statement(
        _ lines: [StatementLine], fallback: (Timestamp, Timestamp)? = nil, offsetSeconds: Int64 = 0,
        app: String? = nil, merchant: String? = nil, signed: [SignedEntry] = []
    ) throws(StatementError) -> StatementFile {
        var start = options.periodStart ?? fallback?.0
        var end = options.periodEnd ?? fallback?.1
        if start == nil || end == nil {
            guard let first = lines.map(\.at).min(), let last = lines.map(\.at).max() else {
                throw StatementError("the file has no lines to date it by: give the period it covers (--from and --to)")
            }
            start = start ?? Times.dayStart(first, offsetSeconds: offsetSeconds)
            end =
                end
                ?? Timestamp(
                    microsecondsSince1970: Times.dayStart(last, offsetSeconds: offsetSeconds).microseconds + Times.day)
        }
        guard let start, let end, end > start else { throw StatementError("the period's end is not after its start") }
        let s = StatementImported(
            source: source, digest: digest, periodStart: start, periodEnd: end, lines: Int64(lines.count),
            app: app, merchant: merchant)
        return StatementFile(imported: s, lines: lines, signed: signed)
    }
}
