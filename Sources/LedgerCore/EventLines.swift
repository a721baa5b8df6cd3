import Foundation

/// JSON lines (one event per line) decoded as one batch: blank lines are skipped, every other line
/// is decoded and validated, and the first problem stops everything, naming its line. The one path
/// for `ledger append` and the HTTP service's `POST /v1/events`.
public enum EventLines {
    /// The events of `data` with the 1-based line each came from. `eventId` gives an id to a line
    /// that has none (its line number and index among the events); by default a random one.
    public static func decode(
        _ data: some Collection<UInt8>, decoder: EventLineDecoder,
        eventId: ((_ line: Int, _ index: Int) -> UUID)? = nil
    ) throws(EventInputError) -> (events: [NewEvent], lines: [Int]) {
        var events: [NewEvent] = []
        var lines: [Int] = []
        var lineNumber = 0
        var seen: [UUID: (line: Int, index: Int)] = [:]
        for raw in Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard let text = try Self.text(raw, line: lineNumber) else { continue }
            let (line, index) = (lineNumber, events.count)
            let event = try decoder.decode(
                text, lineNumber: line, defaultEventId: eventId.map { id in { id(line, index) } })
            if let first = seen[event.eventId] {
                if events[first.index] != event {
                    throw EventInputError(
                        line: lineNumber, field: "eventId", eventId: event.eventId.lowercased,
                        message: "the same eventId is on line \(first.line) with different content")
                }
            } else {
                seen[event.eventId] = (line, index)
            }
            events.append(event)
            lines.append(lineNumber)
        }
        return (events, lines)
    }

    /// A line's text without its `\r`, or nil when it is blank (spaces and tabs only); bytes that
    /// are not UTF-8 are refused with the line's number.
    public static func text(_ raw: some BidirectionalCollection<UInt8>, line: Int) throws(EventInputError) -> String? {
        var bytes = raw[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw EventInputError(line: line, message: "not valid UTF-8")
        }
        return text
    }
}

/// The lines of a file read a chunk at a time, each with its 1-based number: a file of any size in
/// the memory of its longest line and one chunk.
public struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line ``next()`` returned last.
    public private(set) var lineNumber = 0
    /// The bytes read at a time.
    public static let chunk = 1 << 20

    private let chunkSize: Int
    private let maximumLineBytes: Int

    /// Reads `handle` from where it stands, `chunkSize` bytes at a time. A line longer than
    /// `maximumLineBytes` is refused with its number rather than read whole (a file with no line
    /// breaks would be held in memory).
    public init(_ handle: FileHandle, chunkSize: Int = LineReader.chunk, maximumLineBytes: Int = 16 << 20) {
        precondition(chunkSize > 0 && maximumLineBytes > 0, "a chunk and a line of at least one byte")
        self.handle = handle
        self.chunkSize = chunkSize
        self.maximumLineBytes = maximumLineBytes
    }

    /// The next line's bytes (without its `\n`), or nil after the last one. A last line with no
    /// `\n` is a line; an empty file has none.
    public mutating func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return try line(start..<newline)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return try line(start..<buffer.count)
            }
            buffer.removeSubrange(0..<start)
            start = 0
            if buffer.count > maximumLineBytes { _ = try line(0..<buffer.count) }
            let data = try handle.read(upToCount: chunkSize) ?? Data()
            if data.isEmpty { atEnd = true } else { buffer.append(contentsOf: data) }
        }
    }

    /// The next line, numbered, unless it is longer than the limit.
    private mutating func line(_ range: Range<Int>) throws(EventInputError) -> ArraySlice<UInt8> {
        lineNumber += 1
        guard range.count <= maximumLineBytes else {
            throw EventInputError(line: lineNumber, message: "longer than \(maximumLineBytes) bytes")
        }
        return buffer[range]
    }
}
