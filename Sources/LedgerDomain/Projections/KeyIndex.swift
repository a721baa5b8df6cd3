/// A ``ViewTable``'s index from keys to offsets: an open-addressing hash table whose slots hold a
/// key's 32 hash bits and its offset (plus one; a zero slot is empty), eight bytes each, probed
/// linearly and kept at most three quarters full.
///
/// The keys themselves stay in the table's `keys` array, which every call passes in: a slot whose
/// hash bits match is confirmed by comparing the key at its offset. A `[String: Int]` kept a copy
/// of each key and its offset in 24-byte slots, three times the memory, and hashed every key again
/// each time it grew; this index grows from the hash bits it keeps.
struct KeyIndex: Sendable {
    private var slots: [UInt64] = []
    private var count = 0

    init() {}

    @inline(__always)
    private static func hash(_ key: String) -> UInt32 { UInt32(truncatingIfNeeded: key.hashValue) }

    @inline(__always)
    private static func slot(_ hash: UInt32, _ offset: Int) -> UInt64 {
        precondition(offset < Int(UInt32.max), "a table of more than \(UInt32.max - 1) views")
        return UInt64(hash) << 32 | UInt64(offset + 1)
    }

    @inline(__always)
    private static func offset(_ slot: UInt64) -> Int { Int(truncatingIfNeeded: slot & 0xffff_ffff) - 1 }

    /// Room for `n` keys without growing.
    mutating func reserveCapacity(_ n: Int) {
        var capacity = max(8, slots.count)
        while n * 4 > capacity * 3 { capacity *= 2 }
        if capacity > slots.count { resize(capacity) }
    }

    /// The slot of `key`, or of the empty slot where it would go.
    @inline(__always)
    private func find(_ key: String, _ hash: UInt32, in keys: [String]) -> (slot: Int, found: Bool) {
        slots.withUnsafeBufferPointer { slots in
            keys.withUnsafeBufferPointer { keys in
                let mask = slots.count - 1
                var i = Int(hash) & mask
                while true {
                    let s = slots[i]
                    if s == 0 { return (i, false) }
                    if UInt32(truncatingIfNeeded: s >> 32) == hash && keys[Self.offset(s)] == key { return (i, true) }
                    i = (i + 1) & mask
                }
            }
        }
    }

    /// The offset of `key`, if it has one.
    @inline(__always)
    func offset(of key: String, in keys: [String]) -> Int? {
        guard count > 0 else { return nil }
        let (i, found) = find(key, Self.hash(key), in: keys)
        return found ? Self.offset(slots[i]) : nil
    }

    /// Adds `key` at `offset`; false (and nothing added) when the index has it already.
    @discardableResult
    mutating func insert(_ key: String, offset: Int, in keys: [String]) -> Bool {
        if (count + 1) * 4 > slots.count * 3 { resize(max(8, slots.count * 2)) }
        let hash = Self.hash(key)
        let (i, found) = find(key, hash, in: keys)
        guard !found else { return false }
        slots[i] = Self.slot(hash, offset)
        count += 1
        return true
    }

    /// Points `key` (in the index) at `offset` instead.
    mutating func move(_ key: String, to offset: Int, in keys: [String]) {
        let hash = Self.hash(key)
        let (i, found) = find(key, hash, in: keys)
        precondition(found, "\(key) is not in the index")
        slots[i] = Self.slot(hash, offset)
    }

    /// Removes `key` (in the index). The slots after it that it displaced move back, so every
    /// probe still ends at the first empty slot (no tombstones).
    mutating func remove(_ key: String, in keys: [String]) {
        var (hole, found) = find(key, Self.hash(key), in: keys)
        precondition(found, "\(key) is not in the index")
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

    private mutating func resize(_ capacity: Int) {
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
