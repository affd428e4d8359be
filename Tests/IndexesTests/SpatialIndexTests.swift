// SpatialIndex against a full scan with the same distance function: radius (both strategies),
// nearest-first order against a full sort by (chord², row id) including ties, resume, deletes,
// points at the poles and on both sides of ±180°; invariants after every mutation.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import Indexes

struct PointGen {
    var rng: SeededRandom

    mutating func unit() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }

    mutating func location() -> Location {
        switch rng.below(8) {
        case 0: return Location(latitude: [90, -90, 89.9999, -89.99999][rng.below(4)], longitude: unit() * 360 - 180)
        case 1: return Location(latitude: unit() * 10 - 5, longitude: [180, -180, 179.9999, -179.9999][rng.below(4)])
        case 2: return Location(latitude: 48.85 + unit() * 0.1, longitude: 2.35 + unit() * 0.1)  // a city
        case 3:  // duplicates
            return Location(latitude: [0, 10, 48.9][rng.below(3)], longitude: [0, 10, 2.4][rng.below(3)])
        case 4: return Location(latitude: unit() * 2 - 1, longitude: (unit() < 0.5 ? 179 : -180) + unit())
        default: return Location(latitude: asin(unit() * 2 - 1) * 180 / .pi, longitude: unit() * 360 - 180)
        }
    }
}

