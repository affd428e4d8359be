// A made-up catalog of one million places, so plans can be tested without data.

import QueryChecker
import QueryPlanner
import RecordModel

/// Counts for `kind`: a few frequent kinds and a rare one.
let kindCounts: [String: Int] = ["cafe": 1_000, "city": 50_000, "village": 400_000, "castle": 40]

/// `population` uniform over 0..<1_000_000 (one record per value).
func populationCount(_ r: KeyRange) -> Int {
    func num(_ v: FieldValue) -> Double {
        switch v {
        case .int64(let i): Double(i)
        case .double(let d): d
        default: 0
        }
    }
    var lo = 0.0
    var hi = 1_000_000.0
    if let l = r.lower { lo = max(lo, num(l.value) + (l.inclusive ? 0 : 1)) }
    if let u = r.upper { hi = min(hi, num(u.value) + (u.inclusive ? 1 : 0)) }
    return Int(max(0, hi - lo))
}

let stats = StaticStatistics(
    rowCount: 1_000_000,
    fieldTypes: [
        "kind": .string, "population": .int64, "name": .string, "tags": .list(.string), "location": .location,
        "rating": .double,
    ],
    ordered: [
        "kind": { r in
            guard r.isPoint, case .string(let k)? = r.lower?.value else { return r == .all ? 1_000_000 : 0 }
            return kindCounts[k] ?? 0
        },
        "population": populationCount,
        "name": { r in r == .all ? 1_000_000 : 200 },  // any prefix: 200
        "tags": { r in r == .all ? 3_000_000 : (r.isPoint ? 20_000 : 60_000) },
    ],
    spatial: ["location": 25],
    text: { words, all in words.contains("rare") ? 30 : (all ? 2_000 : 80_000) })

let statsWithRecordName: StaticStatistics = {
    var s = stats
    s.ordered["recordName"] = { r in r == .all ? 1_000_000 : 1 }
    return s
}()

let louvre = Location(latitude: 48.8606, longitude: 2.3376)

func query(_ predicate: String, _ args: [PredicateArgument] = [], sort: [SortDescriptor] = []) throws -> Query {
    let checked = try QueryChecker.check(predicate, context: CheckContext(arguments: args))
    return Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: sort)
}
