// Compare: the default `qbench` command — Cirrus and SQLite on the same generated places and/or
// `--data` files (each with its `--queries`), in one process and one run: with `--size` and
// `--data` both given, the generated sizes run first, then each data set, in one report.
// Order: generate → ingest both (durable, batched) → reopen both → parse → the read suites
// (agreement first, then timing) → mixed reads with a concurrent writer (last: it changes the
// data). A disagreement is reported with the query and the first differences, and makes the run
// exit with status 1.
//
// `--postgres URL` adds a third engine, Cirrus-on-PostgreSQL (PostgresPeer): the same records
// saved through `PostgresStore.modify` after the SQLite ingest, the read suites run on it too,
// its records checked against the embedded engine's (a disagreement fails the run the same
// way), its timings and ratios in extra columns. Suites it cannot run say "n/a" and why.

import ArgumentParser
import Cirrus
import Foundation
import RecordLog
import RecordModel

struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Cirrus vs SQLite on the same records: agreement, then median/p99/throughput and the speedup.")

    static let allSuites = [
        "ingest", "bulk", "reopen", "reopen-process", "parse", "point", "eq-sort", "range-sort", "in", "beginswith",
        "list-contains",
        "text-any", "text-all", "text-range", "radius-1", "radius-10", "radius-50", "radius-eq",
        "nearest-first", "nearest-page", "deep-page", "mixed",
    ]

    @Option(
        help:
            "Suites to run (comma-separated): \(Compare.allSuites.joined(separator: ",")). Ingest always runs (it loads the data)."
    )
    var suite: String = ""
    @Option(
        help:
            "Records: 10k, 100k, 1M or a number; comma-separated for several sizes (default 100k; with --data, generated places run only when --size is given)."
    )
    var size: String?
    @Option(help: "Seconds of timing per engine per suite.")
    var seconds: Double?
    @Flag(help: "Short run: 0.2 s per engine per suite, fewer query cases.")
    var quick = false
    @Flag(help: "Only check that both engines return the same records; no timing.")
    var verify = false
    @Option(help: "Query cases per suite (parameters drawn from the data).")
    var cases: Int?
    @Option(help: "Data seed.")
    var seed: UInt64 = 42
    @Option(
        help: "Durability: every-commit (fsync per commit; SQLite synchronous=FULL), batched (NORMAL) or none (OFF).")
    var durability: String = "every-commit"
    @Option(help: "Records per ingest batch (≤ 400, CloudKit's request limit).")
    var batch: Int = 400
    @Option(
        help:
            "How the databases are filled: commits (--batch records a durable commit, indexes kept as it goes) or bulk (Cirrus's bulk import; SQLite one transaction, then its secondary indexes) — bulk for 10M, where commits take hours."
    )
    var load: String = "commits"
    @Option(help: "Write every figure and the machine description to this JSON file.")
    var json: String?
    @Option(help: "Write a bar chart of the speedups (SVG) to this file.")
    var svg: String?
    @Option(help: "Write the table as Markdown to this file.")
    var markdown: String?
    @Option(help: "Working directory for the two databases (default: a fresh one under /tmp, removed afterwards).")
    var dir: String?
    @Flag(
        help:
            "With --dir: reuse the two databases a previous run with the same size, seed and durability left there (no ingest row; the Cirrus container is as that run's reopen left it)."
    )
    var reuse = false
    @Option(
        help:
            "Decoded base records Cirrus keeps per table (its record cache; 0 turns it off). The suites repeat their cases, so the cache hits more often than under a varied workload."
    )
    var recordCache: Int?
    @Flag(
        help:
            "Compact the Cirrus container after ingest (or on the reused one): every table in one layer, as SQLite gets ANALYZE. Timed and printed; reads then see one layer per table instead of the checkpoints' stack."
    )
    var compact = false
    @Option(
        help:
            "Cirrus's read-merge budget (ContainerOptions.readMergeBudget, default 1): a table in several layers is merged into one once its queries have spent this many times the merge's cost on the extra layers; 0 merges at the first query."
    )
    var readMergeBudget: Double?
    @Option(
        help:
            "A JSON Lines file of Web Services records to load and query (with the --queries given in the same place); repeat for several data sets."
    )
    var data: [String] = []
    @Option(help: "Also write the generated places as Web Services JSON Lines to this file (input for --data).")
    var export: String?
    @Option(
        help:
            "Queries for the --data in the same place: one {\"recordType\",\"predicate\",\"args\",\"sort\"?,\"limit\"?} per line."
    )
    var queries: [String] = []
    @Flag(
        help:
            "With --data: leave the imported records in the in-memory delta (by default a checkpoint writes them to mapped data segments, as a reopened container reads them)."
    )
    var keepDelta = false
    @Option(
        help:
            "Also run the read suites on Cirrus-on-PostgreSQL at this server (postgres://user@host:port/database, PostGIS installed; a fresh container's tables are created and left there)."
    )
    var postgres: String?

    /// Why a suite that is not a read suite has no Cirrus-on-PostgreSQL figures.
    static let postgresNotApplicable: [String: String] = [
        "reopen": "n/a: a server keeps running; there is no database to reopen",
        "reopen-process": "n/a: a server keeps running; there is no database to open in a fresh process",
        "parse": "n/a: PostgresStore.query runs the same QueryChecker (and each read below includes it)",
        "mixed": "n/a: the concurrent-writer suite is not ported to PostgreSQL",
    ]

    func validate() throws {
        guard (1...400).contains(batch) else { throw ValidationError("--batch must be 1…400") }
        guard ["commits", "bulk"].contains(load) else { throw ValidationError("--load: commits or bulk") }
        guard ["every-commit", "batched", "none"].contains(durability) else {
            throw ValidationError("--durability: every-commit, batched or none")
        }
        for s in suiteList where !Self.allSuites.contains(s) { throw ValidationError("unknown suite \(s)") }
        if data.count != queries.count {
            throw ValidationError("--data and --queries go together: one --queries for each --data, in the same order")
        }
        if reuse && (dir == nil || !data.isEmpty || postgres != nil) {
            throw ValidationError("--reuse needs --dir, and works with neither --data nor --postgres")
        }
        if let recordCache, recordCache < 0 { throw ValidationError("--record-cache must be 0 or more") }
        if let readMergeBudget, !(readMergeBudget >= 0 && readMergeBudget.isFinite) {
            throw ValidationError("--read-merge-budget must be a number, 0 or more")
        }
        _ = try sizes()
    }

    var suiteList: [String] {
        suite.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
    func wants(_ s: String) -> Bool { suiteList.isEmpty || suiteList.contains(s) }
    var budget: Double { seconds ?? (quick ? 0.2 : 1.0) }
    var caseCount: Int { cases ?? (quick ? 20 : 200) }

    func sizes() throws -> [Int] {
        try (size ?? "100k").split(separator: ",").map { try parseSize(String($0)) }
    }

    var storeDurability: (Durability, String) {
        switch durability {
        case "batched": (.batched(milliseconds: 50, bytes: 1 << 20), "NORMAL")
        case "none": (.none, "OFF")
        default: (.everyCommit, "FULL")
        }
    }

    func run() async throws {
        var failed = false
        var reports: [RunReport] = []
        if data.isEmpty || size != nil {
            for n in try sizes() {
                let r = try await runGenerated(size: n)
                failed = failed || !r.agreementFailures.isEmpty
                reports.append(r)
            }
        }
        for (dataPath, queriesPath) in zip(data, queries) {
            let r = try await DataFileRun(command: self).run(dataPath: dataPath, queriesPath: queriesPath)
            failed = failed || !r.agreementFailures.isEmpty
            reports.append(r)
        }
        for i in reports.indices {
            reports[i].summary = RunSummary(reports[i].results)
            guard let summary = reports[i].summary else { continue }
            let what = reports[i].data.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "\(reports[i].size) places"
            print("\n\(what): " + summary.lines.joined(separator: "\n  "))
        }
        try write(reports)
        if failed {
            print("\nFAILED: the engines disagree (see above).")
            throw ExitCode(1)
        }
        if verify {
            print(
                "\nagreement: every query returned the same records on \(postgres == nil ? "both" : "all three") engines."
            )
        }
    }

    func write(_ reports: [RunReport]) throws {
        if let json {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            let value: Data = reports.count == 1 ? try enc.encode(reports[0]) : try enc.encode(reports)
            try value.write(to: URL(fileURLWithPath: json))
            print("wrote \(json)")
        }
        if postgres != nil, let pg = reports.last?.postgres {
            print("Cirrus-on-PostgreSQL: \(pg)")
        }
        if let svg, let last = reports.last {
            // Several runs (sizes, data sets) in one chart: each row named by its run.
            let label = { (r: RunReport) in
                r.data.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent } ?? "\(r.size)"
            }
            let results =
                reports.count == 1
                ? last.results
                : reports.flatMap { r in
                    r.results.map { row in
                        var row = row
                        row.title = label(r) + ": " + row.title
                        return row
                    }
                }
            let what = reports.count == 1 ? "\(last.size) records" : reports.map(label).joined(separator: ", ")
            let title = "Cirrus vs SQLite — speedup (SQLite time / Cirrus time), \(what)"
            try Chart.svg(results, title: title).write(toFile: svg, atomically: true, encoding: .utf8)
            print("wrote \(svg)")
        }
        if let markdown {
            var md = ""
            for r in reports {
                md +=
                    "### \(r.size) records\(r.data.map { " of " + $0 } ?? "")\n\nmachine: \(r.machine.cores) cores, \(r.machine.memoryBytes >> 30) GiB, \(r.machine.os), "
                md +=
                    "Swift \(r.machine.swift), SQLite \(r.machine.sqlite); load average \(r.machine.loadAverage) at start, "
                md += "\(r.loadAverageAtEnd) at end; \(r.machine.date)"
                if let pg = r.postgres { md += "; PostgreSQL: \(pg)" }
                md += "\n\n" + Table.markdown(r.results, postgres: postgres != nil) + "\n"
            }
            try md.write(toFile: markdown, atomically: true, encoding: .utf8)
            print("wrote \(markdown)")
        }
    }

    /// Where a run keeps its databases: `--dir` (its subdirectory `sub` when given: each data
    /// set its own), or a new temporary directory (true: removed after the run).
    func workDirectory(sub: String? = nil) throws -> (String, Bool) {
        if let dir {
            let d = sub.map { dir + "/" + $0 } ?? dir
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            return (d, false)
        }
        let d =
            NSTemporaryDirectory()
            + "qbench-\(ProcessInfo.processInfo.processIdentifier)-\(UInt64(Date().timeIntervalSince1970 * 1000))"
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return (d, true)
    }

    /// Ingests the places into a new Cirrus container and SQLite database under `work` (both
    /// durable and batched; SQLite maintains the same indexes as it goes), and with `--postgres` into
    /// Cirrus-on-PostgreSQL; adds the ingest row.
    func ingestAll(
        _ data: PlaceSet, work: String, report: inout RunReport, progress: Progress
    ) async throws -> (
        CirrusPeer, SQLitePeer, PostgresPeer?, PostgresSQLPeer?
    ) {
        let n = data.places.count
        let (cirrusDurability, sync) = storeDurability
        let cirrus = try CirrusPeer(
            directory: work + "/cirrus", durability: cirrusDurability, recordCache: recordCache,
            readMergeBudget: readMergeBudget)
        let bulk = load == "bulk"
        var cTimes: [Double] = []
        var last = Measure.now()
        let c0 = last
        if bulk {
            progress.show("bulk load Cirrus \(n)")
            // Created by the user who saves them in `--load commits` (the mixed suite's writer
            // updates them: only their creator may, in the public database).
            let creator = RecordID(recordName: CirrusPeer.user)
            let records = data.places.lazy.map { p in
                var r = p.record
                r.creatorUserRecordID = creator
                return r
            }
            let rejected = try cirrus.container.importRecords(bulk: records, into: .public)
            guard rejected.isEmpty else {
                throw ValidationError("bulk load rejected \(rejected.count) records: \(rejected[0].1)")
            }
            cTimes.append(Double(Measure.now() - c0))
        } else {
            try await cirrus.ingest(data.places, batch: batch) { done in
                let t = Measure.now()
                cTimes.append(Double(t - last))
                last = t
                progress.show("ingest Cirrus \(done)/\(n)")
            }
        }
        let cTotal = Double(Measure.now() - c0)
        progress.done()
        let sqlite = try SQLitePeer(path: work + "/places.sqlite", synchronous: sync)
        try sqlite.createSchema(secondaryIndexes: !bulk)
        var sTimes: [Double] = []
        last = Measure.now()
        let s0 = last
        try sqlite.ingest(data.places, firstID: 1, batch: bulk ? n : batch) { done in
            let t = Measure.now()
            sTimes.append(Double(t - last))
            last = t
            progress.show("ingest SQLite \(done)/\(n)")
        }
        if bulk {
            progress.show("SQLite CREATE INDEX")
            try sqlite.createSchema()
            sTimes[sTimes.count - 1] += Double(Measure.now() - last)
        }
        let sTotal = Double(Measure.now() - s0)
        progress.show("SQLite ANALYZE")
        let a0 = Measure.now()
        try sqlite.analyze()
        let analyze = Double(Measure.now() - a0)
        progress.done()
        var ci = Figures(times: cTimes)
        ci.opsPerSecond = Double(n) / (cTotal / 1e9)
        var si = Figures(times: sTimes)
        si.opsPerSecond = Double(n) / (sTotal / 1e9)
        let ingestSpeedup = ci.opsPerSecond / si.opsPerSecond
        var ingest = SuiteResult(
            suite: "ingest",
            title: bulk ? "ingest, bulk load (ops/s = rec/s)" : "ingest, \(batch)/commit (ops/s = rec/s)",
            cirrus: ci, sqlite: si, speedup: ingestSpeedup, target: "≥ 2×", met: ingestSpeedup >= 2,
            note: (bulk
                ? "Cirrus bulk import (sorted into data segments); SQLite one transaction, then CREATE INDEX; "
                : "")
                + "Cirrus \(Measure.format(cTotal)), SQLite \(Measure.format(sTotal)) + ANALYZE \(Measure.format(analyze))"
        )
        let records = postgres == nil ? [] : data.places.map(\.record)
        let pg = try await postgresIngest(records, schema: cirrus.container.schema, into: &ingest, progress: progress)
        var sql: PostgresSQLPeer? = nil
        if let pg {
            sql = try await sqlIngest(Array(data.places), into: &ingest, progress: progress)
            report.postgres =
                "\(pg.address), container \(pg.tenant.containerID), hand-written SQL in schema \(sql?.namespace ?? "–")"
        }
        add(&report, ingest)
        return (cirrus, sqlite, pg, sql)
    }

    func runGenerated(size n: Int) async throws -> RunReport {
        var report = RunReport(
            command: CommandLine.arguments.joined(separator: " "), size: n, seed: seed, durability: durability,
            machine: Machine.current())
        print(
            "qbench: Cirrus vs SQLite \(SQLiteDB.version)\(postgres != nil ? " vs Cirrus-on-PostgreSQL" : ""), "
                + "\(n) places (seed \(seed)), durability \(durability), "
                + "\(report.machine.cores) cores, load \(report.machine.loadAverage)\(verify ? ", verify only" : "")")
        let progress = Progress()
        progress.show("generating \(n) places…")
        let rss0 = Memory.status("VmRSS")
        let data = PlaceSet(size: n, seed: seed)
        progress.done()
        let (work, temporary) = try workDirectory()
        defer { if temporary { try? FileManager.default.removeItem(atPath: work) } }
        let (cirrusDurability, sync) = storeDurability
        print(Table.header(postgres: postgres != nil))

        // A run with --reuse starts from the databases an earlier run with the same data left.
        let marker = work + "/qbench-ingest.json"
        let stamp =
            "{\"size\":\(n),\"seed\":\(seed),\"durability\":\"\(durability)\""
            + (load == "bulk" ? ",\"load\":\"bulk\"}" : "}")
        let reused = reuse && (try? String(contentsOfFile: marker, encoding: .utf8)) == stamp
        if reuse && !reused {
            print("qbench: no reusable databases in \(work) for this size, seed and durability; ingesting")
        }
        let rssBefore = Memory.status("VmRSS")
        let cirrus: CirrusPeer
        var sqlite: SQLitePeer
        var pg: PostgresPeer? = nil
        var sqlPeer: PostgresSQLPeer? = nil
        if reused {
            cirrus = try CirrusPeer(
                directory: work + "/cirrus", durability: cirrusDurability, schema: nil, recordCache: recordCache,
                readMergeBudget: readMergeBudget)
            sqlite = try SQLitePeer(path: work + "/places.sqlite", synchronous: sync)
        } else {
            // A fresh ingest starts from nothing (not from what an earlier run left here).
            for f in ["qbench-ingest.json", "cirrus", "places.sqlite", "places.sqlite-wal", "places.sqlite-shm"] {
                try? FileManager.default.removeItem(atPath: work + "/" + f)
            }
            (cirrus, sqlite, pg, sqlPeer) = try await ingestAll(
                data, work: work, report: &report, progress: progress)
            try stamp.write(toFile: marker, atomically: true, encoding: .utf8)
        }
        if compact {
            let t0 = Measure.now()
            try cirrus.container.compact()
            print("qbench: Cirrus compact \(Measure.format(Double(Measure.now() - t0)))")
        }
        let cirrusRSS = Memory.status("VmRSS") - rssBefore

        if wants("bulk") && !verify && load != "bulk" {
            var row = try bulkSuite(data, work: work, progress: progress)
            if postgres != nil {
                try await postgresBulk(data, schema: cirrus.container.schema, into: &row, progress: progress)
            }
            add(&report, row)
        }

        if let export {
            var out = ""
            try cirrus.container.exportRecords(from: .public, type: "Place") { out += $0 }
            try out.write(toFile: export, atomically: true, encoding: .utf8)
            print("wrote \(export)")
        }

        // Reopen: Cirrus replays its log and bulk-builds the indexes; SQLite opens and answers.
        let probe = data.places[n / 2].recordName
        let r0 = Measure.now()
        let closeNs = Double(try cirrus.reopen())
        _ = try await cirrus.point(probe)
        let cr = Double(Measure.now() - r0)
        let sr0 = Measure.now()
        sqlite = try SQLitePeer(path: work + "/places.sqlite", synchronous: sync)
        _ = try sqlite.point(probe)
        let sr = Double(Measure.now() - sr0)
        let memory = Memory.status("VmRSS") - rssBefore
        report.memory = [
            "generatorBytes": rssBefore - rss0, "cirrusAfterIngestBytes": cirrusRSS, "bothAfterReopenBytes": memory,
            "sqliteFileBytes": sqlite.fileBytes, "peakRSSBytes": Memory.status("VmHWM"),
        ]
        if wants("reopen") {
            add(
                &report,
                SuiteResult(
                    suite: "reopen", title: "reopen + first lookup (1 run)",
                    cirrus: Figures(medianNs: cr, p99Ns: cr, opsPerSecond: 1e9 / cr, samples: 1),
                    sqlite: Figures(medianNs: sr, p99Ns: sr, opsPerSecond: 1e9 / sr, samples: 1), speedup: sr / cr,
                    note:
                        String(
                            format: "Cirrus close %.1f ms (checkpoint of the delta) + open and lookup %.2f ms; ",
                            closeNs / 1e6, (cr - closeNs) / 1e6)
                        + "RSS after reopen (both engines + data) \(memory >> 20) MiB; "
                        + "SQLite file \(sqlite.fileBytes >> 20) MiB"
                ))
        }

        if wants("reopen-process") && !verify {
            add(
                &report,
                try reopenProbeSuite(data, cirrusDir: work + "/cirrus", sqlitePath: work + "/places.sqlite", work: work)
            )
        }

        if wants("parse") && !verify { add(&report, try parseSuite(cirrus, sqlite, data)) }

        var builder = SuiteBuilder(
            data: data, cirrus: cirrus, sqlite: sqlite, postgres: pg, sql: sqlPeer, rng: Rng(state: seed ^ 0x5EED),
            count: caseCount
        )
        let makers: [(String, (inout SuiteBuilder) async throws -> ReadSuite)] = [
            ("point", { $0.point() }), ("eq-sort", { $0.equalitySort() }), ("range-sort", { $0.rangeSort() }),
            ("in", { $0.inList() }), ("beginswith", { $0.beginsWith() }), ("list-contains", { $0.listContains() }),
            ("text-any", { $0.textAny() }), ("text-all", { $0.textAll() }), ("text-range", { $0.textRange() }),
            ("radius-1", { $0.radius(1) }), ("radius-10", { $0.radius(10) }), ("radius-50", { $0.radius(50) }),
            ("radius-eq", { $0.radiusEquality() }), ("nearest-first", { $0.nearestFirst() }),
            ("nearest-page", { try await $0.nearestPage(5) }), ("deep-page", { try await $0.deepPage(500) }),
        ]
        for (name, make) in makers where wants(name) {
            progress.show("\(name): preparing cases")
            // Each suite draws its cases from its own stream: the same cases whichever other
            // suites run (a shared stream made a suite's cases depend on the --suite list).
            builder.rng = Rng(state: seed ^ 0x5EED ^ Self.fnv1a(name))
            let s = try await make(&builder)
            for r in try await runRead(s, progress: progress, report: &report) { add(&report, r) }
        }
        if wants("mixed") && !verify {
            builder.rng = Rng(state: seed ^ 0x5EED ^ Self.fnv1a("mixed"))
            add(&report, try await mixedSuite(cirrus, sqlite, data, &builder, progress: progress))
        }
        let stats = cirrus.container.statistics()
        print("Cirrus: \(stats.tableLayers) table layers at the end, \(stats.readMerges) read-triggered merges")
        try cirrus.close()
        await pg?.close()
        await sqlPeer?.close()
        report.loadAverageAtEnd = Machine.current().loadAverage
        report.memory["peakRSSBytes"] = Memory.status("VmHWM")
        print("peak RSS \(Memory.status("VmHWM") >> 20) MiB; load average at end \(report.loadAverageAtEnd)")
        return report
    }

    /// FNV-1a of a suite name: a stable salt (`hashValue` changes from run to run).
    static func fnv1a(_ s: String) -> UInt64 {
        s.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }

    func add(_ report: inout RunReport, _ r: SuiteResult) {
        var r = r
        if postgres != nil, r.postgres == nil, r.postgresNote == nil {
            r.postgresNote = Self.postgresNotApplicable[r.suite] ?? "n/a"
        }
        report.results.append(r)
        print(Table.row(r, postgres: postgres != nil))
    }

    /// With `--postgres`: connects, applies `schema`, saves `records` in requests of `batch`
    /// (timed per request, as the other engines' ingest) and runs ANALYZE; the figures go into
    /// `row`. Nil without `--postgres`.
    func postgresIngest(
        _ records: [Record], schema: Schema, into row: inout SuiteResult, progress: Progress
    ) async throws -> PostgresPeer? {
        guard let postgres else { return nil }
        progress.show("connecting to PostgreSQL")
        let pg = try await PostgresPeer(url: postgres)
        try await pg.apply(schema)
        var times: [Double] = []
        var last = Measure.now()
        let p0 = last
        try await pg.ingest(records, batch: batch) { done in
            let t = Measure.now()
            times.append(Double(t - last))
            last = t
            progress.show("ingest PostgreSQL \(done)/\(records.count)")
        }
        let total = Double(Measure.now() - p0)
        progress.show("PostgreSQL ANALYZE")
        let analyze = try await pg.analyze()
        progress.done()
        var f = Figures(times: times)
        f.opsPerSecond = Double(records.count) / (total / 1e9)
        row.postgres = f
        if let c = row.cirrus?.opsPerSecond, c > 0 { row.cirrusVsPostgres = c / f.opsPerSecond }
        if let s = row.sqlite?.opsPerSecond, s > 0 { row.postgresVsSQLite = f.opsPerSecond / s }
        row.postgresNote = "\(Measure.format(total)) + ANALYZE \(Measure.format(analyze)) (modify, 1 transaction each)"
        return pg
    }

    /// With `--postgres`: the bulk load on PostgreSQL — Cirrus-on-PostgreSQL's import (COPY, one
    /// transaction, into a fresh container) and the hand-written COPY into a table of its own —
    /// timed once each, into `row` (ops/s = records/s).
    func postgresBulk(_ data: PlaceSet, schema: Schema, into row: inout SuiteResult, progress: Progress) async throws {
        guard let postgres else { return }
        let records = data.places.map(\.record)
        let n = Double(records.count)
        progress.show("bulk load Cirrus-on-PostgreSQL \(records.count)")
        let pg = try await PostgresPeer(url: postgres)
        try await pg.apply(schema)
        let p0 = Measure.now()
        try await pg.bulkImport(records)
        let pt = Double(Measure.now() - p0)
        let analyze = try await pg.analyze()
        await pg.close()
        progress.show("bulk load hand-written SQL \(records.count)")
        let sql = try await PostgresSQLPeer(url: postgres)
        let s0 = Measure.now()
        try await sql.copyPlaces(Array(data.places))
        let st = Double(Measure.now() - s0)
        await sql.close()
        progress.done()
        row.postgres = Figures(medianNs: pt, p99Ns: pt, opsPerSecond: n / (pt / 1e9), samples: 1)
        row.postgresSQL = Figures(medianNs: st, p99Ns: st, opsPerSecond: n / (st / 1e9), samples: 1)
        row.postgresVsSQL = pt / st
        if let c = row.cirrus { row.cirrusVsPostgres = c.opsPerSecond / (n / (pt / 1e9)) }
        if let s = row.sqlite { row.postgresVsSQLite = (n / (pt / 1e9)) / s.opsPerSecond }
        row.postgresNote =
            "import (COPY, 1 transaction) \(Measure.format(pt)), then VACUUM ANALYZE \(Measure.format(analyze))"
        row.postgresSQLNote = "COPY into a new table (tsvector a generated column), then its indexes, 1 transaction"
    }

    /// With `--postgres`: the hand-written SQL yardstick's table of places, loaded in statements of
    /// `batch` rows (timed per statement) and VACUUM ANALYZEd; its figures go into `row`.
    func sqlIngest(_ places: [Place], into row: inout SuiteResult, progress: Progress) async throws -> PostgresSQLPeer?
    {
        guard let postgres else { return nil }
        let sql = try await PostgresSQLPeer(url: postgres)
        try await sql.createPlaces()
        var times: [Double] = []
        var last = Measure.now()
        let t0 = last
        try await sql.ingest(places, batch: batch) { done in
            let t = Measure.now()
            times.append(Double(t - last))
            last = t
            progress.show("ingest hand-written SQL \(done)/\(places.count)")
        }
        let total = Double(Measure.now() - t0)
        progress.show("hand-written SQL VACUUM ANALYZE")
        let a0 = Measure.now()
        try await sql.analyze()
        let analyze = Double(Measure.now() - a0)
        progress.done()
        var f = Figures(times: times)
        f.opsPerSecond = Double(places.count) / (total / 1e9)
        row.postgresSQL = f
        if let pg = row.postgres, pg.opsPerSecond > 0 { row.postgresVsSQL = f.opsPerSecond / pg.opsPerSecond }
        row.postgresSQLNote =
            "\(Measure.format(total)) + VACUUM ANALYZE \(Measure.format(analyze)) (INSERT … SELECT FROM unnest, \(batch) rows each)"
        return sql
    }
}