@Suite struct SpatialIndexTests {
    func model(_ pts: [RowID: Location], _ c: Location) -> [(Double, RowID)] {
        let q = UnitVector(latitude: c.latitude, longitude: c.longitude)
        return pts.map { (q.chord2(UnitVector(latitude: $0.value.latitude, longitude: $0.value.longitude)), $0.key) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
    }

    func check(_ index: SpatialIndex, _ pts: [RowID: Location], _ gen: inout PointGen, seed: UInt64) throws {
        try index.checkInvariants()
        #expect(index.count == pts.count)
        for _ in 0..<3 {
            let c = gen.location()
            let km = [0.0, 1, 10, 300, 2000, 20_100][gen.rng.below(6)]
            let sorted = model(pts, c)
            let exp = sorted.filter { GeoMath.distanceKm(chord2: $0.0) <= km }.map(\.1).sorted()
            #expect(index.rows(withinKm: km, of: c, using: .geohash) == exp, "seed \(seed) geohash \(c) \(km)")
            #expect(index.rows(withinKm: km, of: c, using: .rtree) == exp, "seed \(seed) rtree \(c) \(km)")
            #expect(index.coveringCount(withinKm: km, of: c) >= exp.count, "seed \(seed)")
            #expect(
                index.estimatedCount(withinKm: km, of: c) <= index.coveringCount(withinKm: km, of: c), "seed \(seed)")
            var it = index.nearest(to: c)
            let got = it.next(sorted.count + 1)
            #expect(got.map(\.row) == sorted.map(\.1), "seed \(seed) nearest \(c)")
            #expect(got.map(\.position.chord2) == sorted.map(\.0), "seed \(seed) nearest keys")
            var lim = index.nearest(to: c, maxKm: km)
            #expect(
                lim.next(sorted.count + 1).map(\.row)
                    == sorted.filter { GeoMath.distanceKm(chord2: $0.0) <= km }.map(\.1),
                "seed \(seed) nearest within \(km)")
            if !got.isEmpty {
                let k = gen.rng.below(got.count)
                var resumed = index.nearest(to: c, after: got[k].position)
                #expect(resumed.next(got.count).map(\.row) == got[(k + 1)...].map(\.row), "seed \(seed) resume at \(k)")
            }
        }
    }

    /// One random write to `index` and its model `pts`: a remove (with probability `removing`) or
    /// an insert of a random location, of a row below `rows`.
    func write(
        _ index: inout SpatialIndex, _ pts: inout [RowID: Location], _ gen: inout PointGen, rows: Int, removing: Double
    ) {
        let r = RowID(gen.rng.below(rows))
        if gen.rng.chance(removing) {
            index.remove(row: r)
            pts[r] = nil
        } else {
            let l = gen.location()
            index.insert(row: r, location: l)
            pts[r] = l
        }
    }

    /// Starting the covering search at the first level that can fit (a bound from the boxes'
    /// area) gives exactly the covering of a search from level 31.
    @Test func coveringSkipsOnlyLevelsThatCannotFit() {
        let seed = TestSeed.next()
        var gen = PointGen(rng: SeededRandom(seed: seed))
        for round in 0..<2_000 {
            let c = gen.location()
            let km =
                [0.0, 0.001, 0.05, 1, 7.5, 10, 50, 300, 2000, 9000, 20_100][gen.rng.below(11)] * (0.5 + gen.unit())
            let boxes = Geohash.boundingBoxes(latitude: c.latitude, longitude: c.longitude, km: km)
            for cells in [1, 4, 12, 40] {
                let fast = Geohash.covering(boxes, maxCells: cells)
                let slow = Geohash.covering(boxes, maxCells: cells, skipFineLevels: false)
                #expect(
                    fast.map(\.0) == slow.map(\.0) && fast.map(\.1) == slow.map(\.1),
                    "seed \(seed) round \(round): \(c) \(km) km, \(cells) cells")
            }
        }
    }

    @Test(arguments: [RTreePacking.str, .hilbert])
    func randomPointsMatchFullScan(packing: RTreePacking) throws {
        let seed = TestSeed.next()
        print("SpatialIndexTests.randomPointsMatchFullScan seed \(seed)")
        var gen = PointGen(rng: SeededRandom(seed: seed))
        for size in stride(from: 0, through: 300, by: 5) {
            var pts: [RowID: Location] = [:]
            for r in 0..<size { pts[RowID(r)] = gen.location() }
            var index = SpatialIndex(points: pts.map { ($0.key, $0.value) }, nodeSize: 4, fanout: 4, packing: packing)
            try check(index, pts, &gen, seed: seed)
            for _ in 0..<min(size, 150) {
                write(&index, &pts, &gen, rows: size + 10, removing: 0.4)
                try index.checkInvariants()
            }
            try check(index, pts, &gen, seed: seed)
        }
    }

    @Test func largeIndexWithManyWritesMatchesFullScan() throws {
        let seed = TestSeed.next()
        print("SpatialIndexTests.large seed \(seed)")
        var gen = PointGen(rng: SeededRandom(seed: seed))
        var pts: [RowID: Location] = [:]
        for r in 0..<5000 { pts[RowID(r)] = gen.location() }
        var index = SpatialIndex(points: pts.map { ($0.key, $0.value) }, fanout: 8)
        for _ in 0..<6000 { write(&index, &pts, &gen, rows: 6000, removing: 0) }  // repacks the delta and base
        try check(index, pts, &gen, seed: seed)
    }

    /// The index is one reference copied on write: a copy taken before writes (a snapshot's)
    /// keeps answering for the points it had, and the written index for its own.
    @Test func copyKeepsItsPointsWhileTheOriginalIsWritten() throws {
        let seed = TestSeed.next()
        print("SpatialIndexTests.copyOnWrite seed \(seed)")
        var gen = PointGen(rng: SeededRandom(seed: seed))
        var pts: [RowID: Location] = [:]
        for r in 0..<400 { pts[RowID(r)] = gen.location() }
        var index = SpatialIndex(points: pts.map { ($0.key, $0.value) }, nodeSize: 4, fanout: 4)
        let before = pts
        let snapshot = index
        for _ in 0..<300 { write(&index, &pts, &gen, rows: 500, removing: 0.3) }  // carries the buffer into layers
        #expect(pts != before)
        try check(snapshot, before, &gen, seed: seed)
        try check(index, pts, &gen, seed: seed)
    }

    /// On evenly spread points the planner's estimate is near the true count (the covering's
    /// upper bound can be many times it), at mid latitudes and across ±180°.
    @Test func radiusEstimateIsNearTheCountOnEvenlySpreadPoints() {
        let seed = TestSeed.next()
        var gen = PointGen(rng: SeededRandom(seed: seed))
        var pts: [(RowID, Location)] = []
        for r in 0..<40_000 {  // a 4° × 6° square around (45, 2) and one around (0, 180)
            let box = r % 2 == 0 ? (lat: 43.0, lon: -1.0) : (lat: -2.0, lon: 177.0)
            var lon = box.lon + gen.unit() * 6
            if lon > 180 { lon -= 360 }
            pts.append((RowID(r), Location(latitude: box.lat + gen.unit() * 4, longitude: lon)))
        }
        let index = SpatialIndex(points: pts, fanout: 16)
        var worst = 1.0
        var looser = 0
        for round in 0..<60 {
            let c =
                round % 2 == 0
                ? Location(latitude: 44 + gen.unit() * 2, longitude: 0.5 + gen.unit() * 3)
                : Location(latitude: -1 + gen.unit() * 2, longitude: 179 + gen.unit() * 2 - (round % 4 == 1 ? 0 : 360))
            let km = [5.0, 12, 30, 60][gen.rng.below(4)]
            let actual = index.rows(withinKm: km, of: c).count
            guard actual >= 100 else { continue }
            let estimate = index.estimatedCount(withinKm: km, of: c)
            let bound = index.coveringCount(withinKm: km, of: c)
            let ratio = Double(estimate) / Double(actual)
            worst = max(worst, ratio, 1 / ratio)
            if Double(bound) / Double(actual) >= 2 { looser += 1 }
            #expect(ratio > 0.5 && ratio < 2, "seed \(seed) round \(round): \(c) \(km) km: \(estimate) vs \(actual)")
        }
        // The upper bound alone would have failed the check above this often.
        print("radius estimate: worst ratio \(worst); the covering bound was 2× or more in \(looser) rounds")
    }

    @Test func invalidCoordinatesAreNotIndexed() {
        var index = SpatialIndex()
        let a = index.insert(row: 1, location: Location(latitude: .nan, longitude: 0))
        let b = index.insert(row: 2, location: Location(latitude: 91, longitude: 0))
        #expect(!a && !b)
        #expect(index.count == 0)
        #expect(index.rows(withinKm: 1, of: Location(latitude: .nan, longitude: 0)).isEmpty)
    }

    @Test func antimeridianNeighboursAreClose() {
        let pts: [(RowID, Location)] = [
            (1, Location(latitude: 0, longitude: 179.99)), (2, Location(latitude: 0, longitude: -179.99)),
        ]
        let index = SpatialIndex(points: pts)
        #expect(index.rows(withinKm: 3, of: Location(latitude: 0, longitude: 180), using: .geohash) == [1, 2])
        var it = index.nearest(to: Location(latitude: 0, longitude: -179.995))
        #expect(it.next()?.row == 2)
        #expect(
            abs(GeoMath.distanceKm(latitude1: 0, longitude1: 179.99, latitude2: 0, longitude2: -179.99) - 2.2239)
                < 0.001)
    }

    /// The lat/lon box bound never exceeds the distance to any point of the box, and is matched
    /// by a dense sampling of the box's boundary (it is exact, not just a bound).
    @Test func boxLowerBoundMatchesSampledMinimum() {
        let seed = TestSeed.next()
        print("SpatialIndexTests.boxLowerBound seed \(seed)")
        var gen = PointGen(rng: SeededRandom(seed: seed))
        for _ in 0..<200 {
            let a = gen.location()
            let b = gen.location()
            let w = gen.unit() * 40
            let box = GeoBox(
                latMin: min(a.latitude, b.latitude), latMax: max(a.latitude, b.latitude),
                lonMin: max(-180, a.longitude - w), lonMax: min(180, a.longitude + w))
            let qLoc = gen.location()
            let q = GeoQueryPoint(latitude: qLoc.latitude, longitude: qLoc.longitude)
            let bound = box.minChord2(from: q)
            var sampled = 4.0
            let steps = 400
            for i in 0...steps {
                let t = Double(i) / Double(steps)
                let lat = box.latMin + (box.latMax - box.latMin) * t
                let lon = box.lonMin + (box.lonMax - box.lonMin) * t
                for (la, lo) in [(lat, box.lonMin), (lat, box.lonMax), (box.latMin, lon), (box.latMax, lon)] {
                    sampled = min(sampled, q.vector.chord2(UnitVector(latitude: la, longitude: lo)))
                }
            }
            let inside = box.containsLongitude(q.longitude) && q.latitude >= box.latMin && q.latitude <= box.latMax
            if inside { sampled = 0 }
            #expect(bound <= sampled + 1e-12, "seed \(seed): bound above a point of the box \(box) \(qLoc)")
            // Sampling at 1/400 of the box misses the true minimum by at most a small margin.
            let slack = GeoMath.distanceKm(chord2: sampled) - GeoMath.distanceKm(chord2: bound)
            #expect(
                slack < 0.005 * 111 * max(box.latMax - box.latMin, box.lonMax - box.lonMin) + 1e-6,
                "seed \(seed): bound too loose by \(slack) km for \(box) \(qLoc)")
        }
    }

    @Test func boxLowerBoundIsExactOnKnownCases() {
        let box = GeoBox(latMin: 10, latMax: 20, lonMin: 170, lonMax: 180)
        // Across the antimeridian: (15, -179) is 1° of longitude east of the edge at 180.
        let q = GeoQueryPoint(latitude: 15, longitude: -179)
        let d = GeoMath.distanceKm(chord2: box.minChord2(from: q))
        let ref = GeoMath.distanceKm(latitude1: 15, longitude1: -179, latitude2: 15.0, longitude2: 180)
        #expect(d <= ref + 1e-9 && d > ref - 1)
        #expect(box.minChord2(from: GeoQueryPoint(latitude: 15, longitude: 175)) == 0)
        let polar = GeoBox(latMin: 80, latMax: 90, lonMin: -10, lonMax: 10)
        #expect(
            abs(
                GeoMath.distanceKm(chord2: polar.minChord2(from: GeoQueryPoint(latitude: 70, longitude: 180)))
                    - 20 * .pi / 180 * GeoMath.earthRadiusKm) < 1e-6)  // over the pole
    }

    /// The 3-D box bound without branches (the radius descent's) against the per-axis form
    /// `minDist2` (the nearest iterator's: "min − v below the box, v − max above it, 0 inside",
    /// squares summed x, y, z, shrunk by 1e-15), to the bit, for queries inside, outside and on
    /// the faces of boxes around random points, and the empty box.
    @Test func boxDistanceMatchesPerAxisForm() {
        let seed = TestSeed.next()
        var gen = PointGen(rng: SeededRandom(seed: seed))
        func vector() -> UnitVector {
            let l = gen.location()
            return UnitVector(latitude: l.latitude, longitude: l.longitude)
        }
        var outside = 0
        for _ in 0..<2_000 {
            var box = Box3.empty
            for _ in 0..<(1 + gen.rng.below(4)) {
                let p = vector()
                box.add(p.x, p.y, p.z)
            }
            // A corner of the box, a point of it and a random point: on, inside and (mostly) outside.
            let corner = UnitVector(x: box.minX, y: box.maxY, z: box.minZ)
            for v in [vector(), corner, UnitVector(x: box.maxX, y: box.minY, z: box.maxZ)] {
                let got = box.minDist2Branchless(v)
                #expect(got.bitPattern == box.minDist2(v).bitPattern, "seed \(seed): \(box) \(v)")
                if got > 0 { outside += 1 }
            }
            #expect(Box3.empty.minDist2Branchless(vector()) == .infinity)
        }
        #expect(outside > 1_000, "seed \(seed): too few queries outside their box")
    }
}

