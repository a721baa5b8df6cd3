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
            var bytes = raw
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw EventInputError(line: lineNumber, message: "not valid UTF-8")
            }
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
}
