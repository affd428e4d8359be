// The executor against a full-scan oracle on random data, with forced continuations: for every
// random query, paging with sizes 1, 2, 7 and 50 must concatenate to the one-shot result, which
// must equal the oracle's answer in the same order (sort keys, then record id).

import CirrusTestSupport
import Indexes
import Testing

@testable import QueryExecution
import QueryChecker
import QueryPlanner
import RecordModel

struct RandomData {
    var rng: SeededRandom
    let kinds = ["cafe", "bar", "museum", "park", "Café"]
    let words = ["old", "bridge", "river", "coffee", "the", "stone", "東京", "tower", "and", "garden"]
    let zones = [ZoneID.default, ZoneID(zoneName: "Paris")]

    mutating func location() -> Location {
        switch rng.below(5) {
        case 0: return Location(latitude: 89.9 + Double(rng.below(100)) / 1000, longitude: Double(rng.below(360)) - 180)  // pole
        case 1:  // both sides of the antimeridian
            let lon = 179.9 + Double(rng.below(10)) / 100
            return Location(latitude: Double(rng.below(20)) / 10 - 1, longitude: rng.chance(0.5) ? lon : -lon)
        case 2: return Location(latitude: 48.85 + Double(rng.below(100)) / 1000, longitude: 2.29 + Double(rng.below(100)) / 1000)  // Paris cluster
        default: return Location(latitude: Double(rng.below(1800)) / 10 - 90, longitude: Double(rng.below(3600)) / 10 - 180)
        }
    }

    mutating func record(_ i: Int) -> Record {
        var f: [String: FieldValue] = [:]
        if rng.chance(0.9) { f["kind"] = .string(kinds[rng.below(kinds.count)]) }
        if rng.chance(0.85) { f["population"] = rng.chance(0.8) ? .int64(Int64(rng.below(60))) : .double(Double(rng.below(120)) / 2) }
        if rng.chance(0.8) { f["name"] = .string((0..<(1 + rng.below(3))).map { _ in words[rng.below(words.count)] }.joined(separator: " ")) }
        if rng.chance(0.8) { f["tags"] = .list((0..<rng.below(4)).map { _ in .string(words[rng.below(words.count)]) }) }
        if rng.chance(0.85) { f["location"] = .location(location()) }
        if rng.chance(0.7) { f["rating"] = .double(Double(rng.below(11)) / 2) }
        let zone = zones[rng.below(zones.count)]
        return Record(recordType: "Place", recordID: RecordID(recordName: "r\(rng.below(1000))-\(i)", zoneID: zone), fields: f,
                      creationDate: Timestamp(millisecondsSince1970: Int64(rng.below(50))))
    }

    mutating func schema() -> RecordTypeSchema {
        func opts(_ t: FieldType) -> IndexOptions { rng.chance(0.75) ? IndexOptions.automatic(for: t) : (t.scalar == .string && !t.isList && rng.chance(0.5) ? [.searchable] : []) }
        let fields: [(String, FieldType)] = [("kind", .string), ("population", .int64), ("name", .string), ("tags", .list(.string)),
                                             ("location", .location), ("rating", .double)]
        return RecordTypeSchema(
            name: "Place", fields: fields.map { FieldSchema(name: $0.0, type: $0.1, options: opts($0.1)) },
            systemFieldOptions: rng.chance(0.5) ? [.recordName: .queryable, .creationDate: [.queryable, .sortable]] : [:])
    }

    mutating func filter() -> (String, [PredicateArgument]) {
        let k = kinds[rng.below(kinds.count)]
        let w = words[rng.below(words.count)]
        let n = Int64(rng.below(60))
        switch rng.below(16) {
        case 0: return ("kind == %@", [.value(.string(k))])
        case 1: return ("kind != %@", [.value(.string(k))])
        case 2: return ("population \(["<", "<=", ">", ">="][rng.below(4)]) %@", [.value(rng.chance(0.5) ? .int64(n) : .double(Double(n) + 0.5))])
        case 3: return ("population BETWEEN {%@, %@}", [.value(.int64(n)), .value(.int64(n + Int64(rng.below(20))))])
        case 4: return ("kind IN %@", [.value(.list([.string(k), .string(kinds[rng.below(kinds.count)])]))])
        case 5: return ("name BEGINSWITH %@", [.value(.string(String(w.prefix(1 + rng.below(3)))))])
        case 6: return ("tags CONTAINS %@", [.value(.string(w))])
        case 7: return ("ANY tags IN %@", [.value(.list([.string(w), .string(words[rng.below(words.count)])]))])
        case 8: return ("ALL %@ IN tags", [.value(.list([.string(w), .string(words[rng.below(words.count)])]))])
        case 9: return ("ANY tags BEGINSWITH %@", [.value(.string(String(w.prefix(2))))])
        case 10: return ("distanceToLocation:fromLocation:(location, %@) < %@", [.value(.location(location())), .value(.double([1, 10, 500, 3000][rng.below(4)]))])
        case 11: return ("self CONTAINS %@", [.value(.string(w + (rng.chance(0.5) ? " " + words[rng.below(words.count)] : "")))])
        case 12: return ("ALL tokenize(%@, 'Cdl') IN allTokens", [.value(.string(w + " " + words[rng.below(words.count)]))])
        case 13: return ("NOT (tags CONTAINS %@)", [.value(.string(w))])
        case 14: return ("rating >= %@", [.value(.double(Double(rng.below(11)) / 2))])
        default: return ("NOT (name BEGINSWITH %@)", [.value(.string(String(w.prefix(1))))])
        }
    }

