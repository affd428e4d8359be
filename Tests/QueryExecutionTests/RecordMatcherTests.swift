import Indexes
import QueryChecker
import RecordModel
import Testing

@testable import QueryExecution

let paris = Location(latitude: 48.8566, longitude: 2.3522)
let tokyo = Location(latitude: 35.6762, longitude: 139.6503)

func place(_ name: String, _ fields: RecordFields) -> Record {
    Record(
        recordType: "Place", recordID: RecordID(recordName: name), fields: fields,
        creationDate: Timestamp(millisecondsSince1970: Int64(name.utf8.count)))
}

let places: [Record] = [
    place(
        "flore",
        [
            "name": "Café de Flore", "kind": "cafe", "population": 100, "rating": 4.5,
            "tags": ["coffee", "paris"], "location": .location(paris), "data": .bytes([1, 2, 3]),
        ]),
    place(
        "tower",
        [
            "name": "Tōkyō Tower 東京タワー", "kind": "tower", "population": 3000, "rating": 4,
            "tags": [], "location": .location(tokyo),
        ]),
    place(
        "corner",
        [
            "kind": "cafe", "location": .location(Location(latitude: 48.86, longitude: 2.40)),
            "owner": .reference(Reference(recordID: RecordID(recordName: "flore"))),
        ]),
    place(
        "mixed",
        ["name": "The old bridge and the river", "kind": "bridge", "population": 2.5, "tags": ["river", "stone"]]),
]

@Suite struct RecordMatcherTests {
    func names(_ predicate: String, _ args: [PredicateArgument] = [], searchable: [String]? = nil) throws -> [String] {
        let checked = try QueryChecker.check(predicate, context: CheckContext(arguments: args))
        let m = RecordMatcher(predicate: checked.predicate, searchableFields: searchable)
        return places.filter(m.matches).map(\.recordID.recordName)
    }

    @Test(arguments: [
        ("TRUEPREDICATE", ["flore", "tower", "corner", "mixed"]),
        ("FALSEPREDICATE", []),
        ("kind == 'cafe'", ["flore", "corner"]),
        ("kind != 'cafe'", ["tower", "mixed"]),
        ("population != 100", ["tower", "mixed"]),  // corner has no population: never matches
        ("population > 2", ["flore", "tower", "mixed"]),
        ("population < 3", ["mixed"]),
        ("population >= 100 AND population <= 3000", ["flore", "tower"]),
        ("population BETWEEN {2.5, 100}", ["flore", "mixed"]),
        ("rating == 4", ["tower"]),
        ("kind IN {'tower', 'bridge'}", ["tower", "mixed"]),
        ("NOT (kind IN {'tower', 'bridge'})", ["flore", "corner"]),
        ("tags CONTAINS 'river'", ["mixed"]),
        ("NOT (tags CONTAINS 'river')", ["flore", "tower"]),
        ("ANY tags IN {'paris', 'stone'}", ["flore", "mixed"]),
        ("NOT (ANY tags IN {'paris', 'stone'})", ["tower"]),
        ("ALL {'river', 'stone'} IN tags", ["mixed"]),
        ("ALL {'river', 'paris'} IN tags", []),
        ("NOT (ALL {'river', 'paris'} IN tags)", ["flore", "tower", "mixed"]),
        ("name BEGINSWITH 'Caf'", ["flore"]),
        ("name BEGINSWITH 'caf'", []),  // case-sensitive
        ("NOT (name BEGINSWITH 'Caf')", ["tower", "mixed"]),
        ("ANY tags BEGINSWITH 'co'", ["flore"]),
        ("NOT (ANY tags BEGINSWITH 'co')", ["tower", "mixed"]),
        ("kind < 'c'", ["mixed"]),  // strings by Unicode scalars
        ("kind > 5", []),  // across families: no match
        ("self CONTAINS 'cafe'", ["flore", "corner"]),  // diacritic-insensitive; every string field without a schema
        ("self CONTAINS 'CAFÉ river'", ["flore", "corner", "mixed"]),
        ("ALL tokenize('old river', 'Cdl') IN allTokens", ["mixed"]),
        ("ALL tokenize('old paris', 'Cdl') IN allTokens", []),
        ("self CONTAINS 'the and'", []),  // stop words only
        ("self CONTAINS '東京'", ["tower"]),  // unspaced scripts: bigrams
        ("self CONTAINS '京タ'", ["tower"]),
        ("self CONTAINS '東タ'", []),
        ("self CONTAINS 'tokyo'", ["tower"]),
    ])
    func evaluates(predicate: String, expected: [String]) throws {
        #expect(try names(predicate) == expected)
    }

