// Report: the figures of a comparison run and their three renderings — the terminal table
// (a row printed as each suite finishes), the JSON file (every figure plus the machine), and
// the SVG bar chart of the speedups (SQLite time / Cirrus time, log scale, target marks).
// With `--postgres` the table and the Markdown gain Cirrus-on-PostgreSQL's columns (median, p99,
// ops/s, "Cirrus vs PG" = PG time / Cirrus time, "PG vs SQLite" = SQLite time / PG time) and a
// PG note; without it they are unchanged, and the JSON gains fields only when they are set.

import Foundation

/// Timing of one engine on one suite; nanoseconds per operation.
struct Figures: Codable {
    var medianNs: Double
    var p99Ns: Double
    var opsPerSecond: Double
    var samples: Int

    init(times: [Double]) {
        let t = times.sorted()
        samples = t.count
        medianNs = t.isEmpty ? 0 : t[t.count / 2]
        p99Ns = t.isEmpty ? 0 : t[min(t.count - 1, Int(Double(t.count) * 0.99))]
        let total = t.reduce(0, +)
        opsPerSecond = total > 0 ? Double(t.count) / (total / 1e9) : 0
    }

    init(medianNs: Double, p99Ns: Double, opsPerSecond: Double, samples: Int) {
        self.medianNs = medianNs
        self.p99Ns = p99Ns
        self.opsPerSecond = opsPerSecond
        self.samples = samples
    }
}

struct SuiteResult: Codable {
    var suite: String
    var title: String
    var cirrus: Figures?
    var sqlite: Figures?
    /// What the SQLite column measured when not the plain equivalent (e.g. "keyset").
    var sqliteVariant: String?
    /// SQLite median / Cirrus median (for ingest: Cirrus rate / SQLite rate).
    var speedup: Double?
    var target: String?
    var met: Bool?
    var note: String = ""
    var cases: Int = 0
    /// Cirrus-on-PostgreSQL (`--postgres`): its timing, PG median / Cirrus median (for ingest:
    /// Cirrus rate / PG rate), SQLite median / PG median (ingest: PG rate / SQLite rate), and
    /// what the PG columns mean here ("n/a: reason" when the suite does not run on PG).
    var postgres: Figures? = nil
    var cirrusVsPostgres: Double? = nil
    var postgresVsSQLite: Double? = nil
    var postgresNote: String? = nil
    /// The same work in hand-written SQL on the same server (PostgresSQLPeer, with `--postgres`),
    /// Cirrus-on-PostgreSQL's median / its median (for ingest: its rate / Cirrus-on-PostgreSQL's;
    /// the target is ≤ 1.5×), and what its agreement check found.
    var postgresSQL: Figures? = nil
    var postgresVsSQL: Double? = nil
    var postgresSQLNote: String? = nil
}

struct Machine: Codable {
    var cores: Int
    var memoryBytes: UInt64
    var os: String
    var swift: String
    var sqlite: String
    var loadAverage: String
    var date: String

