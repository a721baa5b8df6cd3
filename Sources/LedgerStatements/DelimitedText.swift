/// The records of a delimited text file, each with the line of the file it starts on.
///
/// Two dialects, as the stores write them:
/// - ``Dialect/tab``: App Store Connect's reports. Tab-separated and never quoted: a `"` is a
///   character of its field (a title such as `300 "Gold" Coins`), and a record is a line.
/// - ``Dialect/csv``: Google Play's reports (RFC 4180). A field in double quotes may hold commas,
///   line breaks and `""` for a quote; its record's line is the one it starts on, and the next
///   record's line counts every line break inside it. A `"` inside an unquoted field is a character.
///
/// Lines end with LF or CRLF; an empty line is a record of one empty field; the text's last line
/// break ends its last record and starts none.
enum DelimitedText {
    enum Dialect {
        case tab
        case csv

        var name: String { self == .tab ? "tab-separated" : "CSV" }
    }

    typealias Record = (fields: [String], line: Int)

    static func records(_ text: String, _ dialect: Dialect) throws(StatementError) -> [Record] {
        let bytes = Array(text.utf8)
        let separator: UInt8 = dialect == .tab ? 0x09 : 0x2C
        let quote: UInt8 = 0x22, lf: UInt8 = 0x0A, cr: UInt8 = 0x0D
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1, recordLine = 1
        var i = 0

        func endField() {
            // The text is valid UTF-8 and fields end only at ASCII bytes, so each is valid UTF-8 too.
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }

        while i < bytes.count {
            let b = bytes[i]
            if dialect == .csv && b == quote && field.isEmpty {
                // A quoted field: to its closing quote, which a separator or the line's end must follow.
                let opened = line, column = fields.count + 1
                i += 1
                var closed = false
                while i < bytes.count {
                    let c = bytes[i]
                    if c == quote {
                        if i + 1 < bytes.count && bytes[i + 1] == quote {
                            field.append(quote)
                            i += 2
                            continue
                        }
                        closed = true
                        i += 1
                        break
                    }
                    if c == lf { line += 1 }
                    field.append(c)
                    i += 1
                }
                guard closed else {
                    throw StatementError(
                        line: opened, column: column,
                        "a quoted field that is never closed (its \" opens here; the file ends inside it)")
                }
                let next = i < bytes.count ? bytes[i] : lf
                let endsLine = next == lf || (next == cr && (i + 1 == bytes.count || bytes[i + 1] == lf))
                guard next == separator || endsLine else {
                    throw StatementError(
                        line: line, column: column,
                        "text after the closing quote of a quoted field (a \" inside a field is written \"\")")
                }
                continue
            }
            if b == separator {
                endField()
                i += 1
                continue
            }
            if b == lf || (b == cr && i + 1 < bytes.count && bytes[i + 1] == lf) || (b == cr && i + 1 == bytes.count) {
                endField()
                records.append((fields, recordLine))
                fields.removeAll(keepingCapacity: true)
                i += b == cr && i + 1 < bytes.count ? 2 : 1
                line += 1
                recordLine = line
                continue
            }
            field.append(b)
            i += 1
        }
        // The last record, when the text does not end with a line break.
        if let last = bytes.last, last != lf, last != cr {
            endField()
            records.append((fields, recordLine))
        }
        return records
    }
}
