// SQLitePeer: the places in SQLite, written as a careful SQLite user would — WAL, `synchronous`
// matching Cirrus's durability, batched transactions, prepared statements (cached per SQL
// text), a B-tree index per queried field, tags in a side table (id, tag) with an index, FTS5
// (unicode61 remove_diacritics 2) over name + description, an R*Tree over locations refined by
// the exact great-circle distance (`dist_km`, the same formula as Cirrus). Nearest-first is
// "candidates + sort": SQLite has no distance browsing, so it widens a radius until the page is
// complete and sorts every candidate inside it. Rows are read into `Place` values, as Cirrus
// returns whole records. Ties are broken by recordName, as Cirrus breaks them by record ID.

import Foundation
import Indexes

final class SQLitePeer {
    let db: SQLiteDB
    let path: String
    private var cache: [String: Statement] = [:]
    static let columns = "p.recordName, p.name, p.kind, p.population, p.country, p.lat, p.lon, p.tags, p.description"
    static let tagSeparator: Character = "\u{1F}"

    /// Opens (creating) the database at `path`; `synchronous` is FULL, NORMAL or OFF.
    init(path: String, synchronous: String) throws {
        self.path = path
        db = try SQLiteDB(path: path)
        try db.exec(
            """
            PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA cache_size = -262144;
            PRAGMA mmap_size = 1073741824; PRAGMA temp_store = MEMORY;
            """)
    }

    /// Creates the tables and, unless `secondaryIndexes` is false (a bulk load that adds them after,
    /// by calling this again), the B-tree indexes.
    func createSchema(secondaryIndexes: Bool = true) throws {
        try db.exec(
            """
            CREATE TABLE IF NOT EXISTS place(id INTEGER PRIMARY KEY, recordName TEXT NOT NULL UNIQUE, name TEXT,
                kind TEXT, population INTEGER, country TEXT, lat REAL, lon REAL, tags TEXT, description TEXT);
            CREATE TABLE IF NOT EXISTS place_tag(id INTEGER NOT NULL, tag TEXT NOT NULL);
            CREATE VIRTUAL TABLE IF NOT EXISTS place_fts USING fts5(name, description, content='place',
                content_rowid='id', tokenize='unicode61 remove_diacritics 2');
            CREATE VIRTUAL TABLE IF NOT EXISTS place_rtree USING rtree(id, minLat, maxLat, minLon, maxLon);
            """)
        guard secondaryIndexes else { return }
        try db.exec(
            """
            CREATE INDEX IF NOT EXISTS place_name ON place(name);
            CREATE INDEX IF NOT EXISTS place_kind ON place(kind);
            CREATE INDEX IF NOT EXISTS place_population ON place(population);
            CREATE INDEX IF NOT EXISTS place_country ON place(country);
            CREATE INDEX IF NOT EXISTS place_tag_tag ON place_tag(tag, id);
            """)
    }

    /// Inserts `places` (ids from `firstID`) in transactions of `batch`, calling `progress(n)`.
    func ingest<C: RandomAccessCollection<Place>>(
        _ places: C, firstID: Int, batch: Int, progress: (Int) -> Void
    ) throws where C.Index == Int {
        let ins = try statement(
            "INSERT INTO place(id, recordName, name, kind, population, country, lat, lon, tags, description) VALUES (?,?,?,?,?,?,?,?,?,?)"
        )
        let tag = try statement("INSERT INTO place_tag(id, tag) VALUES (?, ?)")
        let fts = try statement("INSERT INTO place_fts(rowid, name, description) VALUES (?, ?, ?)")
        let geo = try statement("INSERT INTO place_rtree(id, minLat, maxLat, minLon, maxLon) VALUES (?, ?, ?, ?, ?)")
        var id = firstID
        var done = 0
        var i = places.startIndex
        while i < places.endIndex {
            let end = min(places.endIndex, i + batch)
            try db.exec("BEGIN")
            for p in places[i..<end] {
                let rid = SQLValue.int(Int64(id))
                try ins.run([
                    rid, .text(p.recordName), .text(p.name), .text(p.kind), .int(p.population), .text(p.country),
                    .double(p.latitude), .double(p.longitude),
                    .text(p.tags.joined(separator: String(Self.tagSeparator))),
                    .text(p.description),
                ])
                for t in p.tags { try tag.run([rid, .text(t)]) }
                try fts.run([rid, .text(p.name), .text(p.description)])
                try geo.run([rid, .double(p.latitude), .double(p.latitude), .double(p.longitude), .double(p.longitude)])
                id += 1
            }
            try db.exec("COMMIT")
            done += end - i
            progress(done)
            i = end
        }
    }

    /// What a careful user runs after a bulk load: statistics for the planner.
    func analyze() throws { try db.exec("ANALYZE") }