    @Test func dataAndReferences() throws {
        // The checker refuses BEGINSWITH with BYTES (CloudKit's BEGINS_WITH is for strings); a filter
        // list built directly can still hold one, and the matcher answers it by byte prefix.
        #expect(throws: PredicateError.self) { try names("data BEGINSWITH %@", [.value(.bytes([1, 2]))]) }
        let prefix = RecordMatcher(
            predicate: .filters([QueryFilter(fieldName: "data", comparator: .beginsWith, fieldValue: .bytes([1, 2]))]),
            searchableFields: nil)
        #expect(places.filter(prefix.matches).map(\.recordID.recordName) == ["flore"])
        #expect(try names("data == %@", [.value(.bytes([1, 2]))]) == [])
        let flore = PredicateArgument.value(
            .reference(Reference(recordID: RecordID(recordName: "flore"), action: .deleteSelf)))
        #expect(try names("owner == %@", [flore]) == ["corner"])
        #expect(try names("recordName == %@", [flore]) == ["flore"])
        #expect(try names("recordName == 'tower'") == ["tower"])
        #expect(try names("recordName IN {'tower', 'mixed'}") == ["tower", "mixed"])
        #expect(try names("creationDate > %@", [.value(.date(Timestamp(millisecondsSince1970: 5)))]) == ["corner"])
    }

    @Test func nearIncludesItsBoundaryAndCrossesTheAntimeridian() throws {
        let here = PredicateArgument.value(.location(paris))
        #expect(try names("distanceToLocation:fromLocation:(location, %@) < 5", [here]) == ["flore", "corner"])
        #expect(try names("distanceToLocation:fromLocation:(location, %@) < 1", [here]) == ["flore"])
        let d = GeoMathDistance.km(paris, Location(latitude: 48.86, longitude: 2.40))
        let exact = QueryPredicate.filters([
            QueryFilter(fieldName: "location", comparator: .near, fieldValue: .location(paris), distance: d * 1000)
        ])
        #expect(
            places.filter(RecordMatcher(predicate: exact, searchableFields: nil).matches).map(\.recordID.recordName)
                == ["flore", "corner"])
        let east = Record(
            recordType: "P", recordID: RecordID(recordName: "e"),
            fields: ["location": .location(Location(latitude: 0, longitude: 179.99))])
        let across = try QueryChecker.check(
            "distanceToLocation:fromLocation:(location, %@) < 3",
            context: CheckContext(arguments: [.value(.location(Location(latitude: 0, longitude: -179.99)))]))
        #expect(RecordMatcher(predicate: across.predicate, searchableFields: nil).matches(east))
    }

    @Test func onlySearchableFieldsAreSearched() throws {
        #expect(try names("self CONTAINS 'river'", searchable: ["name"]) == ["mixed"])
        #expect(try names("self CONTAINS 'stone'", searchable: ["name"]) == [])
        #expect(try names("self CONTAINS 'stone'", searchable: ["tags"]) == ["mixed"])
    }
}

enum GeoMathDistance {
    static func km(_ a: Location, _ b: Location) -> Double {
        Indexes.GeoMath.distanceKm(
            latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }
}
