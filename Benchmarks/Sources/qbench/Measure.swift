// Measure: timing helpers. Each sample times a batch of `batch` operations with the monotonic
// clock and records the per-operation average, so sub-microsecond operations are not drowned by
// clock overhead (~25 ns); medians and p99 are over those samples. Results are printed as a
// fixed-width table and can be compared with targets.

import Foundation
import RecordModel

struct Stat {
    var name: String
    var median: Double  // ns per op
    var p99: Double
    var note: String
    /// The figures are bytes, not nanoseconds.
    var bytes = false
}

enum Measure {
    @inline(__always)
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `op(i)` for i in 0..<samples·batch, timing each batch; returns per-op ns stats.
    static func run(_ name: String, samples: Int, batch: Int, note: String = "", _ op: (Int) -> Void) -> Stat {
        var times: [Double] = []
        times.reserveCapacity(samples)
        // Warm-up.
        for i in 0..<min(samples * batch, 1000) { op(i) }
        for s in 0..<samples {
            let t0 = now()
            for j in 0..<batch { op(s * batch + j) }
            let t1 = now()
            times.append(Double(t1 - t0) / Double(batch))
        }
        times.sort()
        let med = times[times.count / 2]
        let p99 = times[min(times.count - 1, Int(Double(times.count) * 0.99))]
        return Stat(name: name, median: med, p99: p99, note: note)
    }

    static func time(_ body: () -> Void) -> Double {
        let t0 = now()
        body()
        return Double(now() - t0)
    }

    static func format(_ ns: Double) -> String {
        if ns >= 1e9 { return String(format: "%.3f s", ns / 1e9) }
        if ns >= 1e6 { return String(format: "%.2f ms", ns / 1e6) }
        if ns >= 1e3 { return String(format: "%.2f µs", ns / 1e3) }
        return String(format: "%.0f ns", ns)
    }

    static func print(_ s: Stat, target: String = "", note: String = "") {
        var s = s
        if !note.isEmpty { s.note = note }
        let line =
            s.name.padding(toLength: 46, withPad: " ", startingAt: 0)
            + (s.bytes ? String(format: "%.1f B", s.median) : format(s.median)).padding(
                toLength: 12, withPad: " ", startingAt: 0)
            + (s.bytes ? String(format: "%.1f B", s.p99) : format(s.p99)).padding(
                toLength: 12, withPad: " ", startingAt: 0)
            + target.padding(toLength: 12, withPad: " ", startingAt: 0) + s.note
        Swift.print(line)
    }
}

/// qbench's generator: SplitMix64 (RecordModel), the tests' generator, for deterministic data.
typealias Rng = SplitMix64

extension SplitMix64 {
    init(state: UInt64) { self.init(seed: state) }
    mutating func gaussian() -> Double {
        let u = max(1e-300, unit())
        return sqrt(-2 * log(u)) * cos(2 * .pi * unit())
    }
}
