// Places: the deterministic data set of the cross-engine suites — one plain `Place` per record,
// loaded into both Cirrus and SQLite, so both engines hold exactly the same values.
//
// 1 200 cities: 1 000 with centres uniform on the sphere between 60°S and 70°N, plus cities at
// both poles and on both sides of the antimeridian; city sizes Zipf(0.7); points Gaussian
// (σ = 40 km) around the city, 10% scattered uniformly on the sphere. Kinds Zipf(1.0) over 24;
// population heavy-tailed (Pareto α ≈ 1.1, many ties among small towns); country: the city's;
// 0–4 tags Zipf over 60; name two Zipf words; description 8–16 words Zipf(1.0) over 50 000. All
// words are lower-case ASCII ending in "x", so Cirrus's tokenizer and FTS5's unicode61 agree
// on them and none is a stop word. The same seed gives the same data on every machine.

import Foundation
import RecordModel

struct Place {
    var recordName: String
    var name: String
    var kind: String
    var population: Int64
    var country: String
    var latitude: Double
    var longitude: Double
    var tags: [String]
    var description: String

    var record: Record {
        Record(
            recordType: "Place", recordID: RecordID(recordName: recordName),
            fields: [
                "name": .string(name), "kind": .string(kind), "population": .int64(population),
                "country": .string(country), "location": .location(Location(latitude: latitude, longitude: longitude)),
                "tags": .list(tags.map { .string($0) }), "description": .string(description),
            ])
    }
}

struct PlaceSet {
    static let kinds = [
        "cafe", "restaurant", "park", "shop", "school", "museum", "bar", "hotel", "church", "library",
        "pharmacy", "bakery", "bank", "cinema", "theatre", "stadium", "zoo", "airport", "station",
        "harbour", "lighthouse", "castle", "observatory", "glacier",
    ]
    static let tags = (0..<60).map { "tag" + DataSet.word($0 * 7 + 3) }

    /// The places, kept as columns of small numbers (about 68 bytes a place: 10M places in
    /// 0.69 GB, where `[Place]` took about 2 GB per million) and built as `Place`s when read.
    var places = PlaceColumns()
    var vocabulary: [String] = []
    var cityCentres: [(Double, Double)] = []
    /// Document frequency (records whose name or description holds the word) per vocabulary index.
    var documentFrequency: [Int] = []

    static func recordName(_ i: Int) -> String {
        let s = String(i)
        return "p" + String(repeating: "0", count: max(0, 7 - s.count)) + s
    }

    static func country(_ city: Int) -> String {
        let a = UInt8(65 + city % 26), b = UInt8(65 + (city / 26) % 26)
        return String(decoding: [a, b], as: UTF8.self)
    }

    init(size: Int, seed: UInt64 = 42) {
        var generator = PlaceGenerator(seed: seed)
        vocabulary = generator.vocabulary
        cityCentres = generator.cities
        places = PlaceColumns(vocabulary: generator.vocabulary, cities: generator.cities, capacity: size)
        var df = [Int](repeating: 0, count: vocabulary.count)
        var seen = Set<Int>()
        for _ in 0..<size {
            let parts = generator.nextParts()
            seen.removeAll(keepingCapacity: true)
            for w in parts.words where seen.insert(w).inserted { df[w] += 1 }
            places.append(parts)
        }
        documentFrequency = df
    }

    /// Words whose document frequency lies in `range`, in vocabulary order.
    func words(withFrequencyIn range: ClosedRange<Int>) -> [String] {
        vocabulary.indices.filter { range.contains(documentFrequency[$0]) }.map { vocabulary[$0] }
    }
}

