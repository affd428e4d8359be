// DataFile: `qbench --data FILE --queries FILE` — any Web Services JSON Lines records, loaded
// into Cirrus (administrative import, development schema grown from the data) and into SQLite
// (SQLiteGeneric's layout of that schema), then each query of the queries file checked for
// agreement and timed on both. Queries file: one JSON object per line,
//   {"recordType": "Place", "predicate": "kind == %@", "args": ["cafe"],
//    "sort": [{"field": "population", "ascending": false}] | [{"field": "location", "nearest": {"latitude": 48.8, "longitude": 2.3}}],
//    "limit": 20}
// Arguments: JSON strings, numbers, arrays, and {"latitude", "longitude"} objects for locations.
// With a sort, the first page (`limit`, default 100) is compared in order; without one, every
// match is compared as a set. A bad line is reported with its number. With `--postgres`, the
// records Cirrus accepted are saved on Cirrus-on-PostgreSQL too (the schema Cirrus grew from
// them applied first) and each query runs there as well, checked against Cirrus.

import Cirrus
import CirrusIO
import CirrusPostgres
import Foundation
import QueryChecker
import QueryExecution
import RecordLog
import RecordModel

/// A JSON argument of the queries file.
enum JSONArg: Decodable {
    case int(Int64), double(Double), string(String), list([JSONArg]), location(Double, Double)

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let i = try? c.decode(Int64.self) { self = .int(i); return }
        if let d = try? c.decode(Double.self) { self = .double(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let l = try? c.decode([JSONArg].self) { self = .list(l); return }
        if let o = try? c.decode([String: Double].self), let lat = o["latitude"], let lon = o["longitude"] {
            self = .location(lat, lon)
            return
        }
        throw DecodingError.dataCorruptedError(
            in: c, debugDescription: "an argument is a string, a number, an array or {\"latitude\", \"longitude\"}")
    }

    var fieldValue: FieldValue {
        switch self {
        case .int(let i): .int64(i)
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .list(let l): .list(l.map(\.fieldValue))
        case .location(let a, let b): .location(Location(latitude: a, longitude: b))
        }
    }
}

struct QueryLine: Decodable {
    struct Sort: Decodable {
        var field: String
        var ascending: Bool?
        var nearest: [String: Double]?
    }
    var recordType: String
    var predicate: String
    var args: [JSONArg]?
    var sort: [Sort]?
    var limit: Int?
    /// A later page (1-based) of a sorted query, via the cursor of the page before.
    var page: Int?
}

struct DataFileRun {
    let command: Compare

