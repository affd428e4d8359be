// RecordIndexes: the schema decides which indexes exist; bulk build then random inserts,
// updates and deletes match a rebuild from scratch; snapshots do not move; GEOS helpers agree
// with our own geometry.

import CirrusTestSupport
import Foundation
import RecordModel
import Testing

@testable import Indexes

@Suite struct RecordIndexesTests {
    static let schema = RecordTypeSchema(
        name: "Place",
        fields: [
            FieldSchema(name: "name", type: .string, options: [.queryable, .sortable, .searchable]),
            FieldSchema(name: "notes", type: .string, options: [.searchable]),
            FieldSchema(name: "price", type: .double, options: [.sortable]),
            FieldSchema(name: "tags", type: .list(.string), options: [.queryable]),
            FieldSchema(name: "location", type: .location, options: [.queryable]),
            FieldSchema(name: "blob", type: .bytes, options: []),
        ],
        systemFieldOptions: [.creationDate: [.sortable]])

    func record(_ i: Int, _ rng: inout SeededRandom) -> Record {
        var r = Record(recordType: "Place", recordID: RecordID(recordName: "p\(i)"))
        r["name"] = .string(["Café Nord", "Bistro", "Le Dôme", "東京ラーメン"][rng.below(4)])
        if rng.chance(0.5) { r["notes"] = .string(["open late", "the best coffee", "quiet"][rng.below(3)]) }
        r["price"] = rng.chance(0.5) ? .int64(Int64(rng.below(50))) : .double(Double(rng.below(100)) / 2)
        r["tags"] = .list((0..<rng.below(3)).map { _ in FieldValue.string(["a", "b", "c"][rng.below(3)]) })
        if rng.chance(0.9) {
            r["location"] = .location(
                Location(latitude: Double(rng.below(180)) - 90, longitude: Double(rng.below(360)) - 180))
        }
        r.creationDate = Timestamp(millisecondsSince1970: Int64(rng.below(1000)))
        return r
    }

    @Test func schemaDecidesWhichIndexesExist() {
        let idx = RecordIndexes(schema: Self.schema, rows: [])
        let cat = idx.catalog
        #expect(cat.kinds(for: .user("name")) == [.ordered, .text])
        #expect(cat.kinds(for: .user("notes")) == [.text])
        #expect(cat.kinds(for: .user("price")) == [.ordered])
        #expect(cat.kinds(for: .user("tags")) == [.ordered])
        #expect(cat.kinds(for: .user("location")) == [.spatial])
        #expect(cat.kinds(for: .user("blob")).isEmpty)
        #expect(cat.kinds(for: .system(.creationDate)) == [.ordered])
        #expect(cat.kinds(for: .system(.recordName)).isEmpty)
        #expect(IndexCatalog(fields: [.user("x"): [.ordered]]).count(.user("x"), in: .all) == nil)
    }

