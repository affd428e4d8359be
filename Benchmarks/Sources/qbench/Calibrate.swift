// Calibrate: `qbench calibrate` — measures, on this machine, the time of one unit of each
// operator the query planner costs, and writes the planner's cost constants from it
// (Sources/QueryPlanner/CalibratedCosts.swift; `make calibrate`).
//
// The data is the generated places (Places.swift) in a real container: `--size` records bulk-
// imported into mapped data segments (the base) plus `--delta` more saved through
// `modifyRecords` (the in-memory delta), so fetches and index reads go through the same code a
// query does (`RecordTypeSnapshot`, the layered `OrderedIndex`, `TextIndex`, `SpatialIndex`).
//
// Method (Calibrate+Harness.swift): every operator is a list of cases drawn with a fixed seed;
// a round runs one operator's cases (repeated to about `--round-ms`) and divides the time by
// the units the cases produced (rows fetched, entries scanned, …). Rounds of all operators are
// interleaved, so a burst of load on this shared machine hits every operator alike, and each
// figure is the median over `--rounds` rounds (the spread is printed beside it). The constants
// are the medians divided by the fetch's median: the planner's unit is one record fetched and
// evaluated.

import ArgumentParser
import Cirrus
import Foundation
import RecordModel

struct Calibrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure the planner's operator costs on this machine; write them as the planner's constants.")

    @Option(help: "Records in the base (bulk-imported into data segments).")
    var size = 100_000
    @Option(help: "Records saved after the import (the in-memory delta).")
    var delta = 4_000
    @Option(help: "Rounds per operator; each figure is the median over them.")
    var rounds = 15
    @Option(help: "Approximate milliseconds per round.")
    var roundMs = 20.0
    @Option(help: "Data seed (cases use a seed derived from it).")
    var seed: UInt64 = 42
    @Option(help: "Write the result: a Swift source (.swift, the planner's CalibratedCosts.swift) or JSON (other).")
    var out: String?
    @Option(help: "What to name as the generator in the generated file's header (e.g. make calibrate).")
    var generatedBy: String?
    @Option(help: "Working directory for the container (default: a fresh one under /tmp, removed afterwards).")
    var dir: String?

    func validate() throws {
        guard size >= 10_000 else { throw ValidationError("--size must be at least 10000") }
        guard delta >= 100, delta <= size else { throw ValidationError("--delta must be 100…size") }
        guard rounds >= 3 else { throw ValidationError("--rounds must be at least 3") }
    }

    func run() async throws {
        let work = dir ?? NSTemporaryDirectory() + "qbench-calibrate-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(atPath: work) } }

        let machineBefore = MachineInfo.current()
        print("qbench calibrate: \(size) base + \(delta) delta places (seed \(seed)) on \(machineBefore.summary)")
        let data = PlaceSet(size: size + delta, seed: seed)
        let peer = try CirrusPeer(directory: work + "/cirrus", durability: .none)
        let rejected = try peer.container.importRecords(
            bulk: data.places[0..<size].map(\.record), into: .public)
        guard rejected.isEmpty else { throw ValidationError("bulk import rejected \(rejected.count) records") }
        try await peer.ingest(data.places[size...], batch: 400) { _ in }
        let snapshot = peer.db.querySnapshot(recordType: "Place")!
        guard snapshot.rowCount == size + delta else {
            throw ValidationError("the snapshot holds \(snapshot.rowCount) rows, expected \(size + delta)")
        }

        var operators = CalibrationOperators(data: data, snapshot: snapshot, baseRows: size, seed: seed ^ 0xCA11)
        let probes = try operators.probes()
        let harness = Harness(rounds: rounds, roundNs: roundMs * 1e6)
        let figures = harness.measure(probes) { name in print("  measuring \(name)…") }
        let machine = MachineInfo.current()
        let result = CalibrationResult(
            figures: figures, machine: machine, loadBefore: machineBefore.load, size: size, delta: delta,
            rounds: rounds, command: generatedBy ?? Self.commandLine(), invocation: Self.commandLine())
        print(result.table())
        if let out {
            let text = out.hasSuffix(".swift") ? result.swiftSource() : result.json()
            try text.write(toFile: out, atomically: true, encoding: .utf8)
            print("wrote \(out)")
        }
        try peer.close()
    }

    /// This run's qbench arguments (without `--generated-by`), quoted where needed.
    static func commandLine() -> String {
        var args: [String] = []
        var skip = false
        for a in CommandLine.arguments.dropFirst() {
            if skip {
                skip = false
                continue
            }
            if a == "--generated-by" {
                skip = true
                continue
            }
            if a.hasPrefix("--generated-by=") { continue }
            args.append(a.contains(" ") ? "'\(a)'" : a)
        }
        return (["qbench"] + args).joined(separator: " ")
    }
}

/// Where the figures were measured: host, CPU, cores, OS, load, time.
struct MachineInfo {
    var host: String
    var cpu: String
    var cores: Int
    var os: String
    var load: String
    var date: String

    var summary: String { "\(host): \(cpu), \(cores) cores, \(os); load \(load)" }

    static func current() -> MachineInfo {
        let info = ProcessInfo.processInfo
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown CPU"
        let loadavg = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        let load = loadavg.split(separator: " ").prefix(3).joined(separator: " ")
        let date = ISO8601DateFormatter().string(from: Date())
        return MachineInfo(
            host: info.hostName, cpu: model, cores: info.activeProcessorCount,
            os: info.operatingSystemVersionString, load: load.isEmpty ? "unknown" : load, date: date)
    }
}