    func run(dataPath: String, queriesPath: String) async throws -> RunReport {
        var report = RunReport(
            command: CommandLine.arguments.joined(separator: " "), size: 0, seed: 0,
            durability: command.durability, machine: Machine.current())
        guard let bytes = FileManager.default.contents(atPath: dataPath) else {
            throw GenericError(message: "--data: cannot read \(dataPath)")
        }
        guard let qtext = try? String(contentsOfFile: queriesPath, encoding: .utf8) else {
            throw GenericError(message: "--queries: cannot read \(queriesPath)")
        }
        var records: [Record] = []
        var rejected: [String] = []
        let summary = try RecordTransfer.readRecords([UInt8](bytes), name: dataPath) { batch in
            records += batch.map(\.record)
            return []
        }
        _ = summary
        if records.isEmpty { throw GenericError(message: "--data: \(dataPath) holds no readable records") }
        report.size = records.count
        report.data = dataPath
        print(
            "qbench: Cirrus vs SQLite \(SQLiteDB.version)\(command.postgres != nil ? " vs Cirrus-on-PostgreSQL" : "") on "
                + "\(records.count) records of \(dataPath)")
        let name = URL(fileURLWithPath: dataPath).deletingPathExtension().lastPathComponent
        // With --dir, a data set shares it with nothing: each run of several its own subdirectory.
        let shared = command.data.count > 1 || command.size != nil
        let (work, temporary) = try command.workDirectory(sub: shared ? name : nil)
        defer { if temporary { try? FileManager.default.removeItem(atPath: work) } }
        let (durability, sync) = command.storeDurability
        let cirrus = try CirrusPeer(directory: work + "/cirrus", durability: durability, schema: nil)
        let progress = Progress()
        print(Table.header(postgres: command.postgres != nil))

        var cTimes: [Double] = []
        var refused = Set<Int>()
        let c0 = Measure.now()
        for start in stride(from: 0, to: records.count, by: command.batch) {
            let t0 = Measure.now()
            let failures = try cirrus.container.importRecords(
                Array(records[start..<min(records.count, start + command.batch)]), into: .public)
            rejected += failures.prefix(5).map { "record \(start + $0.0): \($0.1)" }
            for (i, _) in failures { refused.insert(start + i) }
            cTimes.append(Double(Measure.now() - t0))
            progress.show("import Cirrus \(start)/\(records.count)")
        }
        let cTotal = Double(Measure.now() - c0)
        // The queries read what a reopened container reads — mapped data segments — unless
        // --keep-delta asks for the in-memory delta a container holds until its next checkpoint.
        if !command.keepDelta { try cirrus.container.checkpoint() }
        let layersAfterImport = cirrus.container.statistics().tableLayers
        progress.done()
        if !refused.isEmpty {
            // SQLite gets only what Cirrus accepted, so both hold the same records.
            print(
                "Cirrus refused \(refused.count) records (left out of SQLite too), e.g.:\n  "
                    + rejected.prefix(5).joined(separator: "\n  "))
            records = records.indices.filter { !refused.contains($0) }.map { records[$0] }
        }
        let schema = cirrus.container.schema
        let peer = try SQLitePeer(path: work + "/data.sqlite", synchronous: sync)
        let sqlite = SQLiteGeneric(peer: peer, schema: schema)
        try sqlite.createTables()
        var sTimes: [Double] = []
        let s0 = Measure.now()
        for start in stride(from: 0, to: records.count, by: command.batch) {
            let t0 = Measure.now()
            try sqlite.insert(Array(records[start..<min(records.count, start + command.batch)]))
            sTimes.append(Double(Measure.now() - t0))
            progress.show("insert SQLite \(start)/\(records.count)")
        }
        let sTotal = Double(Measure.now() - s0)
        try peer.analyze()
        progress.done()
        var ci = Figures(times: cTimes), si = Figures(times: sTimes)
        ci.opsPerSecond = Double(records.count) / (cTotal / 1e9)
        si.opsPerSecond = Double(records.count) / (sTotal / 1e9)
        var ingest = SuiteResult(
            suite: "ingest", title: "import, \(command.batch)/commit (ops/s = records/s)", cirrus: ci, sqlite: si,
            speedup: ci.opsPerSecond / si.opsPerSecond)
        let pg = try await command.postgresIngest(records, schema: schema, into: &ingest, progress: progress)
        var hand: PostgresSQLGeneric? = nil
        if let pg, let url = command.postgres {
            hand = try await handIngest(records, schema: schema, url: url, into: &ingest, progress: progress)
            report.postgres =
                "\(pg.address), container \(pg.tenant.containerID), hand-written SQL in schema \(hand?.peer.namespace ?? "–")"
        }
        command.add(&report, ingest)
        if let url = command.postgres {
            // The administrator's import (COPY, one transaction) into a fresh container: what
            // `cirrus import --postgres` runs, without the file reader.
            progress.show("import Cirrus-on-PostgreSQL (COPY) \(records.count)")
            let fresh = try await PostgresPeer(url: url)
            try await fresh.apply(schema)
            let i0 = Measure.now()
            try await fresh.bulkImport(records)
            let it = Double(Measure.now() - i0)
            await fresh.close()
            progress.done()
            let n = Double(records.count)
            var bulk = SuiteResult(suite: "bulk", title: "import (COPY; ops/s = records/s)")
            bulk.postgres = Figures(medianNs: it, p99Ns: it, opsPerSecond: n / (it / 1e9), samples: 1)
            bulk.postgresNote = "PostgresStore.importing, batches of 4096, one transaction, indexes built at the end"
            bulk.postgresSQLNote = "hand-written load: the ingest row"
            command.add(&report, bulk)
        }

        for (i, line) in qtext.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            let where_ = "\(queriesPath):\(i + 1)"
            let q: QueryLine
            do { q = try JSONDecoder().decode(QueryLine.self, from: Data(text.utf8)) } catch {
                throw GenericError(message: "\(where_): not a query line (\(error))")
            }
            let sorts: [RecordModel.SortDescriptor] = try (q.sort ?? []).map { s in
                if let n = s.nearest {
                    guard let lat = n["latitude"], let lon = n["longitude"] else {
                        throw GenericError(message: "\(where_): nearest needs latitude and longitude")
                    }
                    return .distance(field: s.field, from: Location(latitude: lat, longitude: lon))
                }
                return .field(s.field, ascending: s.ascending ?? true)
            }
            let args = (q.args ?? []).map { PredicateArgument.value($0.fieldValue) }
            let rq = RecordQuery(
                recordType: q.recordType, predicate: q.predicate, arguments: args, sortDescriptors: sorts)
            let checked: CheckedPredicate
            do {
                checked = try QueryChecker.check(
                    q.predicate, context: CheckContext(arguments: args, schema: schema, recordType: q.recordType))
            } catch {
                throw GenericError(message: "\(where_): \(error.rendered(source: q.predicate))")
            }
            let ordered = !sorts.isEmpty
            let limit = q.limit ?? 100
            let page = q.page ?? 1
            guard page >= 1, page == 1 || ordered else {
                throw GenericError(message: "\(where_): page needs a sort and is 1 or more")
            }
            var (sql, sqlArgs) = try sqlite.translate(
                q.recordType, checked.predicate, sort: sorts, limit: ordered ? limit : nil)
            if page > 1 { sql += " OFFSET \((page - 1) * limit)" }
            var cursor: QueryCursor? = nil
            var lastBefore: Record? = nil
            if page > 1 {
                // The cursor of the page before (and its last row, for the hand-written SQL's
                // keyset), obtained before timing.
                var rows: [Record]
                (rows, cursor) = try await cirrus.page(rq, limit: limit)
                lastBefore = rows.last
                for _ in 2..<page {
                    guard let c = cursor else { break }
                    (rows, cursor) = try await cirrus.next(c, limit: limit)
                    lastBefore = rows.last
                }
            }
            let resume = cursor
            let c: () async throws -> [String] =
                !ordered
                ? { namesOf(try await cirrus.all(rq, pageSize: 1_000_000)) }
                : page == 1
                    ? { namesOf(try await cirrus.page(rq, limit: limit).0) }
                    : {
                        guard let c = resume else { return [] }
                        return namesOf(try await cirrus.next(c, limit: limit).0)
                    }
            let s: () throws -> [String] = {
                let st = try peer.statement(sql)
                st.bind(sqlArgs)
                var out: [String] = []
                while try st.step() {
                    // The whole row is read, as Cirrus builds whole records; the names are compared.
                    if case .text(let name) = st.row()[1] { out.append(name) }
                }
                return out
            }
            var p: (() async throws -> [String])? = nil
            if let pg {
                if !ordered {
                    p = { namesOf(try await pg.all(rq, pageSize: 1_000_000)) }
                } else if page == 1 {
                    p = { namesOf(try await pg.page(rq, limit: limit).0) }
                } else {
                    // PostgreSQL's keyset cursor of the page before, obtained before timing too.
                    var pgCursor: PostgresCursor? = try await pg.page(rq, limit: limit).1
                    for _ in 2..<page {
                        guard let c = pgCursor else { break }
                        pgCursor = try await pg.next(c, limit: limit).1
                    }
                    let resume = pgCursor
                    p = {
                        guard let c = resume else { return [] }
                        return namesOf(try await pg.next(c, limit: limit).0)
                    }
                }
            }
            var h: (() async throws -> [String])? = nil
            if let hand {
                let nearest = sorts.contains { if case .distance = $0 { true } else { false } }
                let statement = try hand.translate(
                    q.recordType, checked.predicate, sort: sorts, limit: ordered ? limit : nil,
                    after: page > 1 && !nearest ? lastBefore : nil, offset: page > 1 && nearest ? (page - 1) * limit : 0
                )
                h = { try await hand.run(statement) }
            }
            let suite = ReadSuite(
                name: "q\(i + 1)",
                title: "q\(i + 1): " + String(q.predicate.prefix(34)) + (page > 1 ? " p\(page)" : ""), target: nil,
                cases: [
                    Case(
                        label: SuiteBuilder.label(rq) + "\n    SQL: " + sql, ordered: ordered, cirrus: c, sqlite: s,
                        postgres: p, postgresSQL: h)
                ])
            for r in try await command.runRead(suite, progress: progress, report: &report) { command.add(&report, r) }
        }
        let stats = cirrus.container.statistics()
        print(
            "Cirrus: \(layersAfterImport) table layers after the import, \(stats.tableLayers) at the end, "
                + "\(stats.readMerges) read-triggered merges")
        try cirrus.close()
        await pg?.close()
        await hand?.peer.close()
        report.loadAverageAtEnd = Machine.current().loadAverage
        return report
    }

