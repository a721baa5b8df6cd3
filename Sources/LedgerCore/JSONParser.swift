extension JSONValue {
    /// Parses one JSON text. Rejects duplicate keys, non-integer numbers, `\u0000` (which PostgreSQL
    /// cannot store), invalid UTF-8 and trailing data, naming the line and column.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONSyntaxError> = text.withUTF8 { buffer in
            do throws(JSONSyntaxError) { return .success(try parse(utf8: buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func parse(utf8 buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: buffer)
        do throws(JSONParser.Failure) {
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.index < buffer.count { throw parser.failure("unexpected data after the JSON value") }
            return value
        } catch {
            throw parser.locate(error)
        }
    }
}

struct JSONParser {
    struct Failure: Error {
        var offset: Int
        var message: String
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    static let maximumDepth = 64

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func failure(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(offset: offset ?? index, message: message)
    }

    func locate(_ f: Failure) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        let end = min(f.offset, bytes.count)
        for i in 0..<end where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        // Column in characters: count UTF-8 lead bytes.
        var column = 1
        for i in lineStart..<end where bytes[i] & 0xC0 != 0x80 { column += 1 }
        return JSONSyntaxError(line: line, column: column, message: f.message)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .int(try parseInteger())
        default:
            throw failure("unexpected character '\(Self.printable(bytes[index]))', expected a value")
        }
    }

    static func printable(_ b: UInt8) -> String {
        b >= 0x20 && b < 0x7F ? String(UnicodeScalar(b)) : "\\u{\(String(b, radix: 16))}"
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let start = index
        let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for b in w {
            guard index < bytes.count, bytes[index] == b else {
                throw failure("invalid literal, expected '\(word)'", at: start)
            }
            index += 1
        }
    }

    mutating func parseInteger() throws(Failure) -> Int64 {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
            throw failure("invalid number: expected a digit")
        }
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count,
            bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9")
        {
            throw failure("invalid number: leading zeros are not allowed", at: start)
        }
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (m2, o2) = m1.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            if o1 || o2 || m2 > UInt64(Int64.max) + (negative ? 1 : 0) {
                throw failure("number out of the 64-bit integer range", at: start)
            }
            magnitude = m2
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") {
            throw failure(
                "only integer numbers are accepted (write 1, not 1.0 or 1e0; a decimal value goes in a string)",
                at: start)
        }
        if negative { return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude) }
        return Int64(magnitude)
    }

    mutating func parseString() throws(Failure) -> String {
        let open = index
        index += 1  // opening quote
        var scratch: [UInt8] = []
        var runStart = index
        var escaped = false
        var ascii = true
        while true {
            guard index < bytes.count else { throw failure("unterminated string", at: open) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                break
            } else if b == UInt8(ascii: "\\") {
                if !escaped { escaped = true }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                index += 1
                guard index < bytes.count else { throw failure("unterminated escape sequence") }
                let e = bytes[index]
                index += 1
                if let simple = JSONTape.simpleEscape(e) {
                    scratch.append(simple)
                } else if e == UInt8(ascii: "u") {
                    var scalar = try hex4()
                    if scalar >= 0xD800, scalar < 0xDC00 {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw failure("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard low >= 0xDC00, low < 0xE000 else {
                            throw failure("invalid UTF-16 low surrogate in \\u escape")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00, scalar < 0xE000 {
                        throw failure("unpaired UTF-16 surrogate in \\u escape")
                    }
                    if scalar == 0 { throw failure("\\u0000 cannot be stored (PostgreSQL jsonb refuses it)") }
                    JSONTape.appendUTF8(scalar, to: &scratch)
                } else {
                    throw failure("invalid escape '\\\(Self.printable(e))'", at: index - 2)
                }
                runStart = index
            } else if b < 0x20 {
                throw failure("control character in string (escape it)")
            } else {
                if b >= 0x80 { ascii = false }
                index += 1
            }
        }
        let end = index
        index += 1  // closing quote
        // ASCII is valid UTF-8 as it is: no validation (the common case for ids and keys).
        if !escaped, ascii {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<end]), as: UTF8.self)
        }
        if !escaped {
            guard let s = String(validating: UnsafeBufferPointer(rebasing: bytes[runStart..<end]), as: UTF8.self) else {
                throw failure("invalid UTF-8 in string", at: open)
            }
            return s
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<end]))
        guard let s = String(validating: scratch, as: UTF8.self) else {
            throw failure("invalid UTF-8 in string", at: open)
        }
        return s
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw failure("invalid hex digit in \\u escape")
            }
            v = v << 4 | d
            index += 1
        }
        return v
    }

    mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        if depth > Self.maximumDepth { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated array, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            throw failure("expected ',' or ']' in array")
        }
    }

    mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        if depth > Self.maximumDepth { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        var members: [JSONMember] = []
        // Objects are small: duplicates are found by comparing keys, with a set only for large ones.
        var seen: Set<[UInt8]>?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a string key in object")
            }
            let keyStart = index
            let key = try parseString()
            let duplicate: Bool
            if members.count < 16 {
                duplicate = members.contains { JSONMember.sameBytes($0.key, key) }
            } else {
                if seen == nil { seen = Set(members.map { Array($0.key.utf8) }) }
                duplicate = !seen!.insert(Array(key.utf8)).inserted
            }
            if duplicate { throw failure("duplicate key \"\(key)\"", at: keyStart) }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("expected ':' after object key")
            }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try parseValue(depth: depth)))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated object, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                // PostgreSQL's own output is already in jsonb order: check before sorting.
                if members.count > 1,
                    !zip(members, members.dropFirst()).allSatisfy({ JSONMember.jsonbOrder($0.key, $1.key) })
                {
                    members.sort { JSONMember.jsonbOrder($0.key, $1.key) }
                }
                return .object(members)
            }
            throw failure("expected ',' or '}' in object")
        }
    }
}