/// The places of `PlaceSet`, one at a time and in the same order: `PlaceSet(size: n, seed: s)`
/// holds exactly the first `n` places a `PlaceGenerator(seed: s)` returns. Memory is the
/// vocabulary and the cities (a few MB) whatever the count — `qbench generate` streams any size.
struct PlaceGenerator {
    let vocabulary: [String]
    let cities: [(Double, Double)]
    private var rng: Rng
    private var index = 0
    private let cityZipf: DataSet.Zipf
    private let wordZipf: DataSet.Zipf
    private let kindZipf = DataSet.Zipf(n: PlaceSet.kinds.count, s: 1.0)
    private let tagZipf = DataSet.Zipf(n: PlaceSet.tags.count, s: 0.8)

    init(seed: UInt64 = 42) {
        var rng = Rng(state: seed)
        vocabulary = (0..<50_000).map(DataSet.word)
        var cities: [(Double, Double)] = (0..<1000).map { _ in
            let s60 = sin(60 * Double.pi / 180), s70 = sin(70 * Double.pi / 180)
            let lat = asin(rng.unit() * (s70 + s60) - s60) * 180 / .pi
            return (lat, rng.unit() * 360 - 180)
        }
        // Poles and the antimeridian, spread over the city-size ranking so some are large.
        let special: [(Double, Double)] = [
            (89.95, 0), (-89.9, 45), (-17.7, 179.95), (-17.8, -179.9), (65.5, 179.99),
            (64.9, -179.95), (51.9, 179.6), (-43.9, -176.5), (88.5, -120), (-85, 160),
        ]
        for (i, c) in special.enumerated() { cities.insert(c, at: min(cities.count, i * 7 + 3)) }
        while cities.count < 1200 {
            cities.append((rng.unit() * 120 - 55, rng.unit() * 360 - 180))
        }
        self.cities = cities
        self.rng = rng
        cityZipf = DataSet.Zipf(n: cities.count, s: 0.7)
        wordZipf = DataSet.Zipf(n: vocabulary.count, s: 1.0)
    }

    /// The next place and the vocabulary indices of its name and description words (with repeats).
    mutating func next() -> (place: Place, words: [Int]) {
        let parts = nextParts()
        return (parts.place(vocabulary: vocabulary), parts.words)
    }

    /// The next place as the indices and numbers it is made of (the same draws as `next()`).
    mutating func nextParts() -> PlaceParts {
        let city = cityZipf.sample(&rng)
        var lat: Double, lon: Double
        if rng.unit() < 0.1 {
            lat = asin(rng.unit() * 2 - 1) * 180 / .pi
            lon = rng.unit() * 360 - 180
        } else {
            let (clat, clon) = cities[city]
            lat = clat + rng.gaussian() * 40 / 111.2
            if lat > 90 { lat = 180 - lat }
            if lat < -90 { lat = -180 - lat }
            lon = clon + rng.gaussian() * 40 / (111.2 * max(0.02, cos(clat * .pi / 180)))
            lon = lon.truncatingRemainder(dividingBy: 360)
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        }
        let population = min(40_000_000, Int64(50 / pow(max(1e-12, rng.unit()), 1 / 1.1)))
        let w1 = wordZipf.sample(&rng), w2 = wordZipf.sample(&rng)
        let nDesc = 8 + rng.below(9)
        var words = [w1, w2]
        words.reserveCapacity(2 + nDesc)
        for _ in 0..<nDesc { words.append(wordZipf.sample(&rng)) }
        var tags: [Int] = []
        for _ in 0..<rng.below(5) {
            let t = tagZipf.sample(&rng)
            if !tags.contains(t) { tags.append(t) }
        }
        let kind = kindZipf.sample(&rng)
        defer { index += 1 }
        return PlaceParts(
            index: index, city: city, latitude: max(-90, min(90, lat)), longitude: max(-180, min(180, lon)),
            population: population, kind: kind, words: words, tags: tags)
    }
}

/// One generated place as numbers: its position in the set, city, coordinates, population, kind
/// and the vocabulary indices of its words (name: the first two; description: the rest) and tags.
struct PlaceParts {
    var index: Int
    var city: Int
    var latitude: Double
    var longitude: Double
    var population: Int64
    var kind: Int
    var words: [Int]
    var tags: [Int]

