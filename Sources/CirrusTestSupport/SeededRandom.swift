// SeededRandom: a small, fast, repeatable random source for model-based tests.
//
// Every randomized test draws its seed through `TestSeed.next(...)`, prints it, and can be
// replayed by setting CIRRUS_SEED=<seed> in the environment.

import Foundation
import RecordModel

/// The tests' generator: SplitMix64 (RecordModel), identical on every platform.
public typealias SeededRandom = SplitMix64

/// Seeds for randomized tests: from `CIRRUS_SEED` when set (to replay a failure), otherwise
/// from the clock. The caller prints the seed in its failure messages.
///
/// ```swift
/// let seed = TestSeed.next()           // CIRRUS_SEED=123 swift test … replays seed 123
/// var rng = SeededRandom(seed: seed)
/// #expect(result == model, "seed \(seed)")
/// ```
public enum TestSeed {
    /// The seed of one randomized test: `CIRRUS_SEED` when set to a decimal UInt64, else one from the clock.
    public static func next() -> UInt64 {
        if let s = ProcessInfo.processInfo.environment["CIRRUS_SEED"], let v = UInt64(s) { return v }
        return UInt64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds) &* 0x2545_F491_4F6C_DD1D
    }
}
