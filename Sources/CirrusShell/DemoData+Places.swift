// DemoData+Places: the `Place` records of the demo — famous places with fixed names (the README
// tour uses them) and generated places clustered around real cities.
//
// Distributions: cities are picked with weight ~ sqrt(population); a place lies a normal offset
// from its city (σ ≈ 8 km, longitude scaled by 1/cos(latitude), wrapped across ±180°, clamped at
// the poles); population is Pareto-like (most places small, a few huge); description words are
// Zipf-distributed over a fixed vocabulary. Everything comes from `DemoRandom`, so a seed gives
// the same records on every machine.

import RecordModel

extension DemoData {
    /// Real cities: name, country, latitude, longitude, population (thousands).
    static let cities: [(name: String, country: String, lat: Double, lon: Double, k: Double)] = [
        ("Paris", "FR", 48.8566, 2.3522, 11_000), ("London", "GB", 51.5074, -0.1278, 9_500),
        ("New York", "US", 40.7128, -74.0060, 19_000), ("Tokyo", "JP", 35.6762, 139.6503, 37_000),
        ("Bangkok", "TH", 13.7563, 100.5018, 10_700), ("Beijing", "CN", 39.9042, 116.4074, 21_000),
        ("Seoul", "KR", 37.5665, 126.9780, 9_900), ("Sydney", "AU", -33.8688, 151.2093, 5_300),
        ("São Paulo", "BR", -23.5505, -46.6333, 22_000), ("Mexico City", "MX", 19.4326, -99.1332, 21_800),
        ("Cairo", "EG", 30.0444, 31.2357, 21_000), ("Lagos", "NG", 6.5244, 3.3792, 15_000),
        ("Mumbai", "IN", 19.0760, 72.8777, 20_700), ("Agra", "IN", 27.1767, 78.0081, 1_600),
        ("Rome", "IT", 41.9028, 12.4964, 4_300), ("Madrid", "ES", 40.4168, -3.7038, 6_700),
        ("Berlin", "DE", 52.5200, 13.4050, 3_600), ("Amsterdam", "NL", 52.3676, 4.9041, 1_100),
        ("Moscow", "RU", 55.7558, 37.6173, 12_600), ("Istanbul", "TR", 41.0082, 28.9784, 15_600),
        ("San Francisco", "US", 37.7749, -122.4194, 3_300), ("Cupertino", "US", 37.3230, -122.0322, 60),
        ("Los Angeles", "US", 34.0522, -118.2437, 12_500), ("Chicago", "US", 41.8781, -87.6298, 8_900),
        ("Toronto", "CA", 43.6532, -79.3832, 6_200), ("Buenos Aires", "AR", -34.6037, -58.3816, 15_300),
        ("Lima", "PE", -12.0464, -77.0428, 10_700), ("Cape Town", "ZA", -33.9249, 18.4241, 4_700),
        ("Nairobi", "KE", -1.2921, 36.8219, 4_900), ("Reykjavík", "IS", 64.1466, -21.9426, 230),
        ("Singapore", "SG", 1.3521, 103.8198, 5_900), ("Jakarta", "ID", -6.2088, 106.8456, 10_600),
        ("Kyoto", "JP", 35.0116, 135.7681, 1_500), ("Shanghai", "CN", 31.2304, 121.4737, 27_000),
        ("Hong Kong", "HK", 22.3193, 114.1694, 7_500), ("Chiang Mai", "TH", 18.7883, 98.9853, 1_200),
        ("Auckland", "NZ", -36.8485, 174.7633, 1_700), ("Hobart", "AU", -42.8821, 147.3272, 250),
        // Near the poles.
        ("Longyearbyen", "SJ", 78.2232, 15.6267, 2.4), ("Ny-Ålesund", "SJ", 78.9250, 11.9300, 0.04),
        ("Alert", "CA", 82.5018, -62.3481, 0.06), ("Utqiaġvik", "US", 71.2906, -156.7886, 4.9),
        ("McMurdo Station", "AQ", -77.8419, 166.6863, 1), ("Amundsen–Scott Station", "AQ", -89.9978, 139.2729, 0.15),
        ("Ushuaia", "AR", -54.8019, -68.3030, 57),
        // On both sides of the antimeridian.
        ("Suva", "FJ", -18.1416, 178.4419, 180), ("Taveuni", "FJ", -16.8500, -179.9500, 9),
        ("Nukuʻalofa", "TO", -21.1394, -175.2049, 24), ("Apia", "WS", -13.8333, -171.7500, 37),
        ("Anadyr", "RU", 64.7337, 177.4968, 15), ("Petropavlovsk-Kamchatsky", "RU", 53.0452, 158.6483, 180),
        ("Adak", "US", 51.8800, -176.6581, 0.3),
    ]

