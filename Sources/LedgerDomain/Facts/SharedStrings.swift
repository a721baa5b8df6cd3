import Foundation

/// Strings that many payloads repeat (product ids, and the ids of a user, an order or a
/// transaction that each of its facts names), each made once and shared by every fact and view that
/// holds it. A string of more than 15 UTF-8 bytes lives on the heap: ten million facts naming one
/// of a few products made millions of copies of the same few names, about a tenth of a fold's
/// memory, each a `malloc` on the decoding thread. With ids as long as the stores' (16 to 28
/// bytes), sharing every text field took a sixth off a 10-million-fact rebuild's CPU.
///
/// A small table of the strings last made, by a hash of their bytes; a string that finds another
/// in its slot takes the slot. For one thread: a replay makes one per batch of rows it decodes.
public final class SharedStrings {
    private var slots: [String?]

    /// `slots`: a power of two.
    public init(slots: Int = 256) {
        precondition(slots > 0 && slots & (slots - 1) == 0, "slots must be a power of two")
        self.slots = Array(repeating: nil, count: slots)
    }

    /// The string of `bytes` (valid UTF-8): the one made before when it is in the table.
    func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        // Up to 15 bytes a String keeps inline: nothing to share.
        guard bytes.count > 15 else { return String(decoding: bytes, as: UTF8.self) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        let i = Int(truncatingIfNeeded: hash ^ (hash >> 32)) & (slots.count - 1)
        if var seen = slots[i], seen.utf8.count == bytes.count,
            seen.withUTF8({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
        {
            return seen
        }
        let made = String(decoding: bytes, as: UTF8.self)
        slots[i] = made
        return made
    }
}