    static func current() -> Machine {
        let info = ProcessInfo.processInfo
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let load =
            (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(
                separator: " ") ?? "?"
        #if compiler(>=6.3)
            let swift = "6.3+"
        #elseif compiler(>=6.2)
            let swift = "6.2"
        #elseif compiler(>=6.1)
            let swift = "6.1"
        #else
            let swift = "6.0"
        #endif
        return Machine(
            cores: info.activeProcessorCount, memoryBytes: info.physicalMemory,
            os: (osRelease ?? "Linux")
                + ", kernel \(info.operatingSystemVersion.majorVersion).\(info.operatingSystemVersion.minorVersion).\(info.operatingSystemVersion.patchVersion)",
            swift: swift, sqlite: SQLiteDB.version, loadAverage: load,
            date: ISO8601DateFormatter().string(from: Date()))
    }
}

struct RunReport: Codable {
    var command: String
    var size: Int
    var seed: UInt64
    var durability: String
    var machine: Machine
    var loadAverageAtEnd: String = ""
    var memory: [String: Int] = [:]
    var results: [SuiteResult] = []
    var agreementFailures: [String] = []
    /// `host:port/database` and the container of the Cirrus-on-PostgreSQL run, when there was one.
    var postgres: String? = nil
    /// The `--data` file of a run on real records (nil: generated places).
    var data: String? = nil
    /// The read suites' figures in one line each (``RunSummary``), set when the run ends.
    var summary: RunSummary? = nil
}

/// A run's read suites summed up: the geometric mean of the speedups over SQLite and the lowest,
/// and with `--postgres` Cirrus-on-PostgreSQL against the hand-written SQL (issue 52's ≤ 1.5×).
/// Read suites are every suite but the loads, reopens and the writer beside readers (a
/// generated run's parse + check counts: it is the cost every query pays).
struct RunSummary: Codable {
    var readSuites: Int
    var geometricMeanSpeedup: Double
    var lowest: String
    var lowestSpeedup: Double
    /// Read suites where SQLite was faster, and where Cirrus was less than 1.5× faster.
    var behindSQLite: Int
    var under1_5: Int
    var postgresVsSQLGeometricMean: Double? = nil
    var postgresWithin1_5: Int? = nil
    var postgresCompared: Int? = nil
    var postgresWorst: String? = nil
    var postgresWorstRatio: Double? = nil

    /// Suites that are not reads.
    static let notReads: Set<String> = ["ingest", "bulk", "reopen", "reopen-process", "mixed"]

    /// The summary of `results`, nil when none is a read suite with a speedup.
    init?(_ results: [SuiteResult]) {
        let reads = results.filter { !Self.notReads.contains($0.suite) }
        let timed = reads.compactMap { r in r.speedup.flatMap { $0 > 0 && $0.isFinite ? (r.title, $0) : nil } }
        guard let low = timed.min(by: { $0.1 < $1.1 }) else { return nil }
        readSuites = timed.count
        geometricMeanSpeedup = Self.geometricMean(timed.map(\.1))
        lowest = low.0
        lowestSpeedup = low.1
        behindSQLite = timed.filter { $0.1 < 1 }.count
        under1_5 = timed.filter { $0.1 < 1.5 }.count
        let pg = reads.compactMap { r in r.postgresVsSQL.flatMap { $0 > 0 && $0.isFinite ? (r.title, $0) : nil } }
        if let worst = pg.max(by: { $0.1 < $1.1 }) {
            postgresVsSQLGeometricMean = Self.geometricMean(pg.map(\.1))
            postgresWithin1_5 = pg.filter { $0.1 <= 1.5 }.count
            postgresCompared = pg.count
            postgresWorst = worst.0
            postgresWorstRatio = worst.1
        }
    }

    static func geometricMean(_ xs: [Double]) -> Double {
        xs.isEmpty ? 0 : exp(xs.reduce(0) { $0 + log($1) } / Double(xs.count))
    }

    /// The summary as printed at the end of a run.
    var lines: [String] {
        let r = Table.ratio
        var out = [
            "read suites: \(readSuites), geometric mean \(r(geometricMeanSpeedup)) SQLite; lowest \(r(lowestSpeedup)) "
                + "(\(lowest)); behind SQLite: \(behindSQLite), under 1.5×: \(under1_5)"
        ]
        if let g = postgresVsSQLGeometricMean, let n = postgresWithin1_5, let c = postgresCompared,
            let w = postgresWorst, let x = postgresWorstRatio
        {
            out.append(
                "Cirrus-on-PostgreSQL / hand-written SQL: geometric mean \(r(g)), within 1.5× on \(n) of \(c); "
                    + "worst \(r(x)) (\(w))")
        }
        return out
    }
}

enum Table {
    static func pad(_ s: String, _ n: Int, right: Bool = false) -> String {
        let c = s.count
        if c >= n { return s }
        let fill = String(repeating: " ", count: n - c)
        return right ? fill + s : s + fill
    }

