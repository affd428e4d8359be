// PlaceGenerator: random CloudKit records, schemas, filters and sorts for model-based tests.

import RecordModel

/// Random places for model tests: kinds, numbers (Int64 and Double), words (with stop words and
/// CJK), string lists, locations at the poles, on both sides of ±180° and in a Paris cluster,
/// two zones, missing fields; plus random schemas, filters and sort descriptors.
///
/// ```swift
/// let seed = TestSeed.next()
/// var g = PlaceGenerator(rng: SeededRandom(seed: seed))
/// let records = (0..<500).map { g.record($0) }
/// let (format, arguments) = g.filter()
/// // … compare the engine with a full scan; on failure print "seed \(seed)" (replay with CIRRUS_SEED)
/// ```
public struct PlaceGenerator {
    /// The generator every draw comes from; the same seed gives the same places, schemas and queries.
    public var rng: SeededRandom

    /// A generator drawing from `rng`.
    public init(rng: SeededRandom) { self.rng = rng }

    /// The values of the `kind` field (`Café` and `cafe` differ).
    public let kinds = ["cafe", "bar", "museum", "park", "Café"]
    /// The words of `name` and `tags`, with stop words (`the`, `and`) and a CJK word.
    public let words = ["old", "bridge", "river", "coffee", "the", "stone", "東京", "tower", "and", "garden"]
    /// The zones records are put in: the default zone and `Paris`.
    public let zones = [ZoneID.default, ZoneID(zoneName: "Paris")]

    /// A location: near the north pole, either side of ±180°, in a Paris cluster, or anywhere (2 in 5).
    public mutating func location() -> Location {
        switch rng.below(5) {
        case 0:
            // Near the pole.
            return Location(latitude: 89.9 + Double(rng.below(100)) / 1000, longitude: Double(rng.below(360)) - 180)
        case 1:  // both sides of the antimeridian
            let lon = 179.9 + Double(rng.below(10)) / 100
            return Location(latitude: Double(rng.below(20)) / 10 - 1, longitude: rng.chance(0.5) ? lon : -lon)
        case 2:  // a cluster in Paris
            return Location(
                latitude: 48.85 + Double(rng.below(100)) / 1000, longitude: 2.29 + Double(rng.below(100)) / 1000)
        default:
            return Location(latitude: Double(rng.below(1800)) / 10 - 90, longitude: Double(rng.below(3600)) / 10 - 180)
        }
    }

    /// A `Place` record named `r<random>-<i>`, each field present with probability 0.7…0.9.
    public mutating func record(_ i: Int) -> Record {
        var f: RecordFields = [:]
        if rng.chance(0.9) { f["kind"] = .string(kinds[rng.below(kinds.count)]) }
        if rng.chance(0.85) {
            f["population"] = rng.chance(0.8) ? .int64(Int64(rng.below(60))) : .double(Double(rng.below(120)) / 2)
        }
        if rng.chance(0.8) {
            f["name"] = .string(
                (0..<(1 + rng.below(3))).map { _ in words[rng.below(words.count)] }.joined(separator: " "))
        }
        if rng.chance(0.8) { f["tags"] = .list((0..<rng.below(4)).map { _ in .string(words[rng.below(words.count)]) }) }
        if rng.chance(0.85) { f["location"] = .location(location()) }
        if rng.chance(0.7) { f["rating"] = .double(Double(rng.below(11)) / 2) }
        let zone = zones[rng.below(zones.count)]
        return Record(
            recordType: "Place", recordID: RecordID(recordName: "r\(rng.below(1000))-\(i)", zoneID: zone), fields: f,
            creationDate: Timestamp(millisecondsSince1970: Int64(rng.below(50))))
    }

    /// A `Place` schema with the fields of ``record(_:)``; each field gets its automatic options (3 in 4)
    /// or none (a non-list string: maybe SEARCHABLE only); half the time recordName and creationDate are indexed.
    public mutating func schema() -> RecordTypeSchema {
        func opts(_ t: FieldType) -> IndexOptions {
            rng.chance(0.75)
                ? IndexOptions.automatic(for: t)
                : (t.scalar == .string && !t.isList && rng.chance(0.5) ? [.searchable] : [])
        }
        let fields: [(String, FieldType)] = [
            ("kind", .string), ("population", .int64), ("name", .string), ("tags", .list(.string)),
            ("location", .location), ("rating", .double),
        ]
        return RecordTypeSchema(
            name: "Place", fields: fields.map { FieldSchema(name: $0.0, type: $0.1, options: opts($0.1)) },
            systemFieldOptions: rng.chance(0.5)
                ? [.recordName: .queryable, .creationDate: [.queryable, .sortable]] : [:])
    }

    /// A predicate format string over one field and its `%@` arguments, one of 16 shapes.
    public mutating func filter() -> (String, [PredicateArgument]) {
        let k = kinds[rng.below(kinds.count)]
        let w = words[rng.below(words.count)]
        let n = Int64(rng.below(60))
        switch rng.below(16) {
        case 0: return ("kind == %@", [.value(.string(k))])
        case 1: return ("kind != %@", [.value(.string(k))])
        case 2:  // a range on population, bounded by an Int64 or a Double
            return (
                "population \(["<", "<=", ">", ">="][rng.below(4)]) %@",
                [.value(rng.chance(0.5) ? .int64(n) : .double(Double(n) + 0.5))]
            )
        case 3: return ("population BETWEEN {%@, %@}", [.value(.int64(n)), .value(.int64(n + Int64(rng.below(20))))])
        case 4: return ("kind IN %@", [.value(.list([.string(k), .string(kinds[rng.below(kinds.count)])]))])
        case 5: return ("name BEGINSWITH %@", [.value(.string(String(w.prefix(1 + rng.below(3)))))])
        case 6: return ("tags CONTAINS %@", [.value(.string(w))])
        case 7: return ("ANY tags IN %@", [.value(.list([.string(w), .string(words[rng.below(words.count)])]))])
        case 8: return ("ALL %@ IN tags", [.value(.list([.string(w), .string(words[rng.below(words.count)])]))])
        case 9: return ("ANY tags BEGINSWITH %@", [.value(.string(String(w.prefix(2))))])
        case 10:
            return (
                "distanceToLocation:fromLocation:(location, %@) < %@",
                [.value(.location(location())), .value(.double([1, 10, 500, 3000][rng.below(4)]))]
            )
        case 11:
            return (
                "self CONTAINS %@", [.value(.string(w + (rng.chance(0.5) ? " " + words[rng.below(words.count)] : "")))]
            )
        case 12:
            return ("ALL tokenize(%@, 'Cdl') IN allTokens", [.value(.string(w + " " + words[rng.below(words.count)]))])
        case 13: return ("NOT (tags CONTAINS %@)", [.value(.string(w))])
        case 14: return ("rating >= %@", [.value(.double(Double(rng.below(11)) / 2))])
        default: return ("NOT (name BEGINSWITH %@)", [.value(.string(String(w.prefix(1))))])
        }
    }

    /// Sort descriptors: none (2 in 7), one or two fields, or distance from a random location.
    public mutating func sorts() -> [SortDescriptor] {
        switch rng.below(7) {
        case 0, 1: return []
        case 2: return [.field("population", ascending: rng.chance(0.5))]
        case 3: return [.field(["name", "kind", "rating", "creationDate"][rng.below(4)], ascending: rng.chance(0.5))]
        case 4: return [.field("kind", ascending: true), .field("population", ascending: false)]
        default: return [.distance(field: "location", from: location())]
        }
    }
}
