// Suites: the read workloads of the cross-engine comparison, each a list of cases — the same
// query on Cirrus (a RecordQuery through the public API) and on SQLite (its SQL) with the same
// parameters, drawn from the data by a seeded generator. Each case returns the record names in
// the order the engine gave them; `ordered` says whether that order is defined (then it must be
// equal, ties broken by record name on both sides) or compared as a set. With `--postgres`, each
// case also runs the same RecordQuery on Cirrus-on-PostgreSQL (`postgres`, nil otherwise).

import Cirrus
import Foundation
import PostgresNIO
import RecordModel

/// One query on both engines.
struct Case {
    var label: String
    var ordered: Bool
    var cirrus: () async throws -> [String]
    var sqlite: () throws -> [String]
    /// The same query on Cirrus-on-PostgreSQL; nil without `--postgres`.
    var postgres: (() async throws -> [String])? = nil
    /// The same query in hand-written SQL on the same server (PostgresSQLPeer); nil without `--postgres`.
    var postgresSQL: (() async throws -> [String])? = nil
}

/// A read suite: its cases, its target (the least speedup, SQLite time / Cirrus time), and an
/// optional second SQLite variant (keyset paging beside OFFSET).
struct ReadSuite {
    var name: String
    var title: String
    var target: Double?
    var cases: [Case]
    var alternative: (label: String, run: [() throws -> [String]])? = nil
    /// Why the suite does not run on PostgreSQL (reported as n/a), when it does not.
    var postgresUnavailable: String? = nil
}

struct SuiteBuilder {
    let data: PlaceSet
    let cirrus: CirrusPeer
    let sqlite: SQLitePeer
    let postgres: PostgresPeer?
    /// The hand-written SQL yardstick on the same server (with `--postgres`).
    let sql: PostgresSQLPeer?
    var rng: Rng
    let count: Int  // cases per suite

    var n: Int { data.places.count }
    static let big = 1_000_000

    mutating func randomPlace() -> Place { data.places[rng.below(n)] }

    /// A centre near a data point (jittered ~1 km), so radius queries land where the data is.
    mutating func centre() -> Location {
        let p = randomPlace()
        return Location(
            latitude: max(-90, min(90, p.latitude + (rng.unit() - 0.5) * 0.006)),
            longitude: max(-180, min(180, p.longitude + (rng.unit() - 0.5) * 0.006)))
    }

    /// A sorted page on Cirrus (first page, `limit` rows).
    func cirrusPage(_ q: RecordQuery, _ limit: Int) -> () async throws -> [String] {
        let c = cirrus
        return { namesOf(try await c.page(q, limit: limit).0) }
    }

    /// Every match on Cirrus (set semantics).
    func cirrusAll(_ q: RecordQuery) -> () async throws -> [String] {
        let c = cirrus
        return { namesOf(try await c.all(q, pageSize: 1_000_000)) }
    }

    /// A sorted first page on PostgreSQL; nil without `--postgres`.
    func pgPage(_ q: RecordQuery, _ limit: Int) -> (() async throws -> [String])? {
        guard let p = postgres else { return nil }
        return { namesOf(try await p.page(q, limit: limit).0) }
    }

    /// Every match on PostgreSQL (set semantics); nil without `--postgres`.
    func pgAll(_ q: RecordQuery) -> (() async throws -> [String])? {
        guard let p = postgres else { return nil }
        return { namesOf(try await p.all(q, pageSize: 1_000_000)) }
    }

    /// A hand-written SQL statement on PostgreSQL; nil without `--postgres`.
    func hand<S: PostgresPreparedStatement>(_ s: S) -> (() async throws -> [String])?
    where S.Row == PostgresSQLPeer.PlaceRow {
        guard let p = sql else { return nil }
        return { namesOf(try await p.places(s)) }
    }

    func sql(_ tail: String, _ args: [SQLValue]) -> () throws -> [String] {
        let s = sqlite
        return { namesOf(try s.places(tail, args)) }
    }

