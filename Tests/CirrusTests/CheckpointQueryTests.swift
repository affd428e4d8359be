// Queries across checkpoints: a cursor taken before a checkpoint (or a compaction, or a
// background checkpoint's rebase) resumes after it with no row repeated or skipped; queries see
// base ∪ delta minus removed rows.

import CirrusTestSupport
import Indexes
import RecordLog
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct CheckpointQueryTests {
    func place(_ i: Int) -> Record {
        rec(
            "p\(i)", "Place",
            [
                "n": .int64(Int64(i % 13)), "name": .string("place \(i)"),
                "loc": .location(Location(latitude: Double(i % 80), longitude: Double(i % 170))),
            ])
    }

    /// A container (no automatic checkpoints) whose places 0..<60 were saved and checkpointed:
    /// every row is a base row.
    func checkpointedPlaces(_ env: inout TestEnv) async throws -> (Container, Database) {
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        _ = try await db.modifyRecords(saving: (0..<60).map(place), deleting: [])
        try c.checkpoint()
        return (c, db)
    }

    /// A bulk read of a table many times the record cache's size asks the cache for its first
    /// rows and then stops (`TypeTable.bulkProbe`): the rows it found there and the rows it
    /// decoded come back alike, every one, in order.
    @Test func bulkReadsReturnCachedAndDecodedRowsAlike() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        var options = env.options()
        options.recordCacheSize = 16  // 300 rows: more than 4× the cache, so bulk reads do not fill it
        let c = try Container.open(at: env.dir, environment: .development, options: options)
        let db = c.publicDatabase(as: .user("_u"))
        _ = try await db.modifyRecords(saving: (0..<300).map(place), deleting: [])
        try c.checkpoint()
        // Rows read one at a time come into the cache; among the first rows of the bulk read
        // below, too few to keep it asking after its first round.
        for i in [0, 1, 10, 100, 101, 299] { _ = try await db.record(for: RecordID(recordName: "p\(i)")) }
        let q = RecordQuery(recordType: "Place", predicate: "n >= %@", arguments: [.value(.int64(0))])
        for _ in 0..<2 {
            let (results, cursor) = try await db.records(matching: q, resultsLimit: 400)
            #expect(cursor == nil)
            let got = try results.map { try $0.1.get() }
            #expect(got.map(\.recordID.recordName) == (0..<300).map { "p\($0)" }.sorted())
            for r in got {
                let i = Int(r.recordID.recordName.dropFirst())!
                #expect(r.fields == place(i).fields, "\(r.recordID.recordName)")
            }
        }
    }

    func allPages(_ db: Database, _ q: RecordQuery, limit: Int, between: () throws -> Void) async throws -> [String] {
        var (page, cursor) = try await db.records(matching: q, resultsLimit: limit)
        var out = try page.map { try $0.1.get().recordID.recordName }
        while let c = cursor {
            try between()
            (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: limit)
            out += try page.map { try $0.1.get().recordID.recordName }
        }
        return out
    }

    /// Id-ordered pages of every size up to 40 over base rows, each read three times (a miss, a
    /// miss that admits the rows to the record cache, then hits whose boxes are loaded ahead):
    /// the same records each time.
    @Test func pagesOfEverySizeReadTheSameRecordsFromTheCache() async throws {
        var env = TestEnv()
        let (_, db) = try await checkpointedPlaces(&env)
        let names = (0..<60).map { "p\($0)" }.sorted()
        let q = RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE")
        for limit in 1...40 {
            for _ in 0..<3 {
                let (page, _) = try await db.records(matching: q, resultsLimit: limit)
                let records = try page.map { try $0.1.get() }
                #expect(records.map(\.recordID.recordName) == Array(names.prefix(limit)))
                let expected = records.map { FieldValue.string("place \($0.recordID.recordName.dropFirst())") }
                #expect(records.map { $0["name"] } == expected)
            }
        }
    }

    @Test(arguments: ["checkpoint", "compact"])
    func cursorResumesAcrossACheckpoint(_ how: String) async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        for chunk in stride(from: 0, to: 120, by: 40) {
            _ = try await db.modifyRecords(saving: (chunk..<chunk + 40).map(place), deleting: [])
        }
        let queries = [
            RecordQuery(recordType: "Place", predicate: "n < 7", sortDescriptors: [.field("n", ascending: false)]),
            RecordQuery(
                recordType: "Place", predicate: "TRUEPREDICATE",
                sortDescriptors: [.distance(field: "loc", from: Location(latitude: 10, longitude: 10))]),
            RecordQuery(recordType: "Place", predicate: "n == 3"),
        ]
        for q in queries {
            let oneShot = try await allPages(db, q, limit: 1000) {}
            var toggled = false
            let paged = try await allPages(db, q, limit: 4) {
                if !toggled {
                    toggled = true
                    if how == "checkpoint" { try c.checkpoint() } else { try c.compact() }
                }
            }
            #expect(toggled)
            #expect(paged == oneShot, "query \(q.predicate)")
        }
        try c.checkInvariants()
    }

    /// Residual filters and sort keys read a row's selected fields from its mapped bytes
    /// (`values(_:of:into:)`): for base rows (plain, cached, updated in place), removed rows and
    /// delta rows the values are the record's.
    @Test func selectedValuesAreTheRecordsValuesInBaseAndDelta() async throws {
        var env = TestEnv()
        let (_, db) = try await checkpointedPlaces(&env)
        _ = try await db.modifyRecords(saving: [], deleting: (0..<5).map { RecordID(recordName: "p\($0)") })
        var changed: [Record] = []
        for i in 5..<15 {
            var r = try await db.record(for: RecordID(recordName: "p\(i)"))
            r["n"] = .int64(100 + Int64(i))  // an ordered-index field only: updated in place
            if i % 2 == 0 { r["name"] = .string("renamed \(i)") }  // a text field too: a new row
            changed.append(r)
        }
        _ = try await db.modifyRecords(saving: changed + (60..<70).map(place), deleting: [])
        _ = try await db.record(for: RecordID(recordName: "p30"))  // cached
        let snap = try #require(db.querySnapshot(recordType: "Place"))
        let selection = FieldSelection(["name", "absent", "n", "loc"])
        var values: [FieldValue?] = []
        var live = 0
        let reader = snap.valueReader(selection)
        for row in 0..<RowID(200) {
            let found = reader.values(row, into: &values)  // before record(_:) caches the row
            let record = snap.record(row)
            #expect(found == (record != nil), "row \(row)")
            guard let record else { continue }
            live += 1
            #expect(values == selection.names.map { record.fields[$0] }, "row \(row) \(record.recordID.recordName)")
        }
        #expect(live == 65)
    }

    @Test func queriesSeeBaseAndDeltaMinusRemovedRows() async throws {
        var env = TestEnv()
        let (c, db) = try await checkpointedPlaces(&env)
        // Delta: delete some base rows, update others, add new ones.
        _ = try await db.modifyRecords(saving: [], deleting: (0..<10).map { RecordID(recordName: "p\($0)") })
        var changed: [Record] = []
        for i in 10..<20 {
            var r = try await db.record(for: RecordID(recordName: "p\(i)"))
            r["n"] = .int64(100)
            changed.append(r)
        }
        _ = try await db.modifyRecords(saving: changed + (60..<70).map(place), deleting: [])
        let (page, _) = try await db.records(
            matching: RecordQuery(recordType: "Place", predicate: "n == 100"), resultsLimit: 100)
        #expect(Set(try page.map { try $0.1.get().recordID.recordName }) == Set((10..<20).map { "p\($0)" }))
        // The updated rows come back with their new values (base rows updated in place are read
        // from the overlay, not from their mapped bytes).
        #expect(try page.allSatisfy { try $0.1.get()["n"] == .int64(100) })
        let (all, _) = try await db.records(
            matching: RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE"), resultsLimit: 400)
        #expect(all.count == 60)
        let updated = try all.map { try $0.1.get() }.filter {
            (10..<20).map { "p\($0)" }.contains($0.recordID.recordName)
        }
        #expect(updated.count == 10 && updated.allSatisfy { $0["n"] == .int64(100) })
        let snap = db.querySnapshot(recordType: "Place")!
        #expect(snap.rowCount == 60)
        try c.checkInvariants()
        try c.close()
        let again = try env.open()
        let (all2, _) = try await again.publicDatabase(as: .user("_u")).records(
            matching: RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE"), resultsLimit: 400)
        #expect(all2.count == 60)
    }
}

@Suite struct IndexSegmentVerifyTests {
    @Test func aDamagedIndexEntryIsFoundByCheckInvariants() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        _ = try await db.modifyRecords(saving: (0..<30).map { rec("r\($0)", ["n": .int64(Int64($0))]) }, deleting: [])
        try c.checkpoint()
        try c.checkInvariants()
        try c.close()
        let dir = env.dir + "/development"
        let m = try Manifest.decode(env.fs.read(dir + "/CURRENT")).get()
        let n = try #require(m.checkpoint?.tables.values.first?.first?.indexes)
        let path = dir + "/" + DataSegmentFormat.fileName(n)
        let seg = try DataSegment.open(path, fileSystem: env.fs)
        let s = try #require(seg.sections.first { $0.name == "ordered:u.n" })
        // The row id of the fifth entry (header 32 bytes, entries of 24, row at +16) now names another row.
        var bytes = try env.fs.read(path)
        bytes[s.offset + 32 + 4 * 24 + 16] ^= 0x01
        env.fs.overwrite(path, with: bytes)
        let again = try env.open()
        #expect(throws: CirrusError.self) { try again.checkInvariants() }
        // …and verify reports the block whose CRC no longer matches.
        let v = try RecordStore.verify(directory: dir, fileSystem: env.fs)
        #expect(v.open.corruptions.contains { $0.reason.contains(path) })
    }
}

