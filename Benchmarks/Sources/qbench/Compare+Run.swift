// Compare+Run: how a read suite runs — every case on both engines and compared (agreement
// first), then the two engines timed in turn, in slices, until each has had the time budget,
// cycling through the cases, one sample per query — plus the parse suite and the progress line
// shown during long steps.
// With `--postgres`, Cirrus-on-PostgreSQL's answer to each case is checked against the embedded
// engine's too (same ids; same order when the suite is ordered) and timed the same way.

import CSQLite
import Cirrus
import Foundation
import QueryChecker
import RecordModel

/// A one-line progress indicator on standard error, redrawn at most 5 times a second.
final class Progress {
    private var lastDraw: UInt64 = 0
    private var width = 0
    let enabled = isatty(2) != 0

    func show(_ text: String) {
        guard enabled else { return }
        let t = Measure.now()
        guard t - lastDraw > 200_000_000 else { return }
        lastDraw = t
        let line = "  " + text
        FileHandle.standardError.write(
            Data(("\r" + line + String(repeating: " ", count: max(0, width - line.count))).utf8))
        width = line.count
    }

    func done() {
        guard enabled, width > 0 else { return }
        FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: width) + "\r").utf8))
        width = 0
        lastDraw = 0
    }
}

extension Compare {
    /// Per-operation times of several engines' `ops`, timed in turn in slices of a 32nd of the
    /// budget (10–100 ms), until each engine has had `budget` seconds (each op at least once, at
    /// most 200 000 samples an engine). The engines thus share whatever the machine does
    /// meanwhile: on a host whose speed changes for seconds at a time, timing one engine for
    /// the whole budget and then the other put a change between them into the ratio (a one-row
    /// GeoNames query read 0.92× in such a run, and 1.39–1.45× in five runs timed in turn).
    func timeInterleaved(
        _ label: String, _ engines: [[() async throws -> [String]]], progress: Progress
    ) async throws -> [Figures] {
        let limit = UInt64(budget * 1e9)
        let slice = min(max(limit / 32, 10_000_000), 100_000_000)
        var times = [[Double]](repeating: [], count: engines.count)
        var spent = [UInt64](repeating: 0, count: engines.count)
        var next = [Int](repeating: 0, count: engines.count)
        var sink = 0
        func unfinished(_ e: Int) -> Bool {
            (spent[e] < limit || next[e] < engines[e].count) && times[e].count < 200_000
        }
        while engines.indices.contains(where: unfinished) {
            for (e, ops) in engines.enumerated() where unfinished(e) {
                let start = Measure.now()
                repeat {
                    let t0 = Measure.now()
                    sink &+= try await ops[next[e] % ops.count]().count
                    times[e].append(Double(Measure.now() - t0))
                    next[e] += 1
                } while Measure.now() - start < slice && unfinished(e)
                spent[e] += Measure.now() - start
                progress.show("\(label): \(next.map(String.init).joined(separator: " / ")) queries")
            }
        }
        progress.done()
        if sink == -1 { print("") }
        return times.map { Figures(times: $0) }
    }

    /// Per-operation times of `ops`, cycled for `budget` seconds (each op at least once, at
    /// most 200 000 samples).
    func time(_ label: String, _ ops: [() async throws -> [String]], progress: Progress) async throws -> Figures {
        var times: [Double] = []
        let start = Measure.now()
        let limit = UInt64(budget * 1e9)
        var i = 0
        var sink = 0
        while (Measure.now() - start < limit || i < ops.count) && times.count < 200_000 {
            let t0 = Measure.now()
            sink &+= try await ops[i % ops.count]().count
            times.append(Double(Measure.now() - t0))
            i += 1
            if i % 64 == 0 { progress.show("\(label): \(i) queries") }
        }
        progress.done()
        if sink == -1 { print("") }
        return Figures(times: times)
    }

