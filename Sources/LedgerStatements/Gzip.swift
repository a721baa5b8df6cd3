/// gzip (RFC 1952) around DEFLATE (RFC 1951), decoded in Swift: WeChat Pay serves its bills
/// gzipped when asked (`tar_type=GZIP`). Small and direct (one bit at a time through canonical
/// Huffman codes), which is plenty for a day's bill; each member's CRC-32 and length are checked.
enum Gzip {
    struct Failure: Error, Sendable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Whether `bytes` start like a gzip stream.
    static func isGzip(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B }

    /// The decompressed bytes of every member, one after another.
    static func decompress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        var at = 0
        while at < bytes.count {
            guard bytes.count - at >= 18, bytes[at] == 0x1F, bytes[at + 1] == 0x8B else {
                if out.isEmpty { throw Failure("not a gzip stream") }
                break  // trailing bytes after the last member (padding) are ignored
            }
            guard bytes[at + 2] == 8 else { throw Failure("compression method \(bytes[at + 2]) is not deflate") }
            let flags = bytes[at + 3]
            var p = at + 10
            func need(_ n: Int) throws(Failure) {
                guard p + n <= bytes.count else { throw Failure("the gzip header is cut short") }
            }
            if flags & 4 != 0 {
                try need(2)
                let extra = Int(bytes[p]) | Int(bytes[p + 1]) << 8
                p += 2
                try need(extra)
                p += extra
            }
            for bit in [UInt8(8), 16] where flags & bit != 0 {
                while true {
                    try need(1)
                    p += 1
                    if bytes[p - 1] == 0 { break }
                }
            }
            if flags & 2 != 0 {
                try need(2)
                p += 2
            }
            var inflater = Inflater(bytes, from: p)
            let start = out.count
            try inflater.run(into: &out)
            p = inflater.bytePosition
            guard p + 8 <= bytes.count else { throw Failure("the gzip trailer is missing") }
            let crc =
                UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24
            let size =
                UInt32(bytes[p + 4]) | UInt32(bytes[p + 5]) << 8 | UInt32(bytes[p + 6]) << 16 | UInt32(bytes[p + 7])
                << 24
            guard crc == CRC32.checksum(out[start...]) else {
                throw Failure("the CRC-32 does not match: the download is corrupt")
            }
            guard size == UInt32(truncatingIfNeeded: out.count - start) else {
                throw Failure("the length does not match: the download is corrupt")
            }
            at = p + 8
        }
        return out
    }
}

/// CRC-32 (IEEE 802.3, reflected), as gzip checks it.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { (n: Int) -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

/// A DEFLATE stream's decoder.
struct Inflater {
    typealias Failure = Gzip.Failure

    /// A canonical Huffman code: how many codes of each length, and the symbols in code order.
    struct Code {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) throws(Failure) {
            for l in lengths { counts[l] += 1 }
            counts[0] = 0
            var left = 1
            for len in 1...15 {
                left = left * 2 - counts[len]
                guard left >= 0 else { throw Failure("a Huffman code is over-subscribed") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for len in 1..<15 { offsets[len + 1] = offsets[len] + counts[len] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, l) in lengths.enumerated() where l != 0 {
                symbols[offsets[l]] = symbol
                offsets[l] += 1
            }
        }
    }

    let input: [UInt8]
    var position: Int
    var bitBuffer = 0
    var bitCount = 0

    init(_ input: [UInt8], from position: Int) {
        self.input = input
        self.position = position
    }

    /// The byte after the stream's last (partly) used byte.
    var bytePosition: Int { position }

    mutating func bits(_ n: Int) throws(Failure) -> Int {
        while bitCount < n {
            guard position < input.count else { throw Failure("the compressed data is cut short") }
            bitBuffer |= Int(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        let v = bitBuffer & ((1 << n) - 1)
        bitBuffer >>= n
        bitCount -= n
        return v
    }

    mutating func decode(_ code: Code) throws(Failure) -> Int {
        var first = 0, index = 0, value = 0
        for len in 1...15 {
            value |= try bits(1)
            let count = code.counts[len]
            if value - first < count { return code.symbols[index + value - first] }
            index += count
            first = (first + count) << 1
            value <<= 1
        }
        throw Failure("an invalid Huffman code")
    }

    static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
        4097, 6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    mutating func run(into out: inout [UInt8]) throws(Failure) {
        let start = out.count
        var last = 0
        repeat {
            last = try bits(1)
            switch try bits(2) {
            case 0: try stored(into: &out)
            case 1:
                let lengths =
                    [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112) + [Int](repeating: 7, count: 24)
                    + [Int](repeating: 8, count: 8)
                try codes(
                    try Code(lengths: lengths), try Code(lengths: [Int](repeating: 5, count: 30)), into: &out,
                    start: start)
            case 2: try dynamic(into: &out, start: start)
            default: throw Failure("an invalid block type")
            }
        } while last == 0
        // The stream ends within its last byte: drop the unused bits.
        bitBuffer = 0
        bitCount = 0
    }

    mutating func stored(into out: inout [UInt8]) throws(Failure) {
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else { throw Failure("the compressed data is cut short") }
        let len = Int(input[position]) | Int(input[position + 1]) << 8
        let nlen = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard len == ~nlen & 0xFFFF else { throw Failure("a stored block's length does not match its complement") }
        position += 4
        guard position + len <= input.count else { throw Failure("the compressed data is cut short") }
        out.append(contentsOf: input[position..<position + len])
        position += len
    }

    mutating func dynamic(into out: inout [UInt8], start: Int) throws(Failure) {
        let nlen = try bits(5) + 257, ndist = try bits(5) + 1, ncode = try bits(4) + 4
        guard nlen <= 286, ndist <= 30 else { throw Failure("too many Huffman codes") }
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for i in 0..<ncode { codeLengths[order[i]] = try bits(3) }
        let lencode = try Code(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < nlen + ndist {
            let symbol = try decode(lencode)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure("a repeat with no previous length") }
                lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
            }
        }
        guard lengths.count == nlen + ndist else { throw Failure("the code lengths run past their count") }
        guard lengths[256] != 0 else { throw Failure("no end-of-block code") }
        try codes(
            try Code(lengths: Array(lengths[..<nlen])), try Code(lengths: Array(lengths[nlen...])), into: &out,
            start: start)
    }

    mutating func codes(_ literals: Code, _ distances: Code, into out: inout [UInt8], start: Int) throws(Failure) {
        while true {
            let symbol = try decode(literals)
            if symbol < 256 {
                out.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let s = symbol - 257
            guard s < 29 else { throw Failure("an invalid length code") }
            let length = Self.lengthBase[s] + (try bits(Self.lengthExtra[s]))
            let d = try decode(distances)
            guard d < 30 else { throw Failure("an invalid distance code") }
            let distance = Self.distanceBase[d] + (try bits(Self.distanceExtra[d]))
            guard distance <= out.count - start else {
                throw Failure("a distance reaches before the start of the data")
            }
            let from = out.count - distance
            for i in 0..<length { out.append(out[from + i]) }
        }
    }
}