    static func label(_ q: RecordQuery) -> String {
        let args = q.arguments.map { a -> String in
            switch a {
            case .value(let v): return "\(v)"
            case .key(let k): return k
            }
        }
        let sort = q.sortDescriptors.map(\.description).joined(separator: ", ")
        return q.predicate + " [" + args.joined(separator: ", ") + "]" + (sort.isEmpty ? "" : " sort " + sort)
    }

    func query(_ predicate: String, _ args: [FieldValue], sort: [RecordModel.SortDescriptor] = []) -> RecordQuery {
        RecordQuery(
            recordType: "Place", predicate: predicate, arguments: args.map { .value($0) }, sortDescriptors: sort)
    }

    // MARK: - the suites

    mutating func point() -> ReadSuite {
        let c = cirrus, s = sqlite
        let cases = (0..<count).map { _ -> Case in
            let name = randomPlace().recordName
            return Case(
                label: "record(for: \(name))", ordered: true,
                cirrus: { [try await c.point(name).recordID.recordName] },
                sqlite: { try s.point(name).map(\.recordName) },
                postgres: postgres.map { p in { try await p.point(name) } },
                postgresSQL: hand(PostgresSQLPeer.Point(name: name)))
        }
        return ReadSuite(name: "point", title: "point lookup by record name", target: 4, cases: cases)
    }