    /// Famous places with fixed record names (the README tour's landmarks), parsed from
    /// `famousTable`.
    static let famous: [FamousPlace] = famousTable.split(separator: "\n").compactMap(famousPlace)

    /// The famous places, one a line: record name | name | kind | country | latitude longitude |
    /// visitors a year | tags | description.
    static let famousTable = """
        eiffel-tower | Eiffel Tower | monument | FR | 48.8584 2.2945 | 7000000 | landmark view iron | \
        wrought iron lattice tower on the Champ de Mars with a view over the river
        louvre | Louvre | museum | FR | 48.8606 2.3376 | 8900000 | museum art landmark | \
        the largest art museum in the world home of the Mona Lisa
        musee-orsay | Musée d'Orsay | museum | FR | 48.8600 2.3266 | 3200000 | museum art | \
        impressionist paintings in a former railway station by the river
        notre-dame | Notre-Dame de Paris | church | FR | 48.8530 2.3499 | 12000000 | landmark church gothic | \
        gothic cathedral on the Île de la Cité
        arc-de-triomphe | Arc de Triomphe | monument | FR | 48.8738 2.2950 | 1700000 | landmark view | \
        triumphal arch at the top of the Champs-Élysées
        sacre-coeur | Sacré-Cœur | church | FR | 48.8867 2.3431 | 10000000 | church view | \
        white basilica on the hill of Montmartre with a view over the city
        cafe-de-flore | Café de Flore | cafe | FR | 48.8541 2.3326 | 400000 | cafe historic | \
        historic coffee house of Saint-Germain where writers met
        colosseum | Colosseum | monument | IT | 41.8902 12.4922 | 7600000 | landmark ancient | \
        ancient amphitheatre in the centre of the city
        big-ben | Big Ben | monument | GB | 51.5007 -0.1246 | 1000000 | landmark clock | \
        the great bell of the clock tower at the Palace of Westminster
        statue-of-liberty | Statue of Liberty | monument | US | 40.6892 -74.0445 | 4300000 | landmark view | \
        copper statue on Liberty Island in New York Harbor
        golden-gate | Golden Gate Bridge | monument | US | 37.8199 -122.4783 | 10000000 | landmark bridge view | \
        suspension bridge over the strait at the entrance to the bay
        sydney-opera | Sydney Opera House | theatre | AU | -33.8568 151.2153 | 10900000 | landmark music | \
        performing arts centre with white sail roofs on the harbour
        taj-mahal | Taj Mahal | monument | IN | 27.1751 78.0421 | 7000000 | landmark garden | \
        white marble mausoleum on the bank of the river with a garden
        tokyo-tower | 東京タワー | monument | JP | 35.6586 139.7454 | 3000000 | landmark view | \
        communications tower with an observation deck
        senso-ji | 浅草寺 | temple | JP | 35.7148 139.7967 | 30000000 | temple historic | \
        ancient buddhist temple in Asakusa
        wat-phra-kaew | วัดพระแก้ว | temple | TH | 13.7516 100.4927 | 8000000 | temple landmark | \
        temple of the emerald buddha in the grand palace
        forbidden-city | 故宫 | museum | CN | 39.9163 116.3972 | 17000000 | museum palace historic | \
        imperial palace of the ming and qing dynasties
        gyeongbokgung | 경복궁 | palace | KR | 37.5796 126.9770 | 5000000 | palace historic | \
        main royal palace of the joseon dynasty
        south-pole-marker | Ceremonial South Pole | monument | AQ | -89.9999 0 | 200 | pole ice | \
        a striped pole with a mirrored sphere among the flags
        svalbard-seed-vault | Svalbard Global Seed Vault | library | SJ | 78.2357 15.4912 | 1000 | ice science | \
        seed bank inside a mountain on the island
        """