    func place(vocabulary: [String]) -> Place {
        Place(
            index: index, country: PlaceSet.country(city), latitude: latitude, longitude: longitude,
            population: population, kind: kind, words: words, tags: tags, vocabulary: vocabulary)
    }
}

extension Place {
    /// Place `index` from its numbers: `words` are vocabulary indices, the name's two then the
    /// description's; `kind` and `tags` index `PlaceSet.kinds` and `PlaceSet.tags`.
    init<W: Collection, T: Sequence>(
        index: Int, country: String, latitude: Double, longitude: Double, population: Int64, kind: Int,
        words: W, tags: T, vocabulary: [String]
    ) where W.Element: BinaryInteger, T.Element: BinaryInteger {
        var description = ""
        for w in words.dropFirst(2) {
            if !description.isEmpty { description += " " }
            description += vocabulary[Int(w)]
        }
        let name = words.prefix(2).map { vocabulary[Int($0)] }
        self.init(
            recordName: PlaceSet.recordName(index), name: name[0] + " " + name[1], kind: PlaceSet.kinds[kind],
            population: population, country: country, latitude: latitude, longitude: longitude,
            tags: tags.map { PlaceSet.tags[Int($0)] }, description: description)
    }
}

/// Places as columns: what `PlaceParts` holds, in flat arrays of the smallest integers that fit
/// (50 000 words fit 16 bits, 24 kinds and 60 tags 8 bits). Reading one builds its `Place`.
struct PlaceColumns: RandomAccessCollection {
    private(set) var vocabulary: [String] = []
    private var countries: [String] = []
    private var latitudes: [Double] = []
    private var longitudes: [Double] = []
    private var populations: [Int64] = []
    private var kinds: [UInt8] = []
    private var cities: [UInt16] = []
    /// Every place's words, one after another; place i's are `wordStarts[i]..<wordStarts[i + 1]`.
    private var words: [UInt16] = []
    private var wordStarts: [UInt32] = [0]
    private var tags: [UInt8] = []
    private var tagStarts: [UInt32] = [0]

    init() {}

    init(vocabulary: [String], cities: [(Double, Double)], capacity: Int) {
        precondition(vocabulary.count <= 1 << 16 && cities.count <= 1 << 16)
        self.vocabulary = vocabulary
        countries = cities.indices.map(PlaceSet.country)
        latitudes.reserveCapacity(capacity)
        longitudes.reserveCapacity(capacity)
        populations.reserveCapacity(capacity)
        kinds.reserveCapacity(capacity)
        self.cities.reserveCapacity(capacity)
        wordStarts.reserveCapacity(capacity + 1)
        tagStarts.reserveCapacity(capacity + 1)
    }

    mutating func append(_ p: PlaceParts) {
        precondition(p.index == count, "places are appended in order")
        latitudes.append(p.latitude)
        longitudes.append(p.longitude)
        populations.append(p.population)
        kinds.append(UInt8(p.kind))
        cities.append(UInt16(p.city))
        for w in p.words { words.append(UInt16(w)) }
        wordStarts.append(UInt32(words.count))
        for t in p.tags { tags.append(UInt8(t)) }
        tagStarts.append(UInt32(tags.count))
    }

    var startIndex: Int { 0 }
    var endIndex: Int { latitudes.count }

    /// Place i's kind, without building the place.
    func kind(at i: Int) -> String { PlaceSet.kinds[Int(kinds[i])] }

    subscript(i: Int) -> Place {
        Place(
            index: i, country: countries[Int(cities[i])], latitude: latitudes[i], longitude: longitudes[i],
            population: populations[i], kind: Int(kinds[i]), words: words[Int(wordStarts[i])..<Int(wordStarts[i + 1])],
            tags: tags[Int(tagStarts[i])..<Int(tagStarts[i + 1])], vocabulary: vocabulary)
    }
}