    /// Agreement, then timing, of one read suite; the rows it adds to the table.
    func runRead(_ s: ReadSuite, progress: Progress, report: inout RunReport) async throws -> [SuiteResult] {
        var disagreements: [String] = []
        var rows = 0
        let pgCases = s.cases.compactMap(\.postgres)
        // PostgreSQL runs the suite when every case has its PostgreSQL form.
        let onPostgres = postgres != nil && !s.cases.isEmpty && pgCases.count == s.cases.count
        var pgDisagreements = 0
        // The hand-written SQL yardstick: compared with Cirrus too, but a difference is reported,
        // not fatal (PostGIS's sphere and 'simple' text search are not Cirrus's semantics).
        let sqlCases = s.cases.compactMap(\.postgresSQL)
        let onSQL = onPostgres && sqlCases.count == s.cases.count
        var sqlDisagreements: [String] = []
        for (i, c) in s.cases.enumerated() {
            progress.show("\(s.name): checking agreement \(i + 1)/\(s.cases.count)")
            let a = try await c.cirrus()
            let b = try c.sqlite()
            rows += a.count
            if let d = Self.difference(a, b, ordered: c.ordered) {
                disagreements.append("\(s.name): \(c.label)\n    \(d)")
            }
            if onPostgres, let pq = c.postgres {
                // A failing query fails the run as a disagreement does, naming the query.
                var d: String?
                do { d = Self.difference(a, try await pq(), ordered: c.ordered, other: "PostgreSQL") } catch {
                    d = "failed: \(error)"
                }
                if let d {
                    disagreements.append("\(s.name) (PostgreSQL): \(c.label)\n    \(d)")
                    pgDisagreements += 1
                }
            }
            if onSQL, let sq = c.postgresSQL {
                var d: String?
                do { d = Self.difference(a, try await sq(), ordered: c.ordered, other: "SQL") } catch {
                    d = "failed: \(error)"
                }
                if let d { sqlDisagreements.append("\(s.name) (hand-written SQL): \(c.label)\n    \(d)") }
            }
            if let alt = s.alternative, i < alt.run.count {
                let k = try alt.run[i]()
                if let d = Self.difference(a, k, ordered: c.ordered) {
                    disagreements.append("\(s.name) (\(alt.label)): \(c.label)\n    \(d)")
                }
            }
        }
        progress.done()
        if !sqlDisagreements.isEmpty {
            print(
                "\n  note: hand-written SQL differs from Cirrus on \(sqlDisagreements.count) of \(s.cases.count) queries"
            )
            for d in sqlDisagreements.prefix(3) { print("    " + d) }
        }
        let sqlNote =
            onSQL
            ? (sqlDisagreements.isEmpty
                ? "agrees on \(s.cases.count) queries" : "differs from Cirrus on \(sqlDisagreements.count) queries")
            : nil
        let avg = s.cases.isEmpty ? 0 : rows / s.cases.count
        if !disagreements.isEmpty {
            print("\n*** DISAGREEMENT in \(s.name): \(disagreements.count) of \(s.cases.count) queries differ")
            for d in disagreements.prefix(5) { print("  " + d) }
            report.agreementFailures += disagreements
            return [
                SuiteResult(
                    suite: s.name, title: s.title, note: "ENGINES DISAGREE on \(disagreements.count) queries",
                    cases: s.cases.count,
                    postgresNote: pgDisagreements > 0 ? "DISAGREES with Cirrus on \(pgDisagreements) queries" : nil)
            ]
        }
        let targetText = s.target.map { "≥ \(Int($0))×" }
        // What the PG columns say when PostgreSQL did not run the suite.
        let pgNote: String? =
            postgres == nil || onPostgres
            ? nil : s.cases.isEmpty ? "no cases at this size" : "n/a: \(s.postgresUnavailable ?? "no PostgreSQL form")"
        if verify || s.cases.isEmpty {
            return [
                SuiteResult(
                    suite: s.name, title: s.title, target: targetText,
                    note: s.cases.isEmpty
                        ? "no cases at this size" : "agree on \(s.cases.count) queries, avg \(avg) rows",
                    cases: s.cases.count,
                    postgresNote: onPostgres ? "agrees with Cirrus on \(s.cases.count) queries" : pgNote,
                    postgresSQLNote: sqlNote)
            ]
        }
        let both = try await timeInterleaved(
            "\(s.name) Cirrus / SQLite", [s.cases.map(\.cirrus), s.cases.map { c in { try c.sqlite() } }],
            progress: progress)
        let (cf, sf) = (both[0], both[1])
        let speed = sf.medianNs / cf.medianNs
        var first = SuiteResult(
            suite: s.name, title: s.title, cirrus: cf, sqlite: sf, speedup: speed, target: targetText,
            met: s.target.map { speed >= $0 }, note: "\(s.cases.count) queries, avg \(avg) rows",
            cases: s.cases.count, postgresNote: pgNote)
        if onPostgres {
            // With the hand-written SQL, the two PostgreSQL engines are timed in turn, as Cirrus
            // and SQLite are: both meet the same moments of the server.
            let pf: Figures
            if onSQL {
                let two = try await timeInterleaved(
                    "\(s.name) PostgreSQL / SQL", [pgCases, sqlCases], progress: progress)
                pf = two[0]
                first.postgresSQL = two[1]
                first.postgresVsSQL = two[0].medianNs / two[1].medianNs
                first.postgresSQLNote = sqlNote
            } else {
                pf = try await time("\(s.name) PostgreSQL", pgCases, progress: progress)
            }
            first.postgres = pf
            first.cirrusVsPostgres = pf.medianNs / cf.medianNs
            first.postgresVsSQLite = sf.medianNs / pf.medianNs
            first.postgresNote = "agrees on \(s.cases.count) queries"
        }
        var out = [first]
        if let alt = s.alternative {
            let kf = try await time("\(s.name) \(alt.label)", alt.run.map { r in { try r() } }, progress: progress)
            let ks = kf.medianNs / cf.medianNs
            out.append(
                SuiteResult(
                    suite: s.name + "-keyset", title: "  same page vs \(alt.label)", cirrus: cf, sqlite: kf,
                    sqliteVariant: alt.label, speedup: ks, note: "SQLite seeks past the previous page",
                    cases: s.cases.count))
        }
        return out
    }