    /// The hand-written SQL yardstick's tables for the data's schema, loaded (timed, into the
    /// ingest row's `postgresSQL`) and VACUUM ANALYZEd.
    func handIngest(
        _ records: [Record], schema: Schema, url: String, into row: inout SuiteResult, progress: Progress
    ) async throws -> PostgresSQLGeneric {
        let hand = PostgresSQLGeneric(peer: try await PostgresSQLPeer(url: url), schema: schema)
        try await hand.createTables()
        var times: [Double] = []
        let t0 = Measure.now()
        for start in stride(from: 0, to: records.count, by: command.batch) {
            let s0 = Measure.now()
            try await hand.insert(Array(records[start..<min(records.count, start + command.batch)]))
            times.append(Double(Measure.now() - s0))
            progress.show("insert hand-written SQL \(start)/\(records.count)")
        }
        let total = Double(Measure.now() - t0)
        let a0 = Measure.now()
        try await hand.peer.exec(
            schema.recordTypes.keys.sorted().filter { $0 != Schema.usersRecordType }.map {
                "VACUUM ANALYZE \(PostgresSQLGeneric.table($0))"
            })
        let analyze = Double(Measure.now() - a0)
        progress.done()
        var f = Figures(times: times)
        f.opsPerSecond = Double(records.count) / (total / 1e9)
        row.postgresSQL = f
        if let pg = row.postgres, pg.opsPerSecond > 0 { row.postgresVsSQL = f.opsPerSecond / pg.opsPerSecond }
        row.postgresSQLNote =
            "\(Measure.format(total)) + VACUUM ANALYZE \(Measure.format(analyze)) (INSERT … SELECT FROM unnest)"
        return hand
    }
}
