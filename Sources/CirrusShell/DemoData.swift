// DemoData: the records of the demo database, generated deterministically — CloudKit's own guide
// examples (`Artist`, `Artwork` from the CloudKit Quick Start, `Note` from the CloudNotes sample)
// and many `Place` records clustered around real cities (including near both poles and on both
// sides of the antimeridian) with heavy-tailed populations and Zipf-distributed description words.
//
// Owns only *what* the demo holds (schema text, fixed records, the place generator). Writing it to
// disk, caching and versioning: DemoDatabase.swift. Famous places used by the README tour have
// fixed record names (`eiffel-tower`, `louvre`, …) so the tour's output never changes.

import RecordModel

/// The demo's content: its schema and a deterministic stream of records.
///
/// ```swift
/// var demo = DemoData(placeCount: 1000)
/// let schema = DemoData.schemaText          // CloudKit's schema language
/// let artists = demo.artists()              // [Record]
/// ```
public struct DemoData: Sendable {
    /// How many generated places (plus the famous ones).
    public var placeCount: Int
    var rng: DemoRandom

    /// A generator of `placeCount` places; the same `seed` gives the same places.
    public init(placeCount: Int, seed: UInt64 = 0xC1_22_05) {
        self.placeCount = placeCount
        self.rng = DemoRandom(seed: seed)
    }

    /// The schema, in CloudKit's schema language, with production-like index options.
    /// `___recordID QUERYABLE` makes `TRUEPREDICATE` listings legal in production.
    public static let schemaText = """
        DEFINE SCHEMA

            RECORD TYPE Artist (
                "___recordID" REFERENCE QUERYABLE,
                name          STRING QUERYABLE SORTABLE SEARCHABLE,
                born          TIMESTAMP QUERYABLE SORTABLE,
                country       STRING QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE Artwork (
                "___recordID"   REFERENCE QUERYABLE,
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                title           STRING QUERYABLE SORTABLE SEARCHABLE,
                artist          REFERENCE QUERYABLE,
                address         STRING SEARCHABLE,
                location        LOCATION QUERYABLE,
                image           ASSET,
                date            TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE Note (
                "___recordID"  REFERENCE QUERYABLE,
                "___modTime"   TIMESTAMP QUERYABLE SORTABLE,
                title          STRING QUERYABLE SORTABLE SEARCHABLE,
                content        STRING SEARCHABLE,
                location       LOCATION QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );

            RECORD TYPE Place (
                "___recordID" REFERENCE QUERYABLE,
                name          STRING QUERYABLE SORTABLE SEARCHABLE,
                kind          STRING QUERYABLE,
                population    INT64 QUERYABLE SORTABLE,
                country       STRING QUERYABLE SORTABLE,
                location      LOCATION QUERYABLE,
                tags          LIST<STRING> QUERYABLE,
                description   STRING SEARCHABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );
        """

    // MARK: fixed records

    static let artistRows: [(id: String, name: String, born: (Int64, Int64, Int64), country: String)] = [
        ("leonardo", "Leonardo da Vinci", (1452, 4, 15), "IT"),
        ("vermeer", "Johannes Vermeer", (1632, 10, 31), "NL"),
        ("vangogh", "Vincent van Gogh", (1853, 3, 30), "NL"),
        ("monet", "Claude Monet", (1840, 11, 14), "FR"),
        ("hokusai", "Katsushika Hokusai", (1760, 10, 31), "JP"),
        ("picasso", "Pablo Picasso", (1881, 10, 25), "ES"),
        ("kahlo", "Frida Kahlo", (1907, 7, 6), "MX"),
    ]

    /// Milliseconds since 1970 of a (proleptic Gregorian) date at midnight UTC.
    static func civil(_ y: Int64, _ m: Int64, _ d: Int64) -> Timestamp {
        // Howard Hinnant's days_from_civil.
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Timestamp(millisecondsSince1970: (era * 146_097 + doe - 719_468) * 86_400_000)
    }

    /// The artists of CloudKit's Quick Start example.
    public func artists() -> [Record] {
        Self.artistRows.map { a in
            Record(
                recordType: "Artist", recordID: RecordID(recordName: a.id),
                fields: [
                    "name": .string(a.name), "born": .date(Self.civil(a.born.0, a.born.1, a.born.2)),
                    "country": .string(a.country),
                ])
        }
    }