    mutating func equalitySort() -> ReadSuite {
        let cases = (0..<count).map { i -> Case in
            let p = randomPlace()
            if i % 2 == 0 {
                let q = query("kind == %@", [.string(p.kind)], sort: [.field("population", ascending: false)])
                return Case(
                    label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                    sqlite: sql("WHERE p.kind = ? ORDER BY p.population DESC, p.recordName LIMIT 20", [.text(p.kind)]),
                    postgres: pgPage(q, 20), postgresSQL: hand(PostgresSQLPeer.KindByPopulation(kind: p.kind)))
            }
            let q = query("country == %@", [.string(p.country)], sort: [.field("name", ascending: true)])
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: sql("WHERE p.country = ? ORDER BY p.name, p.recordName LIMIT 20", [.text(p.country)]),
                postgres: pgPage(q, 20), postgresSQL: hand(PostgresSQLPeer.CountryByName(country: p.country)))
        }
        return ReadSuite(name: "eq-sort", title: "equality + sort + limit 20", target: 3, cases: cases)
    }

    mutating func rangeSort() -> ReadSuite {
        let cases = (0..<count).map { i -> Case in
            let a = randomPlace().population, b = randomPlace().population
            let lo = min(a, b), hi = max(a, b) + 1
            if i % 2 == 0 {
                let q = query(
                    "population >= %@ AND population < %@", [.int64(lo), .int64(hi)],
                    sort: [.field("population", ascending: false)])
                return Case(
                    label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                    sqlite: sql(
                        "WHERE p.population >= ? AND p.population < ? ORDER BY p.population DESC, p.recordName LIMIT 20",
                        [.int(lo), .int(hi)]), postgres: pgPage(q, 20),
                    postgresSQL: hand(PostgresSQLPeer.RangeByPopulation(lo: lo, hi: hi)))
            }
            let q = query(
                "population >= %@ AND population < %@", [.int64(lo), .int64(hi)],
                sort: [.field("name", ascending: true)])
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: sql(
                    "WHERE p.population >= ? AND p.population < ? ORDER BY p.name, p.recordName LIMIT 20",
                    [.int(lo), .int(hi)]), postgres: pgPage(q, 20),
                postgresSQL: hand(PostgresSQLPeer.RangeByName(lo: lo, hi: hi)))
        }
        return ReadSuite(name: "range-sort", title: "range + sort + limit 20", target: 3, cases: cases)
    }

    mutating func inList() -> ReadSuite {
        let cases = (0..<count).map { _ -> Case in
            let ks = Array(Set((0..<3).map { _ in randomPlace().kind })).sorted()
            let q = query("kind IN %@", [.list(ks.map { .string($0) })], sort: [.field("population", ascending: false)])
            let marks = ks.map { _ in "?" }.joined(separator: ", ")
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: sql(
                    "WHERE p.kind IN (\(marks)) ORDER BY p.population DESC, p.recordName LIMIT 20", ks.map { .text($0) }
                ), postgres: pgPage(q, 20), postgresSQL: hand(PostgresSQLPeer.KindsByPopulation(kinds: ks)))
        }
        return ReadSuite(name: "in", title: "IN (3 kinds) + sort + limit 20", target: nil, cases: cases)
    }

    mutating func beginsWith() -> ReadSuite {
        let cases = (0..<count).map { _ -> Case in
            let prefix = String(randomPlace().name.prefix(3))
            let q = query("name BEGINSWITH %@", [.string(prefix)], sort: [.field("name", ascending: true)])
            // A good SQLite user writes the prefix as a range so the B-tree is used (LIKE is case-insensitive).
            let upper =
                String(prefix.dropLast()) + String(UnicodeScalar(UInt8(prefix.utf8.last.map { $0 &+ 1 } ?? 0x7F)))
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: sql(
                    "WHERE p.name >= ? AND p.name < ? ORDER BY p.name, p.recordName LIMIT 20",
                    [.text(prefix), .text(upper)]), postgres: pgPage(q, 20),
                postgresSQL: hand(PostgresSQLPeer.Prefix(lo: prefix, hi: upper)))
        }
        return ReadSuite(name: "beginswith", title: "BEGINSWITH + sort + limit 20", target: nil, cases: cases)
    }

    mutating func listContains() -> ReadSuite {
        let cases = (0..<count).map { _ -> Case in
            let tag = PlaceSet.tags[rng.below(PlaceSet.tags.count)]
            let q = query("tags CONTAINS %@", [.string(tag)], sort: [.field("population", ascending: false)])
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: sql(
                    "WHERE p.id IN (SELECT id FROM place_tag WHERE tag = ?) ORDER BY p.population DESC, p.recordName LIMIT 20",
                    [.text(tag)]), postgres: pgPage(q, 20), postgresSQL: hand(PostgresSQLPeer.TagByPopulation(tag: tag))
            )
        }
        return ReadSuite(name: "list-contains", title: "list CONTAINS + sort + limit 20", target: nil, cases: cases)
    }

    /// Words matched by between `lo` and `hi` records (at least one word: the rarest above lo).
    func words(_ lo: Int, _ hi: Int) -> [String] {
        let w = data.words(withFrequencyIn: max(1, lo)...max(1, hi))
        return w.isEmpty ? [data.vocabulary[0]] : w
    }

    mutating func textAny() -> ReadSuite {
        let pool = words(n / 10_000, n / 1_000)
        let cases = (0..<count).map { _ -> Case in
            let a = pool[rng.below(pool.count)], b = pool[rng.below(pool.count)]
            let q = query("self CONTAINS %@", [.string(a + " " + b)])
            return Case(
                label: Self.label(q), ordered: false, cirrus: cirrusAll(q),
                sqlite: sql(
                    "WHERE p.id IN (SELECT rowid FROM place_fts WHERE place_fts MATCH ?)",
                    [.text("\"\(a)\" OR \"\(b)\"")]), postgres: pgAll(q),
                postgresSQL: hand(PostgresSQLPeer.Text(query: "\(a) | \(b)")))
        }
        return ReadSuite(name: "text-any", title: "text: any of 2 words (all matches)", target: nil, cases: cases)
    }

    mutating func textAll() -> ReadSuite {
        let pool = words(n / 100, n / 20)
        let cases = (0..<count).map { _ -> Case in
            let a = pool[rng.below(pool.count)], b = pool[rng.below(pool.count)]
            let q = query("ALL tokenize(%@, 'Cdl') IN allTokens", [.string(a + " " + b)])
            return Case(
                label: Self.label(q), ordered: false, cirrus: cirrusAll(q),
                sqlite: sql(
                    "WHERE p.id IN (SELECT rowid FROM place_fts WHERE place_fts MATCH ?)",
                    [.text("\"\(a)\" AND \"\(b)\"")]), postgres: pgAll(q),
                postgresSQL: hand(PostgresSQLPeer.Text(query: "\(a) & \(b)")))
        }
        return ReadSuite(name: "text-all", title: "text: all of 2 words (all matches)", target: nil, cases: cases)
    }

    mutating func textRange() -> ReadSuite {
        let pool = words(n / 1_000, n / 100)
        let cases = (0..<count).map { _ -> Case in
            let w = pool[rng.below(pool.count)]
            let lo = Int64(100 + rng.below(200)), hi = lo * Int64(2 + rng.below(20))
            let q = query("self CONTAINS %@ AND population BETWEEN {%@, %@}", [.string(w), .int64(lo), .int64(hi)])
            return Case(
                label: Self.label(q), ordered: false, cirrus: cirrusAll(q),
                sqlite: sql(
                    "WHERE p.id IN (SELECT rowid FROM place_fts WHERE place_fts MATCH ?) AND p.population BETWEEN ? AND ?",
                    [.text("\"\(w)\""), .int(lo), .int(hi)]), postgres: pgAll(q),
                postgresSQL: hand(PostgresSQLPeer.TextRange(query: w, lo: lo, hi: hi)))
        }
        return ReadSuite(name: "text-range", title: "text + numeric range (all matches)", target: 5, cases: cases)
    }

    mutating func radius(_ km: Double) -> ReadSuite {
        let s = sqlite
        let cases = (0..<count).map { _ -> Case in
            let c = centre()
            let q = query("distanceToLocation:fromLocation:(location, %@) < %@", [.location(c), .double(km)])
            return Case(
                label: Self.label(q), ordered: false, cirrus: cirrusAll(q),
                sqlite: { namesOf(try s.within(lat: c.latitude, lon: c.longitude, km: km)) }, postgres: pgAll(q),
                postgresSQL: hand(
                    PostgresSQLPeer.Radius(longitude: c.longitude, latitude: c.latitude, metres: km * 1000)))
        }
        return ReadSuite(
            name: "radius-\(Int(km))", title: "radius \(Int(km)) km (all matches)", target: km == 10 ? 4 : nil,
            cases: cases)
    }

    mutating func radiusEquality() -> ReadSuite {
        let s = sqlite
        let cases = (0..<count).map { _ -> Case in
            let c = centre()
            let kind = randomPlace().kind
            let q = query(
                "kind == %@ AND distanceToLocation:fromLocation:(location, %@) < %@",
                [.string(kind), .location(c), .double(10)])
            return Case(
                label: Self.label(q), ordered: false, cirrus: cirrusAll(q),
                sqlite: {
                    namesOf(
                        try s.within(
                            lat: c.latitude, lon: c.longitude, km: 10, extra: " AND p.kind = ?",
                            extraArgs: [.text(kind)]))
                }, postgres: pgAll(q),
                postgresSQL: hand(
                    PostgresSQLPeer.RadiusKind(longitude: c.longitude, latitude: c.latitude, metres: 10_000, kind: kind)
                ))
        }
        return ReadSuite(name: "radius-eq", title: "radius 10 km + equality", target: nil, cases: cases)
    }

    mutating func nearestFirst() -> ReadSuite {
        let s = sqlite
        let cases = (0..<count).map { _ -> Case in
            let c = centre()
            let q = query("TRUEPREDICATE", [], sort: [.distance(field: "location", from: c)])
            return Case(
                label: Self.label(q), ordered: true, cirrus: cirrusPage(q, 20),
                sqlite: { namesOf(try s.nearest(lat: c.latitude, lon: c.longitude, offset: 0, limit: 20)) },
                postgres: pgPage(q, 20),
                postgresSQL: hand(PostgresSQLPeer.Nearest(longitude: c.longitude, latitude: c.latitude, offset: 0)))
        }
        return ReadSuite(name: "nearest-first", title: "nearest-first, first page of 20", target: 10, cases: cases)
    }
}

func namesOf(_ r: [Record]) -> [String] { r.map(\.recordID.recordName) }
func namesOf(_ p: [Place]) -> [String] { p.map(\.recordName) }
