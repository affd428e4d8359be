// The `indexes` suite: build, point, range, radius, nearest, text and memory figures of the
// Indexes module against the issue-5 targets, with the alternatives it chose between (geohash
// vs R-tree radius, our packed R-tree vs GEOS STRtree).

import ArgumentParser
import Foundation
import Indexes
import RecordModel

struct IndexesSuite: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "indexes", abstract: "OrderedIndex, TextIndex, SpatialIndex.")

    @Option(help: "Number of records.") var size = 1_000_000
    @Option(help: "Samples per timed operation.") var samples = 2000
    @Option(help: "Data seed.") var seed: UInt64 = 42
    @Flag(help: "Skip the GEOS STRtree comparison.") var noGeos = false
    @Option(help: "B+tree node size (entries per node).") var nodeSize = 64
    @Option(help: "R-tree fanout.") var fanout = 16
    @Option(help: "Parts to run: ordered,spatial,text,facade.") var parts = "ordered,spatial,text,facade"

    func run() throws {
        let n = size
        print("qbench indexes: generating \(n) records (seed \(seed))…")
        let data = DataSet(size: n, seed: seed)
        var rng = Rng(state: seed ^ 0xABCDEF)
        print(
            "operation".padding(toLength: 46, withPad: " ", startingAt: 0) + "median      p99         target      note")

        if parts.contains("ordered") { runOrdered(data, &rng) }
        var sink = 0
        if parts.contains("spatial") { try runSpatial(data, &rng, &sink) }
        if parts.contains("text") { runText(data, &rng, &sink) }
        if parts.contains("facade") { runFacade(data, &rng) }
        if sink == 42 { print("") }
    }

    func runOrdered(_ data: DataSet, _ rng: inout Rng) {
        let n = data.prices.count
        // MARK: ordered index builds
        let priceEntries = (0..<n).map { (FieldValue.double(data.prices[$0]), RowID($0)) }
        let rankEntries = (0..<n).map { (FieldValue.int64(data.ranks[$0]), RowID($0)) }
        let nameEntries = (0..<n).map { (FieldValue.string(data.names[$0]), RowID($0)) }
        var prices = OrderedIndex(family: .number)
        var builds: [Double] = []
        for _ in 0..<3 {
            builds.append(
                Measure.time { prices = OrderedIndex(family: .number, entries: priceEntries, nodeSize: nodeSize) })
        }
        builds.sort()
        Measure.print(
            Stat(name: "ordered build, Double, \(n)", median: builds[1], p99: builds[2], note: "3 runs; p99 = max"),
            target: "≤ 0.5 s")
        var ranks = OrderedIndex(family: .number)
        let tRank = Measure.time { ranks = OrderedIndex(family: .number, entries: rankEntries, nodeSize: nodeSize) }
        Measure.print(Stat(name: "ordered build, Int64 (unique), \(n)", median: tRank, p99: tRank, note: "1 run"))
        var names = OrderedIndex(family: .string)
        let tName = Measure.time { names = OrderedIndex(family: .string, entries: nameEntries, nodeSize: nodeSize) }
        Measure.print(Stat(name: "ordered build, String, \(n)", median: tName, p99: tName, note: "1 run"))

        // MARK: point and range
        let probes = (0..<(samples * 64)).map { _ in data.ranks[rng.below(n)] }
        var sink = 0
        Measure.print(
            Measure.run("point rows(equalTo:) Int64 unique", samples: samples, batch: 64) { i in
                sink &+= ranks.rows(equalTo: .int64(probes[i])).count
            }, target: "≤ 0.5 µs")
        Measure.print(
            Measure.run("point count(equalTo:) Int64", samples: samples, batch: 64) { i in
                sink &+= ranks.count(equalTo: .int64(probes[i]))
            })
        let pprobes = (0..<(samples * 64)).map { _ in FieldValue.double(data.prices[rng.below(n)]) }
        Measure.print(
            Measure.run("point rows(equalTo:) Double (dups)", samples: samples, batch: 64) { i in
                sink &+= prices.rows(equalTo: pprobes[i]).count
            }, note: "avg \(pprobes.prefix(1000).map { prices.count(equalTo: $0) }.reduce(0, +) / 1000) rows")
        let ranges = (0..<(samples * 64)).map { _ -> ValueRange in
            let a = data.prices[rng.below(n)]
            let b = data.prices[rng.below(n)]
            return ValueRange(lower: .included(.double(min(a, b))), upper: .excluded(.double(max(a, b))))
        }
        Measure.print(
            Measure.run("range count(in:) Double", samples: samples, batch: 64) { i in
                sink &+= prices.count(in: ranges[i])
            }, target: "≤ 1 µs")
        Measure.print(
            Measure.run("range page of 20, ascending", samples: samples, batch: 16) { i in
                sink &+= prices.page(ranges[i], limit: 20).count
            })
        Measure.print(
            Measure.run("range page of 20, descending", samples: samples, batch: 16) { i in
                sink &+= prices.page(ranges[i], direction: .descending, limit: 20).count
            })
        let nprobes = (0..<(samples * 16)).map { _ in FieldValue.string(String(data.names[rng.below(n)].prefix(2))) }
        Measure.print(
            Measure.run("prefix count(beginningWith:) String", samples: samples, batch: 16) { i in
                sink &+= names.count(beginningWith: nprobes[i])
            })
        Measure.print(
            Measure.run("ordered insert+remove, Double", samples: samples, batch: 16) { i in
                let v = FieldValue.double(Double(i % 1000) + 0.123)
                prices.insert(v, row: RowID(n + i))
                prices.remove(v, row: RowID(n + i))
            })
        let mem = Double(prices.approximateBytes) / Double(prices.count)
        Measure.print(
            Stat(name: "memory/entry Double index", median: mem, p99: mem, note: "bytes; key+row = 12 B", bytes: true),
            target: "≤ 24 B")
        let memS = Double(names.approximateBytes) / Double(names.count)
        Measure.print(
            Stat(
                name: "memory/entry String index", median: memS, p99: memS,
                note:
                    "bytes; avg key+row = \(data.names.prefix(10000).map { $0.utf8.count }.reduce(0, +) / 10000 + 4) B",
                bytes: true))

        if sink == 42 { print("") }
    }
}