    static func header(postgres: Bool = false) -> String {
        pad("suite", 40) + pad("Cirrus med", 11, right: true) + pad("p99", 10, right: true)
            + pad("ops/s", 10, right: true)
            + pad("SQLite med", 12, right: true) + pad("p99", 10, right: true) + pad("ops/s", 10, right: true)
            + pad("speedup", 10, right: true) + "  " + pad("target", 8)
            + (postgres
                ? pad("PG med", 11, right: true) + pad("p99", 10, right: true) + pad("ops/s", 10, right: true)
                    + pad("vs PG", 10, right: true) + pad("PG/SQLite", 11, right: true)
                    + pad("SQL med", 11, right: true) + pad("PG/SQL", 9, right: true) + "  " : "")
            + "note"
    }

    static func ratio(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "–" }

    /// Cirrus-on-PostgreSQL against hand-written SQL, marked against the 1.5× target.
    static func sqlRatio(_ r: SuiteResult) -> String {
        guard let x = r.postgresVsSQL else { return "–" }
        return String(format: "%.2f×", x) + (x <= 1.5 ? " ✓" : " ✗")
    }

    static func rate(_ x: Double) -> String {
        if x >= 1e6 { return String(format: "%.2fM", x / 1e6) }
        if x >= 1e4 { return String(format: "%.0fk", x / 1e3) }
        if x >= 1e3 { return String(format: "%.1fk", x / 1e3) }
        return String(format: "%.1f", x)
    }

    static func row(_ r: SuiteResult, postgres: Bool = false) -> String {
        func cols(_ f: Figures?) -> String {
            guard let f else { return pad("–", 11, right: true) + pad("", 20) }
            return pad(Measure.format(f.medianNs), 11, right: true) + pad(Measure.format(f.p99Ns), 10, right: true)
                + pad(rate(f.opsPerSecond), 10, right: true)
        }
        let speed = ratio(r.speedup)
        let target = (r.target ?? "") + (r.met.map { $0 ? " ✓" : " ✗" } ?? "")
        let pg =
            postgres
            ? cols(r.postgres) + pad(ratio(r.cirrusVsPostgres), 10, right: true)
                + pad(ratio(r.postgresVsSQLite), 11, right: true)
                + pad(r.postgresSQL.map { Measure.format($0.medianNs) } ?? "–", 11, right: true)
                + pad(sqlRatio(r), 9, right: true) + "  " : ""
        let note =
            postgres
            ? [r.note, r.postgresNote.map { "PG: " + $0 } ?? "", r.postgresSQLNote.map { "SQL: " + $0 } ?? ""]
                .filter { !$0.isEmpty } : [r.note]
        return pad(r.title, 40) + cols(r.cirrus) + " " + cols(r.sqlite) + pad(speed, 10, right: true) + "  "
            + pad(target, 8) + pg + note.joined(separator: "; ")
    }