    func statement(_ sql: String) throws -> Statement {
        if let s = cache[sql] { return s }
        let s = try db.prepare(sql)
        cache[sql] = s
        return s
    }

    /// Reads the row of `columns` starting at column `at`.
    static func place(_ s: Statement, at c: Int32 = 0) -> Place {
        let tags = s.text(c + 7)
        return Place(
            recordName: s.text(c), name: s.text(c + 1), kind: s.text(c + 2), population: s.int(c + 3),
            country: s.text(c + 4), latitude: s.double(c + 5), longitude: s.double(c + 6),
            tags: tags.isEmpty ? [] : tags.split(separator: tagSeparator).map(String.init), description: s.text(c + 8))
    }

    /// Places of `SELECT columns FROM place p <tail>` with `args`.
    func places(_ tail: String, _ args: [SQLValue]) throws -> [Place] {
        let s = try statement("SELECT \(Self.columns) FROM place p " + tail)
        s.bind(args)
        var out: [Place] = []
        while try s.step() { out.append(Self.place(s)) }
        return out
    }

    func point(_ recordName: String) throws -> [Place] {
        try places("WHERE p.recordName = ?", [.text(recordName)])
    }

    // MARK: - locations

    /// Latitude/longitude boxes covering the circle (two when it crosses the antimeridian, the
    /// whole longitude range when it reaches a pole), widened by a small margin; the exact
    /// distance test discards what the boxes over-cover.
    static func boxes(lat: Double, lon: Double, km: Double) -> [(Double, Double, Double, Double)] {
        let θ = km / GeoMath.earthRadiusKm
        let dLat = θ * 180 / .pi + 1e-4
        let minLat = max(-90, lat - dLat), maxLat = min(90, lat + dLat)
        if θ >= .pi / 2 || lat + dLat >= 90 || lat - dLat <= -90 { return [(minLat, maxLat, -180, 180)] }
        let dLon = asin(min(1, sin(θ) / cos(lat * .pi / 180))) * 180 / .pi + 1e-4
        let lo = lon - dLon, hi = lon + dLon
        if lo < -180 { return [(minLat, maxLat, lo + 360, 180), (minLat, maxLat, -180, hi)] }
        if hi > 180 { return [(minLat, maxLat, lo, 180), (minLat, maxLat, -180, hi - 360)] }
        return [(minLat, maxLat, lo, hi)]
    }

    /// SELECT of the places within `km` of the centre (R*Tree boxes + dist_km), one branch per
    /// box joined by UNION ALL; `extra` is ANDed to each branch, `order` appended.
    func within(
        lat: Double, lon: Double, km: Double, extra: String = "", extraArgs: [SQLValue] = [], order: String = ""
    ) throws -> [Place] {
        let bx = Self.boxes(lat: lat, lon: lon, km: km)
        let branch =
            "SELECT \(Self.columns), dist_km(p.lat, p.lon, ?, ?) AS d FROM place_rtree r CROSS JOIN place p ON p.id = r.id "
            + "WHERE r.maxLat >= ? AND r.minLat <= ? AND r.maxLon >= ? AND r.minLon <= ? AND d <= ?" + extra
        let sql = Array(repeating: branch, count: bx.count).joined(separator: " UNION ALL ") + order
        var args: [SQLValue] = []
        for b in bx {
            args +=
                [.double(lat), .double(lon), .double(b.0), .double(b.1), .double(b.2), .double(b.3), .double(km)]
                + extraArgs
        }
        let s = try statement(sql)
        s.bind(args)
        var out: [Place] = []
        while try s.step() { out.append(Self.place(s)) }
        return out
    }

    /// The places `offset..<offset+limit` nearest to the centre, ties by recordName: widen the
    /// radius ×4 from `startKm` until the page is complete, sorting every candidate inside it.
    func nearest(lat: Double, lon: Double, offset: Int, limit: Int, startKm: Double = 2) throws -> [Place] {
        var km = startKm
        while true {
            let page = try within(
                lat: lat, lon: lon, km: km, order: " ORDER BY d, recordName LIMIT \(limit) OFFSET \(offset)")
            if page.count == limit || km > 20_100 { return page }
            km *= 4
        }
    }

    // MARK: - writes

    /// Sets the population of `recordNames` in one transaction.
    func updatePopulation(_ updates: [(String, Int64)]) throws {
        let up = try statement("UPDATE place SET population = ? WHERE recordName = ?")
        try db.exec("BEGIN")
        for (n, v) in updates { try up.run([.int(v), .text(n)]) }
        try db.exec("COMMIT")
    }

    /// Database file + WAL size in bytes.
    var fileBytes: Int {
        let fm = FileManager.default
        return [path, path + "-wal"].reduce(0) { acc, p in
            acc + ((try? fm.attributesOfItem(atPath: p)[.size] as? Int) ?? 0)
        }
    }
}
