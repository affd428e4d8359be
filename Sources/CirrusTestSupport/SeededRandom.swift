// SeededRandom: a small, fast, repeatable random source for model-based tests.
//
// Every randomized test draws its seed through `TestSeed.next(...)`, prints it, and can be
// replayed by setting CIRRUS_SEED=<seed> in the environment.

import Foundation

/// SplitMix64: tiny, fast, statistically adequate for tests, and identical on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly random element index below `n` (n > 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
}

/// Seeds for randomized tests: from `CIRRUS_SEED` when set (to replay a failure), otherwise
/// from the clock. The caller prints the seed in its failure messages.
public enum TestSeed {
    public static func next() -> UInt64 {
        if let s = ProcessInfo.processInfo.environment["CIRRUS_SEED"], let v = UInt64(s) { return v }
        return UInt64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds) &* 0x2545_F491_4F6C_DD1D
    }
}
