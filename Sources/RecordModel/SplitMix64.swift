// SplitMix64 (Steele, Lea, Flood 2014): the one seeded generator of the project — tests, the
// demo data, qbench's data sets and the container's repeatable random source all draw from it,
// so the same seed gives the same values on every platform.

/// A tiny, fast, repeatable generator: 64 bits of state, statistically adequate for tests and
/// generated data (not for secrets: `SystemRandomSource` makes cursor secrets).
///
/// ```swift
/// var a = SplitMix64(seed: 42)
/// var b = SplitMix64(seed: 42)
/// a.next() == b.next()            // true: the same seed gives the same sequence everywhere
/// let die = 1 + a.below(6)        // 1…6
/// let shuffled = [1, 2, 3].shuffled(using: &a)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The generator's whole state; two generators with the same state produce the same values.
    public private(set) var state: UInt64

    /// A generator whose sequence is determined by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, n); 0 when n ≤ 1.
    public mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }

    /// Uniform in [0, 1), from the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }
}
