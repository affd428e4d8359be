// Calibrate+Output: from measured figures to the planner's constants — the table printed, the
// generated Swift source (Sources/QueryPlanner/CalibratedCosts.swift) and a JSON form.
//
// Each constant is a ratio to the fetch (one base row fetched whole and one filter evaluated),
// the planner's unit. `constants` says which figure (or mean of figures) each one comes from;
// ratios are rounded to three significant digits so that a re-run on the same machine changes
// the file only where a figure really moved.

import Foundation

struct CalibrationResult {
    var figures: [Figure]
    var machine: MachineInfo
    var loadBefore: String
    var size: Int
    var delta: Int
    var rounds: Int
    /// What generated the file (`make calibrate`) and the qbench command line it ran.
    var command: String
    var invocation: String

    /// How a constant comes from figures: the mean of their medians (ns per unit), or a line
    /// fitted through them — ns per call = start + perUnit × units per call — for operators with
    /// a fixed cost per call (an R-tree descent, a heap set up, words tokenized and looked up),
    /// measured at several sizes.
    enum Source {
        case mean([String])
        case perUnit([String])
        case start([String])

        var figures: [String] {
            switch self {
            case .mean(let f), .perUnit(let f), .start(let f): f
            }
        }
        var text: String {
            switch self {
            case .mean(let f): f.joined(separator: ", ")
            case .perUnit(let f): "slope over " + f.joined(separator: ", ")
            case .start(let f): "intercept over " + f.joined(separator: ", ")
            }
        }
    }

    /// The planner's constants: name, where it comes from, and what it costs.
    static let constants: [(name: String, from: Source, doc: String)] = [
        ("fetch", .mean(["fetch.base"]), "One record fetched whole by row id and one filter evaluated: the unit."),
        (
            "fetchFields", .mean(["fetch.base.fields"]),
            "A set plan's candidate: only its filter and sort fields decoded, then filtered."
        ),
        (
            "columnRow", .mean(["fetch.base.column"]),
            "A set plan's candidate whose filter and sort fields all have columns: read from them, then filtered."
        ),
        (
            "entry", .mean(["entry.int64", "entry.string"]),
            "One entry of an ordered index scanned in order (a stream's step)."
        ),
        (
            "rangeRow", .mean(["range.1%", "range.10%"]),
            "One row of an ordered range materialized as a sorted row-id set."
        ),
        (
            "lookupRow", .mean(["lookup.in3", "lookup.list"]),
            "One row of an IN or list-element lookup, as a sorted row-id set."
        ),
        ("prefixRow", .mean(["prefix"]), "One row of a BEGINSWITH prefix, as a sorted row-id set."),
        ("textStart", .start(["text.any", "text.all"]), "A text search's fixed cost: tokenizing, finding postings."),
        ("posting", .perUnit(["text.any", "text.all"]), "One estimated row of a text search, as a sorted row-id set."),
        (
            "radiusStart", .start(["radius.1km", "radius.10km", "radius.50km"]),
            "A radius query's fixed cost: covering the circle, descending the R-trees."
        ),
        (
            "radiusHit", .perUnit(["radius.1km", "radius.10km", "radius.50km"]),
            "One estimated row of a radius query."
        ),
        (
            "nearestStart", .start(["nearest.21", "nearest.210"]),
            "Starting nearest-first browsing: the first descent and its heap."
        ),
        ("nearestStep", .perUnit(["nearest.21", "nearest.210"]), "One further step of nearest-first browsing."),
        ("compare", .mean(["compare.topk"]), "One unit of a top-k: candidates × log2(k + 2)."),
        ("sortCompare", .mean(["compare.sort"]), "One unit of a full sort: n × log2(n + 2)."),
        ("scanRow", .mean(["scan.rows"]), "One row of the full scan's row list (without filters: no fetch)."),
    ]

    func figure(_ name: String) -> Figure? { figures.first { $0.name == name } }

    /// Nanoseconds of one constant: per unit, or per call for a fitted start.
    func nanoseconds(_ source: Source) -> Double {
        let fs = source.figures.compactMap(figure)
        guard !fs.isEmpty else { return .nan }
        switch source {
        case .mean:
            return fs.map(\.median).reduce(0, +) / Double(fs.count)
        case .perUnit, .start:
            let (start, slope) = Self.fit(fs.map { ($0.unitsPerCall, $0.perCall) })
            return source.isStart ? start : slope
        }
    }