    /// nil when equal; otherwise the counts and the first differences.
    static func difference(_ a: [String], _ b: [String], ordered: Bool, other: String = "SQLite") -> String? {
        if ordered {
            if a == b { return nil }
            let i = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            let ca = a[i..<min(a.count, i + 3)].joined(separator: ","),
                sb = b[i..<min(b.count, i + 3)].joined(separator: ",")
            return
                "Cirrus \(a.count) rows, \(other) \(b.count); first difference at row \(i): Cirrus [\(ca)] \(other) [\(sb)]"
        }
        let sa = Set(a), sb = Set(b)
        if sa == sb && a.count == b.count { return nil }
        let onlyA = sa.subtracting(sb).sorted().prefix(5), onlyB = sb.subtracting(sa).sorted().prefix(5)
        return
            "Cirrus \(a.count) rows, \(other) \(b.count); only Cirrus: \(Array(onlyA)); only \(other): \(Array(onlyB))"
    }

    /// Parse + check of a predicate against the schema (Cirrus) vs preparing the equivalent
    /// statement (SQLite's parse + resolve + plan). Batches of 16 per sample.
    func parseSuite(_ cirrus: CirrusPeer, _ sqlite: SQLitePeer, _ data: PlaceSet) throws -> SuiteResult {
        let here = FieldValue.location(Location(latitude: 48.8584, longitude: 2.2945))
        let shapes: [(String, [FieldValue], String)] = [
            (
                "kind == %@", [.string("cafe")],
                "SELECT recordName FROM place WHERE kind = ? ORDER BY population DESC LIMIT 20"
            ),
            (
                "population >= %@ AND population < %@", [.int64(10), .int64(100)],
                "SELECT recordName FROM place WHERE population >= ? AND population < ? ORDER BY name LIMIT 20"
            ),
            (
                "kind IN %@", [.list([.string("cafe"), .string("bar")])],
                "SELECT recordName FROM place WHERE kind IN (?, ?) LIMIT 20"
            ),
            (
                "name BEGINSWITH %@", [.string("abx")],
                "SELECT recordName FROM place WHERE name >= ? AND name < ? ORDER BY name LIMIT 20"
            ),
            (
                "tags CONTAINS %@", [.string("tagx")],
                "SELECT recordName FROM place WHERE id IN (SELECT id FROM place_tag WHERE tag = ?)"
            ),
            (
                "self CONTAINS %@ AND population BETWEEN {%@, %@}", [.string("abx"), .int64(1), .int64(9)],
                "SELECT recordName FROM place WHERE id IN (SELECT rowid FROM place_fts WHERE place_fts MATCH ?) AND population BETWEEN ? AND ?"
            ),
            (
                "kind == %@ AND distanceToLocation:fromLocation:(location, %@) < %@",
                [.string("cafe"), here, .double(10)],
                "SELECT p.recordName FROM place_rtree r JOIN place p ON p.id = r.id WHERE r.maxLat >= ? AND r.minLat <= ? AND r.maxLon >= ? AND r.minLon <= ? AND dist_km(p.lat, p.lon, ?, ?) <= ? AND p.kind = ?"
            ),
        ]
        let schema = cirrus.container.schema
        let contexts = shapes.map {
            CheckContext(arguments: $0.1.map { .value($0) }, schema: schema, recordType: "Place")
        }
        for (i, s) in shapes.enumerated() {
            do { _ = try QueryChecker.check(s.0, context: contexts[i]) } catch {
                throw SQLiteError(message: "parse suite: Cirrus rejects \(s.0): \(error)")
            }
        }
        let samples = max(200, Int(budget * 20_000))
        let cf = Measure.run("parse", samples: samples, batch: 16) { i in
            _ = try? QueryChecker.check(shapes[i % shapes.count].0, context: contexts[i % shapes.count])
        }
        let db = sqlite.db.handle
        let sf = Measure.run("prepare", samples: samples / 4, batch: 16) { i in
            var st: OpaquePointer?
            sqlite3_prepare_v2(db, shapes[i % shapes.count].2, -1, &st, nil)
            sqlite3_finalize(st)
        }
        let c = Figures(medianNs: cf.median, p99Ns: cf.p99, opsPerSecond: 1e9 / cf.median, samples: samples)
        let s = Figures(medianNs: sf.median, p99Ns: sf.p99, opsPerSecond: 1e9 / sf.median, samples: samples / 4)
        return SuiteResult(
            suite: "parse", title: "parse + check (SQLite: prepare)", cirrus: c, sqlite: s,
            speedup: sf.median / cf.median,
            target: "≤ 2 µs", met: cf.median <= 2000, note: "\(shapes.count) predicate shapes; per op, batches of 16")
    }
}
