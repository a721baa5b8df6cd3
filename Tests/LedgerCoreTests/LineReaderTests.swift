import Foundation
import LedgerCore
import Testing

@Suite("LineReader")
struct LineReaderTests {
    /// Every line with its number, read `chunkSize` bytes at a time.
    static func read(_ text: String, chunkSize: Int, maximumLineBytes: Int = 1 << 20) throws -> [(Int, String)] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-lines-\(UUID())")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var reader = LineReader(handle, chunkSize: chunkSize, maximumLineBytes: maximumLineBytes)
        var out: [(Int, String)] = []
        while let line = try reader.next() { out.append((reader.lineNumber, String(decoding: line, as: UTF8.self))) }
        return out
    }

    /// Lines across chunk edges, a line longer than a chunk, blank and CRLF lines, a last line
    /// without its newline: the same lines and numbers whatever the chunk.
    @Test(arguments: [1, 2, 3, 7, 1 << 20])
    func linesAndNumbersDoNotDependOnTheChunk(chunkSize: Int) throws {
        let text = "first\nsecond line, longer than a chunk\n\n\r\nfünf\r\nlast"
        let lines = try Self.read(text, chunkSize: chunkSize)
        #expect(lines.map(\.0) == [1, 2, 3, 4, 5, 6])
        #expect(lines.map(\.1) == ["first", "second line, longer than a chunk", "", "\r", "fünf\r", "last"])
        #expect(try Self.read(text + "\n", chunkSize: chunkSize).count == 6)
        #expect(try Self.read("", chunkSize: chunkSize).isEmpty)
        #expect(try Self.read("\n", chunkSize: chunkSize).map(\.1) == [""])
    }

    /// A line is read up to its limit, not whole: a file with no line breaks is refused early.
    @Test(arguments: [1, 4, 100])
    func aLineBeyondTheLimitIsRefusedWithItsNumber(chunkSize: Int) throws {
        let text = "short\n" + String(repeating: "x", count: 10) + "\n"
        #expect(try Self.read(text, chunkSize: chunkSize, maximumLineBytes: 10).count == 2)
        #expect(throws: EventInputError(line: 2, message: "longer than 9 bytes")) {
            try Self.read(text, chunkSize: chunkSize, maximumLineBytes: 9)
        }
    }

    @Test func aLinesTextDropsItsCarriageReturnAndSkipsBlanks() throws {
        #expect(try EventLines.text(Array("ab\r".utf8), line: 1) == "ab")
        #expect(try EventLines.text(Array(" \t\r".utf8), line: 1) == nil)
        #expect(throws: EventInputError(line: 4, message: "not valid UTF-8")) {
            try EventLines.text([0x61, 0xFF], line: 4)
        }
    }
}
