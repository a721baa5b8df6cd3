/// A small, fast, deterministic random number generator (SplitMix64): the simulator's histories,
/// the benchmark's generated logs and the tests' fuzz inputs are the same for the same seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<n` (0 when `n` is 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
}
