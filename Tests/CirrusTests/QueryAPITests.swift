// The query API end to end: checked against the schema, planned and executed on the database's
// own snapshots, paged with cursors — against the full-scan oracle, across reopenings, concurrent
// writes, and bad tokens.

import CirrusTestSupport
import Foundation
import Indexes
import QueryChecker
import QueryExecution
import QueryPlanner
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct QueryAPITests {
    /// Saves `records` (zones created as needed); returns how many saves succeeded.
    @discardableResult
    func populate(_ db: Database, _ records: [Record]) async throws -> Int {
        for z in Set(records.map(\.recordID.zoneID)).sorted() where !z.isDefaultZone { _ = try await db.save(zone: z) }
        var saved = 0
        var i = 0
        while i < records.count {
            let batch = Array(records[i..<min(i + 300, records.count)])
            let result = try await db.modifyRecords(saving: batch, deleting: [], atomically: false)
            saved += result.saveResults.filter { (try? $0.1.get()) != nil }.count
            i += 300
        }
        return saved
    }

    /// The sorted names of the records in `saved` whose population `keep` accepts.
    func names(_ saved: [Record], population keep: (Int64) -> Bool) -> [String] {
        saved.filter { r in
            if case .int64(let p)? = r["population"] { return keep(p) }
            return false
        }.map(\.recordID.recordName).sorted()
    }

    func all(_ db: Database, _ q: RecordQuery, zone: ZoneID? = nil, pageSize: Int) async throws -> [String] {
        var (results, cursor) = try await db.records(matching: q, inZoneWith: zone, resultsLimit: pageSize)
        var names = try results.map { try $0.1.get().recordID.recordName }
        var guardCount = 0
        while let c = cursor, guardCount < 10_000 {
            #expect(results.count == pageSize, "a page followed by a cursor is full")
            (results, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: pageSize)
            names += try results.map { try $0.1.get().recordID.recordName }
            guardCount += 1
        }
        return names
    }

    @Test func randomQueriesThroughTheDatabaseMatchTheOracle() async throws {
        let seed = TestSeed.next()
        var gen = PlaceGenerator(rng: SeededRandom(seed: seed))
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        var unique: [RecordID: Record] = [:]
        for i in 0..<250 {
            let r = gen.record(i)
            unique[r.recordID] = r
        }
        let saved = try await populate(db, unique.values.sorted { $0.recordID < $1.recordID })
        let schema = db.schema.recordTypes["Place"]
        let stored = db.querySnapshot(recordType: "Place")!
        let records = stored.allRows().compactMap { stored.record($0) }
        // Saves whose values conflict with the field's just-in-time type (a DOUBLE into an INT64
        // field) are rejected, as on CloudKit; the oracle sees exactly what was stored.
        #expect(records.count == saved && saved > 0)
        for _ in 0..<30 {
            var format: [String] = []
            var args: [PredicateArgument] = []
            for _ in 0..<gen.rng.below(3) {
                let (f, a) = gen.filter()
                format.append(f)
                args += a
            }
            let q = RecordQuery(
                recordType: "Place", predicate: format.isEmpty ? "TRUEPREDICATE" : format.joined(separator: " AND "),
                arguments: args, sortDescriptors: gen.sorts())
            let zone: ZoneID? = gen.rng.chance(0.3) ? gen.zones[gen.rng.below(2)] : nil
            let checked = try QueryChecker.check(q.predicate, context: CheckContext(arguments: args))
            let expected = FullScan.results(
                Query(recordType: "Place", predicate: checked.predicate, sortDescriptors: q.sortDescriptors),
                records: records, schema: schema, zone: zone
            ).map(\.recordName)
            for pageSize in [1, 7, 50, 1000] {
                let got = try await all(db, q, zone: zone, pageSize: pageSize)
                #expect(
                    got == expected,
                    "seed \(seed), page size \(pageSize): \(q.predicate) \(q.sortDescriptors)\ngot      \(got)\nexpected \(expected)"
                )
            }
        }
    }

    func places(_ n: Int) -> [Record] {
        (0..<n).map { i in
            rec(
                String(format: "p%03d", i), "Place",
                [
                    "population": .int64(Int64(i)), "kind": .string(i % 3 == 0 ? "cafe" : "shop"),
                    "location": .location(Location(latitude: 48 + Double(i) / 1000, longitude: 2)),
                ])
        }
    }

    @Test func aCursorResumesAfterTheContainerIsReopened() async throws {
        let env = TestEnv()
        var container = try env.open(.development)
        try await populate(container.privateDatabase(for: "_u1"), places(30))
        let q = RecordQuery(
            recordType: "Place", predicate: "population >= 5", sortDescriptors: [.field("population", ascending: true)])
        let (first, cursor) = try await container.privateDatabase(for: "_u1").records(matching: q, resultsLimit: 10)
        #expect(first.map { $0.0.recordName } == (5..<15).map { String(format: "p%03d", $0) })
        let token = container.privateDatabase(for: "_u1").token(for: try #require(cursor))
        try container.close()
        container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let resumed = try db.cursor(fromToken: token)
        let (next, _) = try await db.records(continuingMatchFrom: resumed, resultsLimit: 10)
        #expect(next.map { $0.0.recordName } == (15..<25).map { String(format: "p%03d", $0) })
    }

    @Test func pagesNeitherDuplicateNorSkipUnchangedRecordsWhileOthersChange() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        try await populate(db, places(40))
        let q = RecordQuery(
            recordType: "Place", predicate: "kind == 'cafe'", sortDescriptors: [.field("population", ascending: true)])
        var (page, cursor) = try await db.records(matching: q, resultsLimit: 5)
        var seen = page.map { $0.0.recordName }
        // Between pages: insert a cafe before the position and one after, delete one not yet returned.
        _ = try await db.modifyRecords(
            saving: [
                rec("early", "Place", ["population": .int64(1), "kind": "cafe"]),
                rec("late", "Place", ["population": .int64(100), "kind": "cafe"]),
            ],
            deleting: [rid("p030")])
        while let c = cursor {
            (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: 5)
            seen += page.map { $0.0.recordName }
        }
        let unchanged = stride(from: 0, to: 40, by: 3).map { String(format: "p%03d", $0) }.filter { $0 != "p030" }
        #expect(seen.filter { $0.hasPrefix("p") } == unchanged)
        #expect(seen.contains("late"))
        #expect(!seen.contains("early"))
        #expect(Set(seen).count == seen.count)
    }

    @Test func tamperedForeignAndMismatchedTokensAreRejected() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let mine = container.privateDatabase(for: "_u1")
        let theirs = container.privateDatabase(for: "_u2")
        try await populate(mine, places(12))
        let q = RecordQuery(
            recordType: "Place", predicate: "population > 1", sortDescriptors: [.field("population", ascending: true)])
        let (_, cursor) = try await mine.records(matching: q, resultsLimit: 3)
        let token = mine.token(for: try #require(cursor))
        var tampered = Array(token.utf8)
        tampered[10] = tampered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(
            await code { try mine.cursor(fromToken: String(decoding: tampered, as: UTF8.self)) } == .invalidArguments)
        #expect(
            await caught { try theirs.cursor(fromToken: token) }?.message
                == "the cursor was not issued by this database, or it was altered")
        let other = RecordQuery(
            recordType: "Place", predicate: "population > 2", sortDescriptors: [.field("population", ascending: true)])
        #expect(
            await caught { try mine.cursor(fromToken: token, expecting: other) }?.message
                == "the cursor belongs to another query")
        #expect(try mine.cursor(fromToken: token, expecting: q).query.recordType == "Place")
        #expect(await code { try await theirs.records(continuingMatchFrom: try #require(cursor)) } == .invalidArguments)
    }

    @Test func productionEnforcesIndexOptionsExactly() async throws {
        let env = TestEnv()
        var container = try env.open(.development)
        try await populate(container.privateDatabase(for: "_u1"), places(3))
        try container.promoteSchema()
        try container.close()
        container = try env.open(.production)
        let db = container.privateDatabase(for: "_u1")
        try await populate(db, places(3))  // production holds its own data
        // Development created kind QUERYABLE SORTABLE SEARCHABLE; recordName has no index.
        #expect(
            await caught { try await db.records(matching: RecordQuery(recordType: "Place")) }?.message
                .contains("Field 'recordName' is not marked queryable") == true)
        #expect(
            try await db.records(matching: RecordQuery(recordType: "Place", predicate: "kind == 'cafe'")).matchResults
                .count == 1)
        #expect(
            await code { try await db.records(matching: RecordQuery(recordType: "Place", predicate: "nope == 1")) }
                == .invalidArguments)
        #expect(await code { try await db.records(matching: RecordQuery(recordType: "Users")) } == .invalidArguments)
    }

    @Test func developmentAnswersAndTheAdvisorSaysWhatProductionNeeds() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        try await populate(db, places(20))
        let q = RecordQuery(
            recordType: "Place", predicate: "kind == 'cafe'", sortDescriptors: [.field("population", ascending: false)])
        let e = try await db.explain(q, resultsLimit: 3)
        #expect(e.returned == 3)
        #expect(e.text.contains("actual"))
        #expect(e.text.contains("indexes:\n  + kind QUERYABLE  (EQUALS)\n  + population SORTABLE  (sort)\n"))
        #expect(
            try db.requiredIndexes(for: RecordQuery(recordType: "Place")).map(\.description) == [
                "recordName QUERYABLE  (TRUEPREDICATE lists the type)"
            ])
        let all = try await db.explain(RecordQuery(recordType: "Place"), execute: false)
        #expect(all.missingIndexes.map(\.field) == ["recordName"])
        #expect(all.actual.isEmpty)
    }

    @Test func desiredKeysAndZones() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let z = ZoneID(zoneName: "Trips")
        try await populate(db, places(4) + [rec("t1", "Place", zone: z, ["population": .int64(7), "kind": "cafe"])])
        let q = RecordQuery(recordType: "Place", predicate: "population >= 0")
        let inZone = try await db.records(matching: q, inZoneWith: z).matchResults
        #expect(inZone.map { $0.0.recordName } == ["t1"])
        let keys = try await db.records(matching: q, desiredKeys: ["kind"]).matchResults
        #expect(try keys.allSatisfy { try Set($0.1.get().fields.keys) == ["kind"] })
        let none = try await db.records(matching: q, desiredKeys: []).matchResults
        #expect(try none.allSatisfy { try $0.1.get().fields.isEmpty && $0.1.get().modificationDate != nil })
        #expect(await code { try await db.records(matching: q, inZoneWith: ZoneID(zoneName: "Nope")) } == .zoneNotFound)
        #expect(await code { try await container.publicDatabase.records(matching: q, inZoneWith: z) } == .badDatabase)
    }

    @Test func privateRecordsAreInvisibleToOtherUsers() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        try await populate(container.privateDatabase(for: "_u1"), places(5))
        let q = RecordQuery(recordType: "Place", predicate: "population >= 0")
        #expect(try await container.privateDatabase(for: "_u2").records(matching: q).matchResults.isEmpty)
        #expect(try await container.privateDatabase(for: "_u1").records(matching: q).matchResults.count == 5)
    }

    @Test func badPredicatesAreInvalidArgumentsWithTheCaret() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        try await populate(db, places(2))
        let e = await caught {
            try await db.records(matching: RecordQuery(recordType: "Place", predicate: "kind == 'a' OR kind == 'b'"))
        }
        #expect(e?.code == .invalidArguments)
        #expect(
            e?.message == """
                  kind == 'a' OR kind == 'b'
                              ^^
                error: OR predicates are not supported
                hint: CloudKit combines conditions only with AND: for alternatives of one field use IN (k IN {a, b}); otherwise run one query per alternative
                """)
    }
}

