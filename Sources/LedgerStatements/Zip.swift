/// A zip archive (PKWARE's APPNOTE) of one file: Google Play keeps its financial reports in its
/// Cloud Storage bucket as zip files (`earnings/earnings_YYYYMM_….zip`), each the one CSV. The file
/// is found through the central directory, stored or deflated (``Inflater``), and its CRC-32 and
/// length are checked. An archive of several files, an encrypted one or a zip64 one is refused.
enum Zip {
    typealias Failure = Gzip.Failure

    /// Whether `bytes` start like a zip archive (a local file header).
    static func isZip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B && bytes[2] == 3 && bytes[3] == 4
    }

    /// The one file the archive holds, and its name.
    static func extract(_ bytes: [UInt8]) throws(Failure) -> (name: String, bytes: [UInt8]) {
        func u16(_ p: Int) -> Int { Int(bytes[p]) | Int(bytes[p + 1]) << 8 }
        func u32(_ p: Int) -> Int { u16(p) | u16(p + 2) << 16 }
        // The end of central directory record: 22 bytes and a comment of at most 65,535, at the end.
        let lowest = max(0, bytes.count - 22 - 65_535)
        var end = bytes.count - 22
        while end >= lowest, !(u32(end) == 0x0605_4B50 && end + 22 + u16(end + 20) == bytes.count) { end -= 1 }
        guard end >= lowest else { throw Failure("no end of central directory: the zip file is cut short") }
        let entries = u16(end + 10)
        var at = u32(end + 16)
        var files: [(name: String, method: Int, crc: UInt32, size: Int, compressed: Int, local: Int)] = []
        for _ in 0..<entries {
            guard at + 46 <= end, u32(at) == 0x0201_4B50 else { throw Failure("the central directory is damaged") }
            let nameLength = u16(at + 28)
            guard at + 46 + nameLength <= end else { throw Failure("the central directory is damaged") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            guard u16(at + 8) & 1 == 0 else { throw Failure("\(name) is encrypted") }
            let sizes = (compressed: u32(at + 20), size: u32(at + 24), local: u32(at + 42))
            guard sizes.compressed != 0xFFFF_FFFF, sizes.size != 0xFFFF_FFFF, sizes.local != 0xFFFF_FFFF else {
                throw Failure("\(name) is in zip64 form, which is not read")
            }
            if !name.hasSuffix("/") {
                files.append(
                    (name, u16(at + 10), UInt32(u32(at + 16)), sizes.size, sizes.compressed, sizes.local))
            }
            at += 46 + nameLength + u16(at + 30) + u16(at + 32)
        }
        guard files.count == 1, let file = files.first else {
            throw Failure(
                "the archive holds \(files.count) files (\(files.map(\.name).joined(separator: ", "))): unpack the statement and give it alone"
            )
        }
        let local = file.local
        guard local + 30 <= bytes.count, u32(local) == 0x0403_4B50 else {
            throw Failure("\(file.name): its local header is missing")
        }
        let start = local + 30 + u16(local + 26) + u16(local + 28)
        guard start + file.compressed <= bytes.count else { throw Failure("\(file.name) is cut short") }
        var out: [UInt8] = []
        switch file.method {
        case 0: out = Array(bytes[start..<(start + file.compressed)])
        case 8:
            var inflater = Inflater(Array(bytes[start..<(start + file.compressed)]), from: 0)
            try inflater.run(into: &out)
        case let method: throw Failure("\(file.name): compression method \(method) is not stored or deflate")
        }
        guard out.count == file.size, CRC32.checksum(out[...]) == file.crc else {
            throw Failure("\(file.name): the CRC-32 or the length does not match: the download is corrupt")
        }
        return (file.name, out)
    }
}
