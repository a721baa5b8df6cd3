/// A ``ViewTable``'s index from keys to offsets: an open-addressing hash table whose slots hold a
/// key's 32 hash bits and its offset (plus one; a zero slot is empty), eight bytes each, probed
/// linearly and kept at most three quarters full.
///
/// The index keeps no keys: a slot whose hash bits match is confirmed by the caller's `matches`,
/// which compares the key at that offset wherever the table keeps it (in memory, or spilled). A
/// `[String: Int]` kept a copy of each key and its offset in 24-byte slots, three times the
/// memory, and hashed every key again each time it grew; this index grows from the hash bits it
/// keeps.
@usableFromInline struct KeyIndex: Sendable {
    @usableFromInline var slots: [UInt64] = []
    @usableFromInline var count = 0

    @inlinable init() {}

    @inline(__always)
    @inlinable static func hash(_ key: String) -> UInt32 { UInt32(truncatingIfNeeded: key.hashValue) }

    @inline(__always)
    @inlinable static func slot(_ hash: UInt32, _ offset: Int) -> UInt64 {
        precondition(offset < Int(UInt32.max), "a table of more than \(UInt32.max - 1) views")
        return UInt64(hash) << 32 | UInt64(offset + 1)
    }

    @inline(__always)
    @inlinable static func offset(_ slot: UInt64) -> Int { Int(truncatingIfNeeded: slot & 0xffff_ffff) - 1 }

    /// Room for `n` keys without growing.
    @inlinable mutating func reserveCapacity(_ n: Int) {
        var capacity = max(8, slots.count)
        while n * 4 > capacity * 3 { capacity *= 2 }
        if capacity > slots.count { resize(capacity) }
    }

    /// The slot holding the key with `hash` for which `matches(offset)` is true, if there is one.
    @inline(__always)
    @inlinable func slot(_ hash: UInt32, matches: (Int) throws -> Bool) rethrows -> Int? {
        guard count > 0 else { return nil }
        return try slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var i = Int(hash) & mask
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if UInt32(truncatingIfNeeded: s >> 32) == hash, try matches(Self.offset(s)) { return i }
                i = (i + 1) & mask
            }
        }
    }

    /// The offset of the key with `hash` for which `matches(offset)` is true, if there is one.
    @inline(__always)
    @inlinable func offset(_ hash: UInt32, matches: (Int) throws -> Bool) rethrows -> Int? {
        try slot(hash, matches: matches).map { Self.offset(slots[$0]) }
    }

    /// Adds a key (with `hash`) the index does not have, at `offset`.
    @inlinable mutating func insert(_ hash: UInt32, offset: Int) {
        if (count + 1) * 4 > slots.count * 3 { resize(max(8, slots.count * 2)) }
        let mask = slots.count - 1
        var i = Int(hash) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = Self.slot(hash, offset)
        count += 1
    }

    /// Points the key in `slot` at `offset` instead.
    @inlinable mutating func move(slot i: Int, to offset: Int) {
        slots[i] = Self.slot(UInt32(truncatingIfNeeded: slots[i] >> 32), offset)
    }

    /// Empties `slot`. The slots after it that it displaced move back, so every probe still ends
    /// at the first empty slot (no tombstones).
    @inlinable mutating func remove(slot: Int) {
        var hole = slot
        let mask = slots.count - 1
        var j = hole
        while true {
            j = (j + 1) & mask
            let s = slots[j]
            if s == 0 { break }
            let home = Int(s >> 32) & mask
            // `s` may fill the hole unless its home lies cyclically in (hole, j].
            let homeAfterHole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)
            if !homeAfterHole {
                slots[hole] = s
                hole = j
            }
        }
        slots[hole] = 0
        count -= 1
    }

    @inlinable mutating func resize(_ capacity: Int) {
        let old = slots
        slots = Array(repeating: 0, count: capacity)
        let mask = capacity - 1
        for s in old where s != 0 {
            var i = Int(s >> 32) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = s
        }
    }
}