extension QueryAPITests {
    /// A text parsed once is reused with other arguments (same answers as a fresh parse, checked
    /// against the arguments of each call); a text that does not parse is never kept and fails
    /// the same way every time.
    @Test func parsedPredicatesAreReusedAndSyntaxErrorsAreNot() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let saved = places(40)
        try await populate(db, saved)
        let text = "population > %@"
        for bound in [Int64(-1), 10, 25, 39] {
            let q = RecordQuery(recordType: "Place", predicate: text, arguments: [.value(.int64(bound))])
            let got = try await all(db, q, pageSize: 7).sorted()
            let want = names(saved) { p in p > bound }
            #expect(got == want, "population > \(bound)")
        }
        #expect(db.embedded!.core.predicates.count == 1)
        // Another argument type against the same cached tree is still checked.
        let wrong = await caught {
            try await db.records(
                matching: RecordQuery(recordType: "Place", predicate: text, arguments: [.value(.string("x"))]))
        }
        #expect(wrong?.code == .invalidArguments)
        var messages: [String] = []
        for _ in 0..<2 {
            let e = await caught {
                try await db.records(matching: RecordQuery(recordType: "Place", predicate: "kind == "))
            }
            #expect(e?.code == .invalidArguments)
            messages.append(e?.message ?? "")
        }
        #expect(messages[0] == messages[1] && messages[0].contains("^"))
        #expect(db.embedded!.core.predicates.count == 1)
    }
}