    @Test func incrementalChangesMatchRebuild() throws {
        let seed = TestSeed.next()
        print("RecordIndexesTests.incrementalChangesMatchRebuild seed \(seed)")
        var rng = SeededRandom(seed: seed)
        var rows: [RowID: Record] = [:]
        for i in 0..<200 { rows[RowID(i)] = record(i, &rng) }
        let store = RecordIndexStore(
            RecordIndexes(schema: Self.schema, rows: rows.map { ($0.key, $0.value) }, nodeSize: 4))
        let before = store.snapshot()
        for _ in 0..<30 {
            var batch: [RowChange] = []
            for _ in 0..<(1 + rng.below(5)) {
                let r = RowID(rng.below(260))
                if let old = rows[r] {
                    if rng.chance(0.5) {
                        batch.append(.delete(r, old))
                        rows[r] = nil
                    } else {
                        let new = record(Int(r), &rng)
                        batch.append(.update(r, old: old, new: new))
                        rows[r] = new
                    }
                } else {
                    let new = record(Int(r), &rng)
                    batch.append(.insert(r, new))
                    rows[r] = new
                }
            }
            store.commit(batch)
            try store.snapshot().checkInvariants()
        }
        let live = store.snapshot()
        let rebuilt = RecordIndexes(schema: Self.schema, rows: rows.map { ($0.key, $0.value) })
        #expect(live.rowCount == rows.count)
        for f in rebuilt.ordered.keys {
            #expect(live.ordered[f]?.rows(in: .all) == rebuilt.ordered[f]?.rows(in: .all), "seed \(seed) \(f)")
        }
        for w in ["cafe", "coffee", "東京", "dome", "late"] {
            #expect(live.text?.rows(matchingAll: [w]) == rebuilt.text?.rows(matchingAll: [w]), "seed \(seed) \(w)")
        }
        let c = Location(latitude: 10, longitude: 170)
        #expect(
            live.spatial["location"]?.rows(withinKm: 5000, of: c)
                == rebuilt.spatial["location"]?.rows(withinKm: 5000, of: c))
        // The snapshot taken before the commits still answers as before.
        #expect(before.rowCount == 200)
        #expect(before.ordered[.user("price")]?.count == 200)
        try before.checkInvariants()
    }

    /// A batch of inserts alone (a replayed log's tail) is applied index by index — into an
    /// empty delta packed bottom-up, into a non-empty one entry by entry — and gives the indexes
    /// that one insert at a time gives, with the trees' invariants.
    @Test func batchesOfInsertsMatchOneAtATime() throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        let records = (0..<400).map { record($0, &rng) }
        var bulk = RecordIndexes(schema: Self.schema, rows: [], nodeSize: 4)
        var single = RecordIndexes(schema: Self.schema, rows: [], nodeSize: 4)
        for range in [0..<150, 150..<151, 151..<400] {  // empty delta, one row, a filled delta
            bulk.apply(range.map { .insert(RowID($0), records[$0]) })
            for i in range { single.apply([.insert(RowID(i), records[i])]) }
            try bulk.checkInvariants()
        }
        #expect(bulk.rowCount == 400 && single.rowCount == 400)
        for f in single.ordered.keys {
            #expect(bulk.ordered[f]?.rows(in: .all) == single.ordered[f]?.rows(in: .all), "seed \(seed) \(f)")
            #expect(bulk.ordered[f]?.count == single.ordered[f]?.count, "seed \(seed) \(f)")
        }
        let half = ValueRange(lower: .included(.double(10)), upper: .excluded(.double(30)))
        #expect(bulk.ordered[.user("price")]?.rows(in: half) == single.ordered[.user("price")]?.rows(in: half))
        for w in ["cafe", "coffee", "東京", "dome", "late", "quiet"] {
            #expect(bulk.text?.rows(matchingAll: [w]) == single.text?.rows(matchingAll: [w]), "seed \(seed) \(w)")
        }
        let c = Location(latitude: 10, longitude: 170)
        #expect(
            bulk.spatial["location"]?.rows(withinKm: 5000, of: c)
                == single.spatial["location"]?.rows(withinKm: 5000, of: c))
        // Later changes of rows a batch added work as on rows added one at a time.
        let changes: [RowChange] = [
            .delete(RowID(3), records[3]), .update(RowID(200), old: records[200], new: records[5]),
        ]
        bulk.apply(changes)
        single.apply(changes)
        try bulk.checkInvariants()
        for f in single.ordered.keys { #expect(bulk.ordered[f]?.rows(in: .all) == single.ordered[f]?.rows(in: .all)) }
    }

    /// Readers running beside a writer only ever see whole batches: every batch inserts 10 rows
    /// and the snapshot's counts always agree with each other and with a multiple of 10.
    @Test func readersNeverSeeHalfAppliedBatches() async throws {
        let seed = TestSeed.next()
        print("RecordIndexesTests.readersNeverSeeHalfAppliedBatches seed \(seed)")
        var rng = SeededRandom(seed: seed)
        let records = (0..<600).map { record($0, &rng) }
        let store = RecordIndexStore(RecordIndexes(schema: Self.schema, rows: []))
        let violations = await withTaskGroup(of: Int.self) { group in
            group.addTask {
                for b in 0..<60 {
                    store.commit((0..<10).map { i in .insert(RowID(b * 10 + i), records[b * 10 + i]) })
                }
                return 0
            }
            for _ in 0..<2 {
                group.addTask {
                    var bad = 0
                    for _ in 0..<300 {
                        let s = store.snapshot()
                        let n = s.rowCount
                        if n % 10 != 0 || s.ordered[.user("price")]?.count != n
                            || s.ordered[.system(.creationDate)]?.count != n
                        {
                            bad += 1
                        }
                        await Task.yield()
                    }
                    return bad
                }
            }
            var total = 0
            for await v in group { total += v }
            return total
        }
        #expect(violations == 0, "seed \(seed)")
        #expect(store.snapshot().rowCount == 600)
    }

    @Test func geosClipAgreesWithBoundingBoxSplit() throws {
        let planar = try #require(GEOSPlanar())
        let parts = planar.clipToWorld(latMin: 0, latMax: 1, lonMin: 179, lonMax: 181)
        let sorted = parts.sorted { $0.lonMin < $1.lonMin }
        #expect(
            sorted == [
                GeoBox(latMin: 0, latMax: 1, lonMin: -180, lonMax: -179),
                GeoBox(latMin: 0, latMax: 1, lonMin: 179, lonMax: 180),
            ])
        let ours = Geohash.boundingBoxes(latitude: 0, longitude: 180, km: 50)
        #expect(ours.count == 2)
        // Our split of a circle on the antimeridian equals GEOS's clip of the unwrapped box.
        let east = try #require(ours.first { $0.lonMax == 180 })
        let west = try #require(ours.first { $0.lonMin == -180 })
        let theirs = planar.clipToWorld(
            latMin: east.latMin, latMax: east.latMax, lonMin: east.lonMin, lonMax: west.lonMax + 360)
        #expect(Set(theirs) == Set(ours))
    }

    @Test func geosTreeAgreesWithRTreeOnRadius() throws {
        let seed = TestSeed.next()
        print("RecordIndexesTests.geosTree seed \(seed)")
        var gen = PointGen(rng: SeededRandom(seed: seed))
        let pts = (0..<2000).map { (RowID($0), gen.location()) }
        let ours = SpatialIndex(points: pts)
        let geos = try #require(GEOSPointTree(points: pts))
        for _ in 0..<50 {
            let c = gen.location()
            let km = [1.0, 100, 1000][gen.rng.below(3)]
            #expect(geos.rows(withinKm: km, of: c) == ours.rows(withinKm: km, of: c), "seed \(seed) \(c) \(km)")
        }
    }
}