/// Queries without sort descriptors are in record-id order; over a checkpoint the base rows are
/// walked in row order (one zone) or by reading ids (several zones), merged with the delta. Every
/// page size and zone restriction must give the model's order.
@Suite struct IDOrderedPagesTests {
    func place(_ i: Int, zone: ZoneID = .default, n: Int? = nil) -> Record {
        rec(
            "p\(i)", "Place", zone: zone,
            [
                "n": .int64(Int64(n ?? i % 5)),
                "loc": .location(Location(latitude: Double(i % 7), longitude: Double(i % 11))),
            ])
    }

    func pages(_ db: Database, _ q: RecordQuery, zone: ZoneID?, limit: Int) async throws -> [RecordID] {
        var (page, cursor) = try await db.records(matching: q, inZoneWith: zone, resultsLimit: limit)
        var out = try page.map { try $0.1.get().recordID }
        while let c = cursor {
            (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: limit)
            out += try page.map { try $0.1.get().recordID }
        }
        return out
    }

    /// public: one zone (base rows read in place); private: three zones (ids read); one-zone:
    /// a private database whose records are all in one custom zone (in place, other zones empty).
    @Test(arguments: ["public", "private", "one-zone"])
    func unsortedPagesFollowRecordIDOrder(_ which: String) async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = which == "public" ? c.publicDatabase(as: .user("_u")) : c.privateDatabase(for: "_u")
        var zones: [ZoneID] = which == "one-zone" ? [] : [.default]
        if which != "public" { zones.append(try await db.save(zone: ZoneID(zoneName: "A"))) }
        if which == "private" { zones.append(try await db.save(zone: ZoneID(zoneName: "B"))) }
        var model: [RecordID: Record] = [:]
        func save(_ rs: [Record], deleting: [RecordID] = []) async throws {
            for z in zones {
                let mine = rs.filter { $0.recordID.zoneID == z }
                let gone = deleting.filter { $0.zoneID == z }
                if mine.isEmpty && gone.isEmpty { continue }
                let r = try await db.modifyRecords(saving: mine, deleting: gone, savePolicy: .allKeys)
                #expect(r.partialFailure == nil)
            }
            for r in rs { model[RecordID(recordName: r.recordID.recordName, zoneID: r.recordID.zoneID)] = r }
            for id in deleting { model[id] = nil }
        }
        // Base: even numbers in every zone, then a checkpoint; delta: odd numbers interleave
        // them, some base rows deleted, some updated (they move to the delta).
        try await save((0..<60).filter { $0 % 2 == 0 }.flatMap { i in zones.map { place(i, zone: $0) } })
        try c.checkpoint()
        try await save(
            (0..<60).filter { $0 % 2 == 1 }.flatMap { i in zones.map { place(i, zone: $0) } }
                + [10, 20, 30].flatMap { i in zones.map { place(i, zone: $0, n: 3) } },
            deleting: [4, 8, 44].flatMap { i in zones.map { RecordID(recordName: "p\(i)", zoneID: $0) } })
        let queries: [(String, (Record) -> Bool)] = [
            ("n == 3", { $0["n"] == .int64(3) }),
            ("TRUEPREDICATE", { _ in true }),
            (
                "distanceToLocation:fromLocation:(loc, %@) < 400",
                { r in
                    guard case .location(let l)? = r["loc"] else { return false }
                    return GeoMath.distanceKm(
                        latitude1: l.latitude, longitude1: l.longitude, latitude2: 3, longitude2: 5) <= 400
                }
            ),
        ]
        for (predicate, matches) in queries {
            var q = RecordQuery(recordType: "Place", predicate: predicate)
            if predicate.contains("%@") { q.arguments = [.value(.location(Location(latitude: 3, longitude: 5)))] }
            for zone in [nil, .default] + zones.map(Optional.some) {
                let expected = model.values.filter { r in matches(r) && (zone == nil || r.recordID.zoneID == zone) }
                    .map(\.recordID).sorted()
                for limit in [1, 3, 7, 400] {
                    let got = try await pages(db, q, zone: zone, limit: limit)
                    #expect(got == expected, "\(which) \(predicate) zone \(zone?.zoneName ?? "all") limit \(limit)")
                }
            }
        }
        try c.checkInvariants()
    }
}

