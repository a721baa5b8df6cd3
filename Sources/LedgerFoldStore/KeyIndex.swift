/// A ``ViewTable``'s index from keys to offsets: an open-addressing hash table whose slots hold a
/// key's 32 hash bits and its offset (plus one; a zero slot is empty), eight bytes each, probed
/// linearly and kept at most three quarters full.
///
/// It grows by a quarter at a time, not by doubling: a key's first slot is its hash scaled to the
/// number of slots (``home(_:_:)``), which any number of slots allows, where a mask needs a power of
/// two. Doubling left the index between three eighths and three quarters full, and each time it
/// grew it held the old slots and twice as many new ones at once: the transactions of a
/// 10-million-fact log (1.6 million) crossed three quarters of 2^21 slots near the end of the fold
/// and took 32 MiB of slots, raising a rebuild's peak by about 30 MiB. Grown by a quarter, it is
/// between three fifths and three quarters full, and growing holds 2.25 times the slots for a
/// moment instead of three.
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
        let capacity = max(8, (n * 4 + 2) / 3)
        if capacity > slots.count { resize(capacity) }
    }

    /// The first slot a key with `hash` is looked for in, of `capacity`: the hash scaled to it
    /// (the high bits of hash x capacity).
    @inline(__always)
    @inlinable static func home(_ hash: UInt32, _ capacity: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(hash) &* UInt64(capacity)) >> 32)
    }

    /// The slot after `i`, the first after the last.
    @inline(__always)
    @inlinable static func next(_ i: Int, _ capacity: Int) -> Int { i + 1 == capacity ? 0 : i + 1 }

    /// The slot holding the key with `hash` for which `matches(offset)` is true, if there is one.
    @inline(__always)
    @inlinable func slot(_ hash: UInt32, matches: (Int) throws -> Bool) rethrows -> Int? {
        guard count > 0 else { return nil }
        return try slots.withUnsafeBufferPointer { slots in
            var i = Self.home(hash, slots.count)
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if UInt32(truncatingIfNeeded: s >> 32) == hash, try matches(Self.offset(s)) { return i }
                i = Self.next(i, slots.count)
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
        if (count + 1) * 4 > slots.count * 3 { resize(max(8, slots.count + slots.count / 4)) }
        let capacity = slots.count
        var i = Self.home(hash, capacity)
        while slots[i] != 0 { i = Self.next(i, capacity) }
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
        let capacity = slots.count
        var j = hole
        while true {
            j = Self.next(j, capacity)
            let s = slots[j]
            if s == 0 { break }
            let home = Self.home(UInt32(truncatingIfNeeded: s >> 32), capacity)
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
        for s in old where s != 0 {
            var i = Self.home(UInt32(truncatingIfNeeded: s >> 32), capacity)
            while slots[i] != 0 { i = Self.next(i, capacity) }
            slots[i] = s
        }
    }
}