    /// Least squares y = a + b·x, with a ≥ 0 (refitted through the origin when negative).
    static func fit(_ points: [(Double, Double)]) -> (Double, Double) {
        let n = Double(points.count)
        let mx = points.map(\.0).reduce(0, +) / n
        let my = points.map(\.1).reduce(0, +) / n
        let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
        let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
        let b = sxx > 0 ? sxy / sxx : my / max(mx, 1)
        let a = my - b * mx
        if a >= 0, b > 0 { return (a, b) }
        let through = points.map { $0.0 * $0.1 }.reduce(0, +) / max(1, points.map { $0.0 * $0.0 }.reduce(0, +))
        return (0, through)
    }

    var fetchNs: Double { nanoseconds(.mean(["fetch.base"])) }

    /// A ratio to the fetch, to three significant digits.
    func ratio(_ ns: Double) -> Double {
        let r = ns / fetchNs
        guard r.isFinite, r > 0 else { return 0 }
        let digits = 2 - Int(floor(log10(r)))
        let scale = pow(10, Double(digits))
        return (r * scale).rounded() / scale
    }

    static func number(_ d: Double) -> String {
        var s = String(format: "%.6f", d)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s += "0" }
        return s
    }

    func table() -> String {
        var out = "\nfigure               ns/unit    low–high (ns)        ratio   units/call  unit\n"
        for f in figures {
            out +=
                f.name.padding(toLength: 20, withPad: " ", startingAt: 0)
                + String(format: "%8.1f   ", f.median)
                + String(format: "%7.1f–%-9.1f  ", f.low, f.high)
                + String(format: "%8.4f   ", f.median / fetchNs)
                + String(format: "%9.1f  ", f.unitsPerCall) + " " + f.unit + "\n"
        }
        out += "\nconstant       ns (per unit; a start: per call)   ratio to fetch   from\n"
        for c in Self.constants {
            let ns = nanoseconds(c.from)
            out +=
                c.name.padding(toLength: 14, withPad: " ", startingAt: 0)
                + String(format: "%8.1f", ns).padding(toLength: 33, withPad: " ", startingAt: 0)
                + Self.number(ratio(ns)).padding(toLength: 17, withPad: " ", startingAt: 0)
                + c.from.text + "\n"
        }
        return out
    }

    func swiftSource() -> String {
        var s = """
            // CalibratedCosts: the planner's cost constants, measured by `qbench calibrate` — GENERATED,
            // do not edit by hand; re-run `make calibrate` (docs/benchmarks.md, "Planner calibration").
            //
            // Generated by: \(command)
            // Which ran: \(invocation)
            // Machine: \(machine.host): \(machine.cpu), \(machine.cores) cores, \(machine.os)
            // Measured: \(machine.date), load average \(loadBefore) before, \(machine.load) after;
            // \(size) places bulk-imported (mapped base) + \(delta) saved (delta), release build,
            // medians over \(rounds) interleaved rounds.
            //
            // Each constant is the time of one unit of an operator divided by the time of one record
            // fetch (the unit, \(String(format: "%.1f", fetchNs)) ns here). The planner only reads these numbers; it never
            // measures at run time.
            //
            // figure               ns/unit   low–high (ns)
            """
        s += "\n"
        for f in figures {
            s +=
                "// " + f.name.padding(toLength: 20, withPad: " ", startingAt: 0)
                + String(format: "%8.1f  %7.1f–%.1f", f.median, f.low, f.high) + "\n"
        }
        s += """

            /// The planner's cost units, measured on the development machine by `qbench calibrate`: one
            /// record fetched and evaluated costs 1; every other constant is its measured time relative
            /// to that.
            enum Cost {

            """
        for c in Self.constants {
            let ns = nanoseconds(c.from)
            s += "    /// \(c.doc)\n"
            s += "    /// Measured: \(String(format: "%.1f", ns)) ns (\(c.from.text)).\n"
            s += "    static let \(c.name) = \(Self.number(c.name == "fetch" ? 1 : ratio(ns)))\n"
        }
        s += "}\n"
        return s
    }

    func json() -> String {
        var root: [String: Any] = [
            "command": command, "host": machine.host, "cpu": machine.cpu, "cores": machine.cores, "os": machine.os,
            "date": machine.date, "invocation": invocation, "loadBefore": loadBefore, "loadAfter": machine.load,
            "size": size, "delta": delta,
            "rounds": rounds,
        ]
        root["figures"] = figures.map {
            ["name": $0.name, "unit": $0.unit, "medianNs": $0.median, "lowNs": $0.low, "highNs": $0.high]
                as [String: Any]
        }
        root["constants"] = Self.constants.map { c -> [String: Any] in
            let ns = nanoseconds(c.from)
            return ["name": c.name, "ns": ns, "ratio": c.name == "fetch" ? 1 : ratio(ns), "from": c.from.text]
        }
        let data =
            (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

extension CalibrationResult.Source {
    var isStart: Bool {
        if case .start = self { return true }
        return false
    }
}