/// A table whose base is several layers (deletions, updates and inserts checkpointed in turn)
/// answers every query kind — equality, ranges with sorts both ways, IN, BEGINSWITH, text,
/// radius, nearest-first, id order — page by page exactly as the same records compacted into
/// one layer, and as a container that never checkpointed them.
@Suite struct LayeredTableQueryTests {
    func place(_ i: Int, v: Int = 0) -> Record {
        rec(
            "p\(i)", "Place",
            [
                "n": .int64(Int64((i + v) % 11)), "name": .string("place \(i % 17) word\(i % 5)"),
                "loc": .location(
                    Location(latitude: Double((i * 7) % 90) - 45, longitude: Double((i * 13) % 360) - 180)),
            ])
    }

    func pages(_ db: Database, _ q: RecordQuery) async throws -> [String] {
        try await allPageNames(db, q, limit: 7)
    }

    @Test func severalLayersAnswerLikeOneAndLikeNone() async throws {
        let seed = TestSeed.next()
        var rng = SeededRandom(seed: seed)
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        var live: [Int: Int] = [:]  // id → version
        func save(_ ids: [Int]) async throws {
            for i in ids { live[i, default: -1] += 1 }
            _ = try await db.modifyRecords(
                saving: ids.map { place($0, v: live[$0]!) }, deleting: [], savePolicy: .allKeys)
        }
        try await save(Array(0..<200))
        try c.checkpoint()
        // Shrinking rounds (a layer merges into the one before only when that one is no larger),
        // the last one left in the delta.
        for (round, size) in [60, 20, 6, 4].enumerated() {
            let ids = live.keys.sorted()
            let gone = (0..<(size / 3)).map { _ in ids[rng.below(ids.count)] }
            _ = try await db.modifyRecords(saving: [], deleting: Set(gone).map { RecordID(recordName: "p\($0)") })
            for g in gone { live[g] = nil }
            // The last round, left in the delta, also saves a live base row: its change of `n`
            // alone is an update in place (a few random ids could all miss the base).
            let inPlace = round == 3 ? live.keys.sorted().first { $0 < 200 } : nil
            let ids2 = Set((0..<size).map { _ in rng.below(260) } + (inPlace.map { [$0] } ?? []))
            try await save(ids2.sorted() + [300 + round * 3, 301 + round * 3])
            if round < 3 { try c.checkpoint() }
        }
        let snap = c.embedded!.store.snapshot()
        let layers = snap.base.values.map(\.layers.count).max() ?? 0
        #expect(layers >= 3, "seed \(seed): \(layers) layers")
        let here = Location(latitude: 10, longitude: 20)
        let queries = [
            RecordQuery(recordType: "Place", predicate: "n == 3"),
            RecordQuery(recordType: "Place", predicate: "n >= 4", sortDescriptors: [.field("n", ascending: false)]),
            RecordQuery(recordType: "Place", predicate: "n < 6", sortDescriptors: [.field("name", ascending: true)]),
            RecordQuery(
                recordType: "Place", predicate: "n IN {1, 2, 9}", sortDescriptors: [.field("n", ascending: true)]),
            RecordQuery(recordType: "Place", predicate: "name BEGINSWITH 'place 1'"),
            RecordQuery(recordType: "Place", predicate: "self CONTAINS 'word3'"),
            RecordQuery(
                recordType: "Place", predicate: "distanceToLocation:fromLocation:(loc, $here) < 4000",
                variables: ["here": .value(.location(here))]),
            RecordQuery(
                recordType: "Place", predicate: "n != 5", sortDescriptors: [.distance(field: "loc", from: here)]),
            RecordQuery(recordType: "Place", predicate: "TRUEPREDICATE"),
        ]
        var layered: [[String]] = []
        for q in queries { layered.append(try await pages(db, q)) }
        #expect(layered.allSatisfy { !$0.isEmpty }, "seed \(seed): a query matched nothing")
        try c.checkInvariants()
        // Saves that change only `n` (an ordered field) updated base rows in place.
        let before = c.embedded!.stateLock.withLock { c.embedded!.tables.values.flatMap(\.values) }
        #expect(before.contains { $0.parts.overlaid.count > 0 }, "seed \(seed): no base row was updated in place")
        // Reopened: the dead rows come out of the indexes from the layers' dead/ sections, with
        // no row decoded.
        try c.close()
        let c2 = try env.open()
        let reopenedDB = c2.publicDatabase(as: .user("_u"))
        let tables = c2.embedded!.stateLock.withLock { c2.embedded!.tables.values.flatMap(\.values) }
        let withDead = tables.filter { ($0.parts.base?.rows.dead.count ?? 0) > 0 }
        #expect(!withDead.isEmpty, "seed \(seed): no table has dead rows")
        for t in withDead {
            #expect(t.parts.indexes.deadRowsRemoved, "seed \(seed): \(t.recordType) decoded its dead rows")
            // Removed: the dead rows, and base rows the log tail changed since.
            let base = try #require(t.parts.base)
            #expect(
                (0..<base.rows.count).allSatisfy { !base.rows.dead.contains($0) || t.parts.baseRemoved.contains($0) })
        }
        for (q, want) in zip(queries, layered) {
            #expect(try await pages(reopenedDB, q) == want, "seed \(seed): \(q.predicate) after reopening")
        }
        try c2.checkInvariants()
        try c2.compact()
        #expect(c2.embedded!.store.snapshot().base.values.allSatisfy { $0.layers.count == 1 })
        for (q, want) in zip(queries, layered) {
            #expect(try await pages(reopenedDB, q) == want, "seed \(seed): \(q.predicate) after compaction")
        }
        try c2.close()
        // The same records in a container that never checkpointed.
        var env2 = TestEnv()
        env2.checkpointThreshold = 1_000_000
        let fresh = try env2.open()
        let db2 = fresh.publicDatabase(as: .user("_u"))
        _ = try await db2.modifyRecords(
            saving: live.keys.sorted().map { place($0, v: live[$0]!) }, deleting: [], savePolicy: .allKeys)
        for (q, want) in zip(queries, layered) {
            #expect(try await pages(db2, q) == want, "seed \(seed): \(q.predicate) without a checkpoint")
        }
    }

    /// Layers that each list their rows in id order, nothing written since: a scan sorted on
    /// one field merges the layers' ties by record id and stops at a full page. Its pages (7
    /// rows, ties spanning pages) are the records sorted by value and then record name, both
    /// ways, as after compaction; a query the merge does not serve (two sorts) agrees too.
    @Test func layeredTiesMergeByRecordID() async throws {
        var env = TestEnv()
        env.checkpointThreshold = 1_000_000
        let c = try env.open()
        let db = c.publicDatabase(as: .user("_u"))
        var live: [Int: Record] = [:]
        // Shrinking layers (a layer merges into the one before only when that one is no larger),
        // whose record names interleave in id order ("p10" < "p2").
        for ids in [Array(0..<120), Array(120..<160), Array(160..<172)] {
            let records = ids.map { place($0) }
            for (i, r) in zip(ids, records) { live[i] = r }
            _ = try await db.modifyRecords(saving: records, deleting: [])
            try c.checkpoint()
        }
        let table = try #require(c.embedded!.stateLock.withLock { c.embedded!.tables.values.flatMap(\.values).first })
        #expect((table.parts.base?.rows.layers.count ?? 0) >= 3)
        #expect(table.layersInIDOrder && !table.rowsInIDOrder)
        func n(_ r: Record) -> Int64 {
            if case .int64(let v) = r.fields["n"] { return v }
            return -1
        }
        func name(_ r: Record) -> String {
            if case .string(let v) = r.fields["name"] { return v }
            return ""
        }
        func want<T: Comparable>(_ key: (Record) -> T, ascending: Bool, _ keep: (Record) -> Bool) -> [String] {
            live.values.filter(keep).sorted { a, b in
                let x = key(a), y = key(b)
                if x != y { return ascending ? x < y : y < x }
                return a.recordID.recordName < b.recordID.recordName
            }.map(\.recordID.recordName)
        }
        let cases: [(RecordQuery, [String])] = [
            (
                RecordQuery(recordType: "Place", predicate: "n >= 2", sortDescriptors: [.field("n", ascending: true)]),
                want(n, ascending: true) { n($0) >= 2 }
            ),
            (
                RecordQuery(recordType: "Place", predicate: "n < 9", sortDescriptors: [.field("n", ascending: false)]),
                want(n, ascending: false) { n($0) < 9 }
            ),
            (
                RecordQuery(
                    recordType: "Place", predicate: "name BEGINSWITH 'place 1'",
                    sortDescriptors: [.field("name", ascending: true)]),
                want(name, ascending: true) { name($0).hasPrefix("place 1") }
            ),
        ]
        var layered: [[String]] = []
        for (q, expected) in cases {
            let got = try await pages(db, q)
            #expect(got == expected, "\(q.predicate) sorted on \(q.sortDescriptors)")
            layered.append(got)
        }
        let two = RecordQuery(
            recordType: "Place", predicate: "n < 4",
            sortDescriptors: [.field("n", ascending: true), .field("name", ascending: false)])
        let twoLayered = try await pages(db, two)
        try c.compact()
        for ((q, _), got) in zip(cases, layered) {
            #expect(try await pages(db, q) == got, "\(q.predicate) after compaction")
        }
        #expect(try await pages(db, two) == twoLayered, "two sorts after compaction")
    }
}