extension QueryAPITests {
    /// A text's checked shape is kept per argument types and reused with new values (the same
    /// answers as a full check); a value the checker refuses is refused with the full check's
    /// message though a shape exists; a schema that changed is never checked through a shape made
    /// against the old one.
    @Test func checkedShapesAreReusedPerArgumentTypesAndNeverAcrossSchemas() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let saved = places(40)
        try await populate(db, saved)
        let cache = db.embedded!.core.predicates
        let text = "kind == %@ AND distanceToLocation:fromLocation:(location, %@) < %@"
        func want(_ kind: String, _ center: Location, _ km: Double) -> [String] {
            saved.filter { r in
                guard case .string(kind)? = r["kind"], case .location(let l)? = r["location"] else { return false }
                return GeoMath.distanceKm(
                    latitude1: l.latitude, longitude1: l.longitude, latitude2: center.latitude,
                    longitude2: center.longitude) < km
            }.map(\.recordID.recordName).sorted()
        }
        for (kind, km) in [("cafe", 5.0), ("shop", 2.0), ("cafe", 0.5), ("shop", 50.0)] {
            let center = Location(latitude: 48.01, longitude: 2)
            let q = RecordQuery(
                recordType: "Place", predicate: text,
                arguments: [.value(.string(kind)), .value(.location(center)), .value(.double(km))])
            let got = try await all(db, q, pageSize: 7).sorted()
            #expect(got == want(kind, center, km), "\(kind) within \(km) km")
            #expect(!got.isEmpty)
        }
        #expect(cache.shapeCount(text) == 1)
        // An INT64 radius is another shape; its answers are those of the same radius in DOUBLE.
        let center = Location(latitude: 48.02, longitude: 2)
        let int = RecordQuery(
            recordType: "Place", predicate: text,
            arguments: [.value(.string("cafe")), .value(.location(center)), .value(.int64(3))])
        #expect(try await all(db, int, pageSize: 50).sorted() == want("cafe", center, 3))
        #expect(cache.shapeCount(text) == 2)
        // Values a full check refuses are refused so, with its message.
        for bad: [PredicateArgument] in [
            [.value(.string("cafe")), .value(.location(center)), .value(.double(.nan))],
            [.value(.string("cafe")), .value(.location(Location(latitude: 91, longitude: 0))), .value(.double(1))],
        ] {
            let q = RecordQuery(recordType: "Place", predicate: text, arguments: bad)
            let e = await caught { try await db.records(matching: q) }
            let full = await caught { try DatabaseRules.check(q, schema: db.schema, now: Timestamp(Date())) }
            #expect(e?.code == .invalidArguments)
            #expect(e?.message == full?.message && full != nil)
        }
        // A save that grows the schema makes another schema value: the kept shape is not used
        // with it (its check runs in full and its shape replaces the old one).
        let before = db.schema
        let argumentShape = ArgumentShape(int.arguments)
        #expect(cache.shaped(text, recordType: "Place", schema: before, arguments: argumentShape)?.shape != nil)
        _ = try await db.save(rec("extra", "Place", ["kind": .string("cafe"), "newField": .int64(1)]))
        let grown = db.schema
        #expect(!grown.isIdentical(to: before))
        #expect(cache.shaped(text, recordType: "Place", schema: grown, arguments: argumentShape) == nil)
        #expect(try await all(db, int, pageSize: 50).sorted() == want("cafe", center, 3))
        #expect(cache.shaped(text, recordType: "Place", schema: grown, arguments: argumentShape)?.shape != nil)
        #expect(cache.shapeCount(text) == 2)
        // BETWEEN's two placeholders are each a bound's value: its shape is reused with new
        // values (an empty range included).
        let between = "population BETWEEN {%@, %@}"
        for (lo, hi) in [(Int64(3), Int64(9)), (20, 22), (9, 3)] {
            let q = RecordQuery(
                recordType: "Place", predicate: between, arguments: [.value(.int64(lo)), .value(.int64(hi))])
            let want = names(saved) { p in p >= lo && p <= hi }
            #expect(try await all(db, q, pageSize: 50).sorted() == want, "BETWEEN {\(lo), \(hi)}")
        }
        let kept = cache.shaped(
            between, recordType: "Place", schema: db.schema,
            arguments: ArgumentShape([.value(.int64(0)), .value(.int64(0))]))
        #expect(kept?.shape != nil)
        #expect(cache.shapeCount(between) == 1)
        // A text whose argument is changed on its way to the filter (negated) has no shape:
        // that is kept too, and every query of it is checked in full, with its own values.
        let negated = "population > -%@"
        for v in [Int64(-3), -20, 5] {
            let q = RecordQuery(recordType: "Place", predicate: negated, arguments: [.value(.int64(v))])
            let want = names(saved) { p in p > -v }
            #expect(try await all(db, q, pageSize: 50).sorted() == want, "> -(\(v))")
        }
        let unshaped = cache.shaped(
            negated, recordType: "Place", schema: db.schema, arguments: ArgumentShape([.value(.int64(0))]))
        #expect(unshaped != nil && unshaped?.shape == nil)
        #expect(cache.shapeCount(negated) == 1)
    }
}

