import Testing
@testable import LedgerStatements

/// The reader of the stores' tab-separated and CSV text: records with the line each starts on, CSV
/// quoting as RFC 4180 writes it, tab-separated text never quoted, and a malformed quote named.
@Suite("Delimited text")
struct DelimitedTextTests {
    static func read(_ text: String, _ dialect: DelimitedText.Dialect) throws -> [[String]] {
        try DelimitedText.records(text, dialect).map(\.fields)
    }

    static func lines(_ text: String, _ dialect: DelimitedText.Dialect) throws -> [Int] {
        try DelimitedText.records(text, dialect).map(\.line)
    }

    @Test("CSV: quoted fields hold commas, quotes and line breaks; a record's line is the one it starts on")
    func csvQuoting() throws {
        let text = "a,b,c\n\"1,5\",\"say \"\"hi\"\"\",\"two\nlines\"\nx,,\"\"\n\ny,z\n"
        #expect(
            try Self.read(text, .csv) == [
                ["a", "b", "c"], ["1,5", "say \"hi\"", "two\nlines"], ["x", "", ""], [""], ["y", "z"],
            ])
        // The record after a field of two lines starts on line 4, not 3.
        #expect(try Self.lines(text, .csv) == [1, 2, 4, 5, 6])
        // A quote inside an unquoted field is a character of it.
        #expect(try Self.read("a,300 \"Gold\" Coins,b", .csv) == [["a", "300 \"Gold\" Coins", "b"]])
    }

    @Test("CRLF and LF, with or without a last line break, read the same records")
    func lineEnds() throws {
        let lf = "h1,h2\n1,2\n3,\"4\r\nfour\"\n5,6"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Self.read(lf, .csv) == [["h1", "h2"], ["1", "2"], ["3", "4\r\nfour"], ["5", "6"]])
        #expect(try Self.read(lf + "\n", .csv) == Self.read(lf, .csv))
        #expect(try Self.read(crlf + "\r\n", .csv) == [["h1", "h2"], ["1", "2"], ["3", "4\r\r\nfour"], ["5", "6"]])
        #expect(try Self.lines(crlf, .csv) == [1, 2, 3, 5])
        #expect(try Self.read("", .csv).isEmpty && Self.read("\n", .csv) == [[""]])
        #expect(try Self.read("a,", .csv) == [["a", ""]])
    }

    @Test("tab-separated text is never quoted: a \" is a character, a record is a line")
    func tabsAreNotQuoted() throws {
        let text = "Title\tQuantity\n300 \"Gold\" Coins\t3\n\"Quoted\"\t4\n\"open\t5\n"
        #expect(
            try Self.read(text, .tab) == [
                ["Title", "Quantity"], ["300 \"Gold\" Coins", "3"], ["\"Quoted\"", "4"], ["\"open", "5"],
            ])
        #expect(try Self.lines(text, .tab) == [1, 2, 3, 4])
    }

    @Test("a quoted field never closed, or text after its closing quote, is refused with its line and column")
    func malformedQuotes() throws {
        do {
            _ = try DelimitedText.records("a,b\n1,2\n3,\"four\n5,6\n", .csv)
            Issue.record("an open quote was accepted")
        } catch {
            #expect(error.line == 3 && error.column == 2 && error.message.contains("never closed"))
        }
        do {
            _ = try DelimitedText.records("a,b\n\"x\ny\",\"z\"q\n", .csv)
            Issue.record("text after a closing quote was accepted")
        } catch {
            #expect(error.line == 3 && error.column == 2 && error.message.contains("after the closing quote"))
        }
    }
}
