// Compare+Storage: the storage suites — bulk load (Cirrus's bulk import into data segments vs
// SQLite's inserts in one transaction, same indexes) and "reopen in a fresh process": a child
// `qbench probe` opens the database, times the first lookup, runs 1 000 mixed queries and
// reports its resident memory, once per engine, so neither engine's memory or warm caches
// count for the other (the whole-process figure a command-line user sees).

import ArgumentParser
import Cirrus
import Foundation
import RecordModel

/// One query of the probe's mix, the same on both engines.
struct ProbeQuery: Codable {
    var shape: String  // point | eq-sort | radius | text
    var text: String
    var lat: Double = 0
    var lon: Double = 0
}

/// What a probe child reports.
struct ProbeResult: Codable {
    var openAndFirstLookupNs: Double
    var queriesNs: Double
    var rssAfterOpenBytes: Int
    var rssAfterQueriesBytes: Int
    var peakRSSBytes: Int
}

extension Compare {
    /// Bulk load of all places into fresh databases.
    func bulkSuite(_ data: PlaceSet, work: String, progress: Progress) throws -> SuiteResult {
        let records = data.places.map(\.record)
        progress.show("bulk load Cirrus \(records.count)")
        let cdir = work + "/bulk-cirrus"
        let peer = try CirrusPeer(directory: cdir, durability: .everyCommit)
        let c0 = Measure.now()
        let rejected = try peer.container.importRecords(bulk: records, into: .public)
        let ct = Double(Measure.now() - c0)
        guard rejected.isEmpty else {
            throw ValidationError(
                "bulk load rejected \(rejected.count) records: \(rejected.first.map { "\($0.1)" } ?? "")")
        }
        try peer.close()
        progress.show("bulk load SQLite \(records.count)")
        let s = try SQLitePeer(path: work + "/bulk.sqlite", synchronous: "FULL")
        try s.createSchema()
        let s0 = Measure.now()
        try s.ingest(data.places, firstID: 1, batch: data.places.count) { _ in }
        let st = Double(Measure.now() - s0)
        progress.done()
        try? FileManager.default.removeItem(atPath: cdir)
        try? FileManager.default.removeItem(atPath: work + "/bulk.sqlite")
        let n = Double(records.count)
        return SuiteResult(
            suite: "bulk", title: "bulk load (ops/s = rec/s)",
            cirrus: Figures(medianNs: ct, p99Ns: ct, opsPerSecond: n / (ct / 1e9), samples: 1),
            sqlite: Figures(medianNs: st, p99Ns: st, opsPerSecond: n / (st / 1e9), samples: 1),
            speedup: st / ct, target: "≥ 2×", met: st / ct >= 2,
            note: "Cirrus bulk import (sorted into data segments); SQLite one transaction, same indexes")
    }

    /// The probe's query mix: 250 each of point, equality + sort + limit 20, radius 10 km, text.
    func probeQueries(_ data: PlaceSet) -> [ProbeQuery] {
        var rng = Rng(state: seed ^ 0xB0B)
        var out: [ProbeQuery] = []
        let words = data.words(withFrequencyIn: max(1, data.places.count / 10_000)...max(1, data.places.count / 1_000))
        for i in 0..<1000 {
            let p = data.places[rng.below(data.places.count)]
            switch i % 4 {
            case 0: out.append(ProbeQuery(shape: "point", text: p.recordName))
            case 1: out.append(ProbeQuery(shape: "eq-sort", text: p.kind))
            case 2: out.append(ProbeQuery(shape: "radius", text: "", lat: p.latitude, lon: p.longitude))
            default:
                out.append(
                    ProbeQuery(shape: "text", text: words.isEmpty ? data.vocabulary[0] : words[rng.below(words.count)]))
            }
        }
        return out
    }