@Suite struct NearestPagingTests {
    @Test func liveContinuationsAreUsedOnlyWhileNothingChanges() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let grid = (0..<200).map { i in
            rec(
                String(format: "g%03d", i), "Place",
                [
                    "location": .location(
                        Location(latitude: 10 + Double(i % 20) / 100, longitude: 20 + Double(i / 20) / 100))
                ])
        }
        _ = try await db.modifyRecords(saving: grid, deleting: [])
        let centre = Location(latitude: 10.05, longitude: 20.05)
        let q = RecordQuery(recordType: "Place", sortDescriptors: [.distance(field: "location", from: centre)])
        var (page, cursor) = try await db.records(matching: q, resultsLimit: 15)
        var seen = page.map { $0.0.recordName }
        #expect(db.embedded!.core.continuations.count == 1, "the first page leaves its live state behind")
        var step = 0
        while let c = cursor {
            step += 1
            if step == 4 {
                // A write between pages: the cached state is stale and must not be used.
                _ = try await db.modifyRecords(
                    saving: [rec("late", "Place", ["location": .location(Location(latitude: 10.9, longitude: 20.9))])],
                    deleting: [])
            }
            (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: 15)
            seen += page.map { $0.0.recordName }
        }
        func km(_ name: String) -> Double {
            let i = Int(name.dropFirst())!
            return GeoMathKm(
                centre, Location(latitude: 10 + Double(i % 20) / 100, longitude: 20 + Double(i / 20) / 100))
        }
        let expected = grid.map(\.recordID.recordName).sorted { (km($0), $0) < (km($1), $1) } + ["late"]
        #expect(seen == expected)
    }
}