    /// The table as Markdown (docs/benchmarks.md).
    /// The table as Markdown (docs/benchmarks.md); `postgres` adds the Cirrus-on-PostgreSQL columns.
    static func markdown(_ rs: [SuiteResult], postgres: Bool = false) -> String {
        var out =
            "| suite | Cirrus median | Cirrus p99 | Cirrus ops/s | SQLite median | SQLite p99 | SQLite ops/s | speedup | target | "
        out +=
            postgres
            ? "PG median | PG p99 | PG ops/s | Cirrus vs PG | PG vs SQLite | SQL median | SQL p99 | PG vs SQL | note | PG note |\n"
            : "note |\n"
        out +=
            "|---|--:|--:|--:|--:|--:|--:|--:|---|"
            + (postgres ? "--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n" : "---|\n")
        for r in rs {
            func f(_ x: Figures?) -> String {
                guard let x else { return "– | – | –" }
                return "\(Measure.format(x.medianNs)) | \(Measure.format(x.p99Ns)) | \(rate(x.opsPerSecond))"
            }
            let t = (r.target ?? "") + (r.met.map { $0 ? " ✓" : " ✗" } ?? "")
            out += "| \(r.title) | \(f(r.cirrus)) | \(f(r.sqlite)) | \(ratio(r.speedup)) | \(t) | "
            if postgres {
                out +=
                    "\(f(r.postgres)) | \(ratio(r.cirrusVsPostgres)) | \(ratio(r.postgresVsSQLite)) | "
                    + "\(r.postgresSQL.map { Measure.format($0.medianNs) } ?? "–") | "
                    + "\(r.postgresSQL.map { Measure.format($0.p99Ns) } ?? "–") | \(sqlRatio(r)) | \(r.note) | "
                    + [r.postgresNote, r.postgresSQLNote.map { "SQL: " + $0 }].compactMap { $0 }.joined(separator: "; ")
                    + " |\n"
            } else {
                out += "\(r.note) |\n"
            }
        }
        return out
    }
}

enum Chart {
    /// A horizontal bar per suite with a speedup: log-scale axis from 0.1× to 1000×, the 1× line,
    /// and a tick at the target where there is one. Green when Cirrus is ahead, red behind.
    static func svg(_ rs: [SuiteResult], title: String) -> String {
        let rows = rs.filter { $0.speedup != nil }
        let left = 300.0, width = 560.0, rowH = 24.0, top = 50.0
        let height = top + rowH * Double(rows.count) + 40
        let lo = log10(0.1), hi = log10(1000.0)
        func x(_ v: Double) -> Double { left + (log10(max(0.1, min(1000, v))) - lo) / (hi - lo) * width }
        func esc(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        var s =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(left + width + 90))\" height=\"\(Int(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        s += "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">\(esc(title))</text>\n"
        for v in [0.1, 1, 10, 100, 1000] {
            let xv = x(v)
            s +=
                "<line x1=\"\(xv)\" y1=\"\(top - 8)\" x2=\"\(xv)\" y2=\"\(height - 30)\" stroke=\"\(v == 1 ? "#000" : "#ddd")\"/>\n"
            s +=
                "<text x=\"\(xv)\" y=\"\(height - 14)\" text-anchor=\"middle\">\(v < 1 ? "0.1" : String(Int(v)))×</text>\n"
        }
        for (i, r) in rows.enumerated() {
            guard let sp = r.speedup else { continue }
            let y = top + Double(i) * rowH
            let x0 = x(1), x1 = x(sp)
            s += "<text x=\"\(left - 8)\" y=\"\(y + 15)\" text-anchor=\"end\">\(esc(r.title))</text>\n"
            s +=
                "<rect x=\"\(min(x0, x1))\" y=\"\(y + 4)\" width=\"\(max(1, abs(x1 - x0)))\" height=\"\(rowH - 8)\" fill=\"\(sp >= 1 ? "#3a7" : "#c44")\"/>\n"
            s +=
                "<text x=\"\(max(x0, x1) + 4)\" y=\"\(y + 15)\">\(String(format: sp < 0.1 ? "%.4f×" : "%.1f×", sp))</text>\n"
            if let t = r.target, let tv = Double(t.trimmingCharacters(in: CharacterSet(charactersIn: "≥×≤ µs"))),
                t.hasPrefix("≥")
            {
                s +=
                    "<line x1=\"\(x(tv))\" y1=\"\(y + 1)\" x2=\"\(x(tv))\" y2=\"\(y + rowH - 1)\" stroke=\"#000\" stroke-width=\"2\" stroke-dasharray=\"3,2\"/>\n"
            }
        }
        s += "</svg>\n"
        return s
    }
}

enum Memory {
    /// A field of /proc/self/status in bytes (VmRSS, VmHWM); 0 when unreadable.
    static func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return digits * 1024
        }
        return 0
    }
}