    /// Runs `qbench probe` in a child process for each engine; the result row.
    func reopenProbeSuite(_ data: PlaceSet, cirrusDir: String, sqlitePath: String, work: String) throws -> SuiteResult {
        let qpath = work + "/probe-queries.json"
        try JSONEncoder().encode(probeQueries(data)).write(to: URL(fileURLWithPath: qpath))
        func child(_ engine: String, _ path: String) throws -> ProbeResult {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            p.arguments = ["probe", "--engine", engine, "--path", path, "--queries", qpath]
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            let out = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else {
                throw ValidationError("qbench probe --engine \(engine) failed (\(p.terminationStatus))")
            }
            return try JSONDecoder().decode(ProbeResult.self, from: out)
        }
        let c = try child("cirrus", cirrusDir)
        let s = try child("sqlite", sqlitePath)
        return SuiteResult(
            suite: "reopen-process", title: "fresh process: open + first lookup",
            cirrus: Figures(
                medianNs: c.openAndFirstLookupNs, p99Ns: c.openAndFirstLookupNs,
                opsPerSecond: 1e9 / c.openAndFirstLookupNs, samples: 1),
            sqlite: Figures(
                medianNs: s.openAndFirstLookupNs, p99Ns: s.openAndFirstLookupNs,
                opsPerSecond: 1e9 / s.openAndFirstLookupNs, samples: 1),
            speedup: s.openAndFirstLookupNs / c.openAndFirstLookupNs, target: "≥ 1×",
            met: c.openAndFirstLookupNs <= s.openAndFirstLookupNs,
            note: String(
                format:
                    "RSS after open %d / %d MiB, after 1000 mixed queries %d / %d MiB (peak %d / %d); queries %.0f / %.0f ms (Cirrus / SQLite)",
                c.rssAfterOpenBytes >> 20, s.rssAfterOpenBytes >> 20, c.rssAfterQueriesBytes >> 20,
                s.rssAfterQueriesBytes >> 20,
                c.peakRSSBytes >> 20, s.peakRSSBytes >> 20, c.queriesNs / 1e6, s.queriesNs / 1e6))
    }
}

/// `qbench probe`: open one engine's database in this fresh process, time the first lookup, run
/// the query mix, print a ProbeResult as JSON.
struct Probe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Internal: open a database in a fresh process and measure (used by the reopen-process suite).")

    @Option var engine: String
    @Option var path: String
    @Option var queries: String

    func run() async throws {
        let qs = try JSONDecoder().decode([ProbeQuery].self, from: Data(contentsOf: URL(fileURLWithPath: queries)))
        let first = qs.first { $0.shape == "point" }?.text ?? ""
        let t0 = Measure.now()
        var rssOpen = 0
        var tq = 0.0
        switch engine {
        case "cirrus":
            let c = try Container.open(at: path, environment: .development, options: ContainerOptions(readOnly: true))
            let db = c.publicDatabase(as: .user("_bench"))
            _ = try await db.record(for: RecordID(recordName: first))
            let t1 = Measure.now()
            rssOpen = Memory.status("VmRSS")
            for q in qs {
                let rq: RecordQuery
                switch q.shape {
                case "point":
                    _ = try await db.record(for: RecordID(recordName: q.text))
                    continue
                case "eq-sort":
                    rq = RecordQuery(
                        recordType: "Place", predicate: "kind == %@", arguments: [.value(.string(q.text))],
                        sortDescriptors: [.field("population", ascending: false)])
                case "radius":
                    rq = RecordQuery(
                        recordType: "Place", predicate: "distanceToLocation:fromLocation:(location, %@) < 10",
                        arguments: [.value(.location(Location(latitude: q.lat, longitude: q.lon)))])
                default:
                    rq = RecordQuery(
                        recordType: "Place", predicate: "self CONTAINS %@", arguments: [.value(.string(q.text))])
                }
                _ = try await db.records(matching: rq, resultsLimit: 20)
            }
            tq = Double(Measure.now() - t1)
            let r = ProbeResult(
                openAndFirstLookupNs: Double(t1 - t0), queriesNs: tq, rssAfterOpenBytes: rssOpen,
                rssAfterQueriesBytes: Memory.status("VmRSS"), peakRSSBytes: Memory.status("VmHWM"))
            print(String(decoding: try JSONEncoder().encode(r), as: UTF8.self))
        default:
            let s = try SQLitePeer(path: path, synchronous: "FULL")
            _ = try s.point(first)
            let t1 = Measure.now()
            rssOpen = Memory.status("VmRSS")
            for q in qs {
                switch q.shape {
                case "point": _ = try s.point(q.text)
                case "eq-sort":
                    _ = try s.places(
                        "WHERE p.kind = ? ORDER BY p.population DESC, p.recordName LIMIT 20", [.text(q.text)])
                case "radius": _ = try s.within(lat: q.lat, lon: q.lon, km: 10, order: " LIMIT 20")
                default:
                    _ = try s.places(
                        "WHERE p.id IN (SELECT rowid FROM place_fts WHERE place_fts MATCH ?) LIMIT 20",
                        [.text("\"\(q.text)\"")])
                }
            }
            tq = Double(Measure.now() - t1)
            let r = ProbeResult(
                openAndFirstLookupNs: Double(t1 - t0), queriesNs: tq, rssAfterOpenBytes: rssOpen,
                rssAfterQueriesBytes: Memory.status("VmRSS"), peakRSSBytes: Memory.status("VmHWM"))
            print(String(decoding: try JSONEncoder().encode(r), as: UTF8.self))
        }
    }
}