extension QueryAPITests {
    /// A set plan's pages after the first go on from the rows ranked with the second page (the
    /// continuation), while nothing changes: every record once, in order — past the ranking's
    /// capacity too, where a page ranks again — and a write between pages is seen.
    @Test func setPlanPagesGoOnFromTheirRankingWhileNothingChanges() async throws {
        let env = TestEnv()
        let container = try env.open(.development)
        let db = container.privateDatabase(for: "_u1")
        let n = StreamContinuation.rankedCapacity + 900
        let records = (0..<n).map { i in
            rec(String(format: "r%05d", i), "Item", ["kind": .string(i % 2 == 0 ? "a" : "b"), "n": .int64(Int64(i))])
        }
        for start in stride(from: 0, to: n, by: 400) {
            _ = try await db.modifyRecords(saving: Array(records[start..<min(n, start + 400)]), deleting: [])
        }
        let q = RecordQuery(recordType: "Item", predicate: "kind IN {'a', 'b'}")
        var (page, cursor) = try await db.records(matching: q, resultsLimit: 300)
        var seen = page.map { $0.0.recordName }
        var step = 0
        while let c = cursor {
            step += 1
            if step == 2 {
                #expect(db.embedded!.core.continuations.count >= 1, "the second page leaves its ranking behind")
            }
            if step == 12 {
                // A write between pages: the ranking is stale and must not be used.
                _ = try await db.modifyRecords(saving: [rec("r99999", "Item", ["kind": .string("a")])], deleting: [])
            }
            (page, cursor) = try await db.records(continuingMatchFrom: c, resultsLimit: 300)
            seen += page.map { $0.0.recordName }
        }
        #expect(seen == records.map(\.recordID.recordName) + ["r99999"])
    }
}

func GeoMathKm(_ a: Location, _ b: Location) -> Double {
    GeoMath.distanceKm(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
}