    static let artworkRows:
        [(id: String, title: String, artist: String, address: String, lat: Double, lon: Double, year: Int64)] = [
            (
                "mona-lisa", "Mona Lisa", "leonardo", "Musée du Louvre, Rue de Rivoli, 75001 Paris", 48.8606, 2.3376,
                1503
            ),
            (
                "last-supper", "The Last Supper", "leonardo", "Piazza di Santa Maria delle Grazie 2, 20123 Milano",
                45.4660, 9.1709, 1498
            ),
            (
                "girl-pearl", "Girl with a Pearl Earring", "vermeer", "Mauritshuis, Plein 29, 2511 CS Den Haag",
                52.0804, 4.3143, 1665
            ),
            (
                "milkmaid", "The Milkmaid", "vermeer", "Rijksmuseum, Museumstraat 1, 1071 XX Amsterdam", 52.3600,
                4.8852, 1658
            ),
            (
                "starry-night", "The Starry Night", "vangogh", "MoMA, 11 West 53rd Street, New York", 40.7614, -73.9776,
                1889
            ),
            (
                "sunflowers", "Sunflowers", "vangogh", "National Gallery, Trafalgar Square, London", 51.5089, -0.1283,
                1888
            ),
            (
                "water-lilies", "Water Lilies", "monet", "Musée de l'Orangerie, Jardin des Tuileries, 75001 Paris",
                48.8638, 2.3226, 1920
            ),
            (
                "impression-sunrise", "Impression, Sunrise", "monet",
                "Musée Marmottan Monet, 2 Rue Louis Boilly, 75016 Paris", 48.8592, 2.2676, 1872
            ),
            (
                "great-wave", "The Great Wave off Kanagawa", "hokusai", "Tokyo National Museum, 13-9 Ueno Park, Tokyo",
                35.7188, 139.7765, 1831
            ),
            (
                "guernica", "Guernica", "picasso", "Museo Reina Sofía, Calle de Santa Isabel 52, Madrid", 40.4080,
                -3.6946, 1937
            ),
            (
                "two-fridas", "The Two Fridas", "kahlo",
                "Museo de Arte Moderno, Bosque de Chapultepec, Ciudad de México", 19.4230, -99.1790, 1939
            ),
        ]

    /// A small deterministic "image" for an artwork (the asset's bytes).
    public static func imageBytes(_ id: String) -> [UInt8] {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        var r = DemoRandom(seed: h)
        return Array("P5 16 16 255\n".utf8) + (0..<256).map { _ in UInt8(truncatingIfNeeded: r.next()) }
    }

    /// The artworks; `image` gives the asset stored for each artwork id.
    public func artworks(image: (String) throws -> Asset?) rethrows -> [Record] {
        try Self.artworkRows.map { a in
            var f: RecordFields = [
                "title": .string(a.title), "address": .string(a.address),
                "artist": .reference(Reference(recordID: RecordID(recordName: a.artist))),
                "location": .location(Location(latitude: a.lat, longitude: a.lon)),
                "date": .date(Self.civil(a.year, 1, 1)),
            ]
            if let asset = try image(a.id) { f["image"] = .asset(asset) }
            return Record(recordType: "Artwork", recordID: RecordID(recordName: a.id), fields: f)
        }
    }

    static let noteRows: [(id: String, title: String, content: String, lat: Double, lon: Double)] = [
        ("note-1", "Groceries", "milk, bread, coffee beans and two lemons", 37.3349, -122.0090),
        ("note-2", "Louvre visit", "see the Mona Lisa early, then the Winged Victory of Samothrace", 48.8606, 2.3376),
        (
            "note-3", "Trip ideas", "Kyoto in autumn, Reykjavik for the northern lights, Hobart by ferry", 35.0116,
            135.7681
        ),
        ("note-4", "Book club", "next month: a novel about a lighthouse keeper", 51.5074, -0.1278),
        ("note-5", "Fiji dive log", "manta rays at the reef near Suva, water 27 degrees", -18.1416, 178.4419),
    ]

    /// The notes of the CloudNotes sample.
    public func notes() -> [Record] {
        Self.noteRows.map { n in
            Record(
                recordType: "Note", recordID: RecordID(recordName: n.id),
                fields: [
                    "title": .string(n.title), "content": .string(n.content),
                    "location": .location(Location(latitude: n.lat, longitude: n.lon)),
                ])
        }
    }
}

/// The demo's generator: SplitMix64, so the demo is the same on every machine.
typealias DemoRandom = SplitMix64

extension SplitMix64 {
    /// Standard normal (Box–Muller), Foundation-free so the demo is identical everywhere.
    mutating func normal() -> Double {
        let u = max(unit(), 1e-12)
        let v = unit()
        return (-2 * _log(u)).squareRoot() * _cos(2 * Double.pi * v)
    }
}

// Foundation-free math so the generator's output is identical on every platform.
@inline(__always) func _log(_ x: Double) -> Double { x.isFinite && x > 0 ? logApprox(x) : -745 }
@inline(__always) func _cos(_ x: Double) -> Double { cosApprox(x) }

private func logApprox(_ x: Double) -> Double {
    // ln x = 2 atanh((x-1)/(x+1)) after scaling into [0.5, 1) by the exponent.
    var e = 0
    var m = x
    while m >= 1 { m /= 2; e += 1 }
    while m < 0.5 { m *= 2; e -= 1 }
    let t = (m - 1) / (m + 1)
    let t2 = t * t
    var sum = 0.0
    var term = t
    var k = 1.0
    for _ in 0..<30 {
        sum += term / k
        term *= t2
        k += 2
    }
    return 2 * sum + Double(e) * 0.693_147_180_559_945_3
}

private func cosApprox(_ x: Double) -> Double {
    var a = x.truncatingRemainder(dividingBy: 2 * Double.pi)
    if a > Double.pi { a -= 2 * Double.pi }
    if a < -Double.pi { a += 2 * Double.pi }
    let a2 = a * a
    var sum = 1.0
    var term = 1.0
    for n in 1..<16 {
        term *= -a2 / Double((2 * n - 1) * (2 * n))
        sum += term
    }
    return sum
}