    /// A famous place: its record name and fields.
    typealias FamousPlace = (
        id: String, name: String, kind: String, country: String, lat: Double, lon: Double, pop: Int64,
        tags: [String], text: String
    )

    /// The place on one line of `famousTable`; nil when the line does not have its eight columns.
    static func famousPlace(_ line: Substring) -> FamousPlace? {
        let c = line.split(separator: " | ").map(String.init)
        let at = c.count == 8 ? c[4].split(separator: " ").compactMap { Double($0) } : []
        guard at.count == 2, let pop = Int64(c[5]) else { return nil }
        return (c[0], c[1], c[2], c[3], at[0], at[1], pop, c[6].split(separator: " ").map(String.init), c[7])
    }

    static let kinds = [
        "cafe", "restaurant", "museum", "park", "monument", "hotel", "bar", "shop", "school", "station",
        "church", "library", "theatre", "market", "bakery", "gallery",
    ]
    static let adjectives = [
        "Old", "Blue", "Golden", "Little", "Grand", "Silver", "Green", "Royal", "Hidden", "North",
        "South", "Red", "Quiet", "Sunny", "Stone", "Café", "Crystal", "Maple", "Harbour", "River",
    ]
    static let nouns = [
        "Heron", "Bridge", "Garden", "Lantern", "Harbour", "Oak", "Fox", "Mill", "Tower", "Market",
        "Corner", "Orchard", "Anchor", "Lighthouse", "Square", "Gate", "Meadow", "Crown", "Bell", "Well",
    ]
    static let cjkNames = ["東京", "花屋", "喫茶店", "公園", "天坛", "书店", "茶馆", "ร้านกาแฟ", "ตลาดน้ำ", "สวนสาธารณะ", "카페", "시장"]
    static let tagWords = [
        "wifi", "outdoor", "family", "historic", "view", "quiet", "cheap", "vegan", "late", "music",
        "garden", "art", "books", "coffee", "river", "kids", "dogs", "parking",
    ]
    /// The description vocabulary, most frequent first (the generator draws Zipf(1.1) ranks).
    static let vocabulary: [String] = """
        the a of and in with by old small river view coffee garden near tower street open quiet \
        bridge local market square park light music good fresh stone water friendly evening morning \
        family history church museum art gallery bread wine tea books sunset harbour boats island \
        north south east west hill forest lake snow ice mountain station train bus corner little \
        golden blue green red white black famous hidden busy narrow wide ancient modern royal \
        painted wooden glass iron brick garden lantern festival night breakfast lunch dinner cake \
        cheese fish noodles rice soup dumplings tacos pizza chocolate pastry espresso \
        aurora penguins glacier volcano reef lagoon coral whales fjord tundra meridian dateline
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)

    /// Cumulative Zipf weights over `vocabulary`.
    static let zipfCumulative: [Double] = {
        var c: [Double] = []
        var sum = 0.0
        for k in 1...vocabulary.count {
            sum += 1 / pow11(Double(k))
            c.append(sum)
        }
        return c.map { $0 / sum }
    }()

    static let cityCumulative: [Double] = {
        var c: [Double] = []
        var sum = 0.0
        for city in cities {
            sum += city.k.squareRoot()
            c.append(sum)
        }
        return c.map { $0 / sum }
    }()

    /// The famous places.
    public func famousPlaces() -> [Record] {
        Self.famous.map { p in
            Record(
                recordType: "Place", recordID: RecordID(recordName: p.id),
                fields: [
                    "name": .string(p.name), "kind": .string(p.kind), "country": .string(p.country),
                    "location": .location(Location(latitude: p.lat, longitude: p.lon)), "population": .int64(p.pop),
                    "tags": .list(p.tags.map { .string($0) }), "description": .string(p.text),
                ])
        }
    }

    /// The next generated place, `place-000001` …
    public mutating func place(_ i: Int) -> Record {
        let city = Self.cities[pick(Self.cityCumulative)]
        let lat = max(-89.9999, min(89.9999, city.lat + rng.normal() * 0.072))
        let scale = max(0.02, cosDegrees(lat))
        var lon = city.lon + rng.normal() * 0.072 / scale
        if lon > 180 { lon -= 360 }
        if lon < -180 { lon += 360 }
        let kind = Self.kinds[rng.below(Self.kinds.count)]
        let name: String
        if rng.below(40) == 0 {
            name = Self.cjkNames[rng.below(Self.cjkNames.count)] + " " + String(1 + rng.below(99))
        } else {
            name =
                Self.adjectives[rng.below(Self.adjectives.count)] + " " + Self.nouns[rng.below(Self.nouns.count)] + " "
                + kind.prefix(1).uppercased() + kind.dropFirst()
        }
        // Pareto (alpha 1.1): most places see tens of visitors, a few millions.
        let u = max(rng.unit(), 1e-9)
        let population = Int64(min(50_000_000, 20 / powNeg(u)))
        var tags: [FieldValue] = []
        for _ in 0..<rng.below(4) {
            let t = FieldValue.string(Self.tagWords[rng.below(Self.tagWords.count)])
            if !tags.contains(t) { tags.append(t) }
        }
        var words: [String] = []
        for _ in 0..<(6 + rng.below(12)) { words.append(Self.vocabulary[pick(Self.zipfCumulative)]) }
        var f: RecordFields = [
            "name": .string(name), "kind": .string(kind), "country": .string(city.country),
            "location": .location(Location(latitude: round6(lat), longitude: round6(lon))),
            "population": .int64(population), "description": .string(words.joined(separator: " ")),
        ]
        if !tags.isEmpty { f["tags"] = .list(tags) }
        return Record(recordType: "Place", recordID: RecordID(recordName: "place-" + pad6(i)), fields: f)
    }

    mutating func pick(_ cumulative: [Double]) -> Int {
        let u = rng.unit()
        var lo = 0
        var hi = cumulative.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cumulative[mid] < u { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

private func pad6(_ i: Int) -> String {
    let s = String(i)
    return String(repeating: "0", count: max(0, 6 - s.count)) + s
}

private func round6(_ d: Double) -> Double { (d * 1_000_000).rounded() / 1_000_000 }

/// k^1.1 without Foundation (exp(1.1 ln k)).
private func pow11(_ k: Double) -> Double { expApprox(1.1 * _log(k)) }
/// u^(1/1.1).
private func powNeg(_ u: Double) -> Double { expApprox(_log(u) / 1.1) }

private func cosDegrees(_ d: Double) -> Double { _cos(d * Double.pi / 180) }

private func expApprox(_ x: Double) -> Double {
    // e^x = 2^n · e^r with |r| ≤ ln2/2.
    let ln2 = 0.693_147_180_559_945_3
    let n = (x / ln2).rounded()
    let r = x - n * ln2
    var sum = 1.0
    var term = 1.0
    for k in 1..<20 {
        term *= r / Double(k)
        sum += term
    }
    var p = 1.0
    let e = Int(n)
    if e >= 0 { for _ in 0..<e { p *= 2 } } else { for _ in 0..<(-e) { p /= 2 } }
    return sum * p
}