/// The packed R-tree's STR order: its stable key sort (radix from 1 024 entries) against the
/// standard library's stable sort, and the whole order against the order made with `<` on the
/// coordinates — equal coordinates (−0 and +0 among them) kept in their order.
@Suite struct STROrderTests {
    @Test(arguments: [0, 5, 1023, 1024, 5000]) func radixSortIsTheStableSort(count: Int) {
        var g = SeededRandom(seed: UInt64(count) + 1)
        let pool: [UInt64] = [0, 1, 0xFFFF, 0x1_0000, 1 << 63, .max, 0x3FF0_0000_0000_0000]
        var a: [(key: UInt64, value: Int)] = (0..<count).map { i in
            (g.chance(0.5) ? pool[g.below(pool.count)] : g.next() >> UInt64(g.below(64)), i)
        }
        var expected = a
        expected.sort { $0.key < $1.key }
        PackedRTree.stableSortByKey(&a)
        #expect(a.map(\.key) == expected.map(\.key))
        #expect(a.map(\.value) == expected.map(\.value))
    }

    /// The order with the radix sort is the order with the standard library's stable sort,
    /// with repeated and signed-zero coordinates; the keys order as the coordinates do.
    @Test func strOrderIsTheOrderOfTheCoordinates() {
        var g = SeededRandom(seed: 21)
        for n in [10, 300, 3000] {
            var lat: [Double] = []
            var lon: [Double] = []
            for _ in 0..<n {
                lat.append(g.chance(0.1) ? [0.0, -0.0, 45.5][g.below(3)] : Double(g.below(180_001)) / 1000 - 90)
                lon.append(g.chance(0.1) ? [0.0, -0.0, -120.25][g.below(3)] : Double(g.below(360_001)) / 1000 - 180)
            }
            let model = PackedRTree.strOrder(lat: lat, lon: lon, fanout: 16) { $0.sort { $0.key < $1.key } }
            #expect(PackedRTree.strOrder(lat: lat, lon: lon, fanout: 16) == model)
            for (x, y) in zip(lat, lon) {
                #expect((x < y) == (KeyEncoding.orderBits(x) < KeyEncoding.orderBits(y)), "\(x) \(y)")
                #expect((x == y) == (KeyEncoding.orderBits(x) == KeyEncoding.orderBits(y)), "\(x) \(y)")
            }
        }
    }
}