    mutating func sorts() -> [SortDescriptor] {
        switch rng.below(7) {
        case 0, 1: return []
        case 2: return [.field("population", ascending: rng.chance(0.5))]
        case 3: return [.field(["name", "kind", "rating", "creationDate"][rng.below(4)], ascending: rng.chance(0.5))]
        case 4: return [.field("kind", ascending: true), .field("population", ascending: false)]
        default: return [.distance(field: "location", from: location())]
        }
    }
}

/// The oracle: every record, filtered by the evaluator, sorted by an independent comparison.
func oracle(_ q: Query, _ records: [Record], _ schema: RecordTypeSchema, zone: ZoneID?) -> [RecordID] {
    let m = RecordMatcher(predicate: q.predicate, schema: schema)
    var hits = records.filter { m.matches($0) && (zone == nil || $0.recordID.zoneID == zone) }
    func key(_ r: Record, _ s: SortDescriptor) -> FieldValue? {
        guard let v = r.queryValue(s.fieldName) else { return nil }
        if case .distance(_, let c) = s {
            guard case .location(let l) = v else { return nil }
            return .double(GeoMath.distanceKm(latitude1: c.latitude, longitude1: c.longitude, latitude2: l.latitude, longitude2: l.longitude))
        }
        return v.isList ? nil : v
    }
    hits = hits.filter { r in q.sortDescriptors.allSatisfy { key(r, $0) != nil } }
    hits.sort { a, b in
        for s in q.sortDescriptors {
            var c = FieldValue.compare(key(a, s)!, key(b, s)!)
            if case .field(_, false) = s { c = -c }
            if c != 0 { return c < 0 }
        }
        return a.recordID < b.recordID
    }
    return hits.map(\.recordID)
}

@Suite struct ExecutorModelTests {
    func pages(_ q: Query, _ snap: MemorySnapshot, size: Int, zone: ZoneID?) throws -> [RecordID] {
        var out: [RecordID] = []
        var after: OrderKey? = nil
        for _ in 0..<10_000 {
            let plan = QueryPlanner.plan(q, statistics: snap.statistics, limit: size)
            let page = try QueryExecutor.run(plan, on: snap, after: after, pageSize: size, zone: zone)
            out += page.records.map(\.recordID)
            guard let next = page.next else { return out }
            #expect(page.records.count == size, "a page with a cursor is full")
            after = next
        }
        Issue.record("paging did not end")
        return out
    }

    @Test func randomQueriesMatchTheOracleInEveryPageSize() throws {
        let seed = TestSeed.next()
        var data = RandomData(rng: SeededRandom(seed: seed))
        for size in [0, 1, 2, 5, 40, 150, 400] {
            let records = (0..<size).map { data.record($0) }
            let schema = data.schema()
            let snap = MemorySnapshot(schema: schema, records: records, nodeSize: 4)
            try snap.indexes.checkInvariants()
            for _ in 0..<(size < 50 ? 15 : 40) {
                var format: [String] = []
                var args: [PredicateArgument] = []
                for _ in 0..<(data.rng.below(3)) {
                    let (f, a) = data.filter()
                    format.append(f)
                    args += a
                }
                let checked = try QueryChecker.check(format.isEmpty ? "TRUEPREDICATE" : format.joined(separator: " AND "),
                                                     context: CheckContext(arguments: args))
                let q = Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: data.sorts())
                let zone: ZoneID? = data.rng.chance(0.3) ? data.zones[data.rng.below(2)] : nil
                let expected = oracle(q, records, schema, zone: zone).map(\.recordName)
                let oneShot = try pages(q, snap, size: 100_000, zone: zone).map(\.recordName)
                #expect(oneShot == expected, "missing \(Set(expected).subtracting(oneShot).sorted()), extra \(Set(oneShot).subtracting(expected).sorted()); seed \(seed), \(size) records: \(q)\n\(QueryPlanner.plan(q, statistics: snap.statistics, limit: 100_000).explain())")
                for pageSize in [1, 2, 7, 50] {
                    let paged = try pages(q, snap, size: pageSize, zone: zone).map(\.recordName)
                    #expect(paged == expected, "missing \(Set(expected).subtracting(paged).sorted()), extra \(Set(paged).subtracting(expected).sorted()); seed \(seed), page size \(pageSize): \(q)\n\(QueryPlanner.plan(q, statistics: snap.statistics, limit: pageSize).explain())")
                }
            }
        }
    }
}
