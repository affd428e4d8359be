// Calibrate+Harness: timing of the calibration probes — rounds of one operator's cases, each
// round's time divided by the units its cases produced; rounds of every operator interleaved
// so that load bursts on a shared machine spread over all of them; medians over rounds.

import Foundation

/// One operator to time: its cases produce units (rows fetched, entries scanned, …).
struct CostProbe {
    /// Short name, e.g. `fetch.base`.
    var name: String
    /// What one unit is, for the table.
    var unit: String
    /// Number of cases; `run(i)` runs case `i` and returns the units it produced.
    var cases: Int
    var run: (Int) -> Int
    /// Divides the units: e.g. log2(k + 2) comparisons per candidate of a top-k.
    var unitsPerResult: Double = 1
}

/// A probe's measured figure.
struct Figure {
    var name: String
    var unit: String
    /// Median ns per unit over the rounds, and the spread (lowest and highest round).
    var median: Double
    var low: Double
    var high: Double
    /// Units per round (the work each round timed) and the operator calls that produced them.
    var unitsPerRound: Int
    var callsPerRound: Int
    /// Median ns per call (the units per call are the same in every round).
    var perCall: Double { median * Double(unitsPerRound) * unitsPerResult / Double(max(1, callsPerRound)) }
    var unitsPerCall: Double { Double(unitsPerRound) * unitsPerResult / Double(max(1, callsPerRound)) }
    var unitsPerResult: Double
}

struct Harness {
    let rounds: Int
    let roundNs: Double

    /// Times every probe: a warm-up pass sets how many passes over its cases fill one round,
    /// then `rounds` rounds, each running every probe once (starting at a rotating probe).
    func measure(_ probes: [CostProbe], progress: (String) -> Void) -> [Figure] {
        var passes: [Int] = []
        for p in probes {
            progress(p.name)
            var sink = 0
            let t0 = Measure.now()
            for i in 0..<p.cases { sink &+= p.run(i) }
            let once = Double(Measure.now() - t0)
            passes.append(max(1, Int((roundNs / max(once, 1)).rounded(.up))))
            if sink == -1 { print("") }
        }
        var perUnit: [[Double]] = Array(repeating: [], count: probes.count)
        var units: [Int] = Array(repeating: 0, count: probes.count)
        for r in 0..<rounds {
            for k in probes.indices {
                let j = (k + r) % probes.count
                let p = probes[j]
                var n = 0
                let t0 = Measure.now()
                for _ in 0..<passes[j] {
                    for i in 0..<p.cases { n &+= p.run(i) }
                }
                let t = Double(Measure.now() - t0)
                units[j] = n
                perUnit[j].append(t / max(1, Double(n) * p.unitsPerResult))
            }
        }
        return probes.indices.map { j in
            let xs = perUnit[j].sorted()
            return Figure(
                name: probes[j].name, unit: probes[j].unit, median: xs[xs.count / 2], low: xs[0],
                high: xs[xs.count - 1],
                unitsPerRound: units[j], callsPerRound: passes[j] * probes[j].cases,
                unitsPerResult: probes[j].unitsPerResult)
        }
    }
}
