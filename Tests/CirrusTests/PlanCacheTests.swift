// The plan cache: a query asked again on an unchanged table runs the plan made for it before;
// any change of the table (a commit) or of the schema (an index added) makes the next run plan
// afresh, and answers are always those of a fresh plan.

import CirrusTestSupport
import Foundation
import QueryPlanner
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

@Suite struct PlanCacheTests {
    func names(_ db: Database, _ q: RecordQuery, limit: Int = 0) async throws -> [String] {
        try await db.records(matching: q, resultsLimit: limit).matchResults.map { try $0.1.get().recordID.recordName }
    }

    func kinds(_ n: Int) -> [Record] {
        (0..<n).map { i in
            rec(
                String(format: "p%03d", i), "Place",
                ["kind": .string(i % 4 == 0 ? "cafe" : "bar"), "population": .int64(Int64(i))])
        }
    }

    @Test func aRepeatedQueryRunsItsKeptPlanUntilTheTableChanges() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        _ = try await db.modifyRecords(saving: kinds(40), deleting: [])
        let plans = try #require(db.embedded).core.plans
        let cafes = RecordQuery(recordType: "Place", predicate: "kind == %@", arguments: ["cafe"])
        let first = try await names(db, cafes)
        #expect(first.count == 10)
        #expect(plans.counts == (hits: 0, misses: 1) && plans.count == 0, "asked once: nothing kept")
        #expect(try await names(db, cafes) == first)
        #expect(plans.counts == (hits: 0, misses: 2) && plans.count == 1, "asked again: kept")
        #expect(try await names(db, cafes) == first)
        #expect(plans.counts == (hits: 1, misses: 2), "the same query on the same table: the kept plan")
        // Values are part of what is kept: another value is planned for itself.
        let bars = RecordQuery(recordType: "Place", predicate: "kind == 'bar'")
        for _ in 0..<3 { #expect(try await names(db, bars).count == 30) }
        #expect(plans.counts == (hits: 2, misses: 4) && plans.count == 2)
        // So is the page size.
        #expect(try await names(db, cafes, limit: 3) == Array(first.prefix(3)))
        #expect(plans.counts == (hits: 2, misses: 5))
        // A commit changes the table: planned again (and kept again at once: the query was kept
        // before), and the new record is in the answer.
        _ = try await db.save(rec("p999", "Place", ["kind": "cafe", "population": 7]))
        #expect(try await names(db, cafes) == first + ["p999"])
        #expect(plans.counts == (hits: 2, misses: 6))
        #expect(try await names(db, cafes) == first + ["p999"])
        #expect(plans.counts == (hits: 3, misses: 6))
        // Another user's database has tables of its own: nothing is shared with it.
        let other = container.privateDatabase(for: "_u2")
        #expect(try await names(other, cafes).isEmpty)
        #expect(plans.counts == (hits: 3, misses: 7))
    }

    /// From its second run a query is kept by its text as well (its check skipped from the
    /// third); the zone is not part of what is kept, and who asks is not either: each run still
    /// checks the zone it names and whether its caller may read, and filters what they may not.
    @Test func aQueryKeptByItsTextStillChecksItsZoneAndItsCaller() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        let (a, b) = (ZoneID(zoneName: "A"), ZoneID(zoneName: "B"))
        try await db.save(zone: a)
        try await db.save(zone: b)
        _ = try await db.modifyRecords(
            saving: (0..<6).map { i in rec("r\(i)", "Item", zone: i < 4 ? a : b, ["n": .int64(Int64(i))]) },
            deleting: [])
        let plans = try #require(db.embedded).core.plans
        let q = RecordQuery(recordType: "Item", predicate: "n >= %@", arguments: [.value(.int64(1))])
        func names(in zone: ZoneID?) async throws -> [String] {
            try await db.records(matching: q, inZoneWith: zone).matchResults.map { try $0.1.get().recordID.recordName }
        }
        for _ in 0..<3 { #expect(try await names(in: a) == ["r1", "r2", "r3"]) }
        #expect(plans.preparedCount == 1 && plans.counts == (hits: 1, misses: 2), "the third run: kept by its text")
        #expect(try await names(in: b) == ["r4", "r5"])
        #expect(try await names(in: nil) == ["r1", "r2", "r3", "r4", "r5"])
        #expect(plans.counts == (hits: 3, misses: 2), "the zone is not part of what is kept")
        #expect(await code { try await names(in: ZoneID(zoneName: "C")) } == .zoneNotFound)
        #expect(await code { try await names(in: ZoneID(zoneName: "A", ownerName: "_u2")) } == .permissionFailure)
        // The public database: one set of tables for every caller, so one kept query for them all.
        let owner = container.publicDatabase(as: .user("_owner"))
        let outsider = container.publicDatabase(as: .user("_outsider"))
        try container.revoke([.read], on: "Item", from: Grant.world)
        try container.grant([.read], on: "Item", to: Grant.creator)
        try await owner.save(rec("o1", "Item", ["n": 5]))
        try await outsider.save(rec("x1", "Item", ["n": 6]))
        let publicPlans = try #require(owner.embedded).core.plans
        func names(_ db: Database) async throws -> [String] {
            try await db.records(matching: q).matchResults.map { try $0.1.get().recordID.recordName }
        }
        for _ in 0..<3 { #expect(try await names(owner) == ["o1"]) }
        let hits = publicPlans.counts.hits
        #expect(try await names(outsider) == ["x1"], "kept by its text, still filtered for its caller")
        #expect(await code { try await names(container.publicDatabase) } == .notAuthenticated)
        #expect(publicPlans.counts.hits == hits + 2, "both found the query kept, and were checked")
    }

    /// A circle whose centre and radius are both arguments (as applications write it) is kept
    /// by its text from its second run, like any other query.
    @Test func aCircleWithItsRadiusAsAnArgumentIsKeptByItsText() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        _ = try await db.modifyRecords(
            saving: (0..<10).map { i in
                rec(
                    "l\(i)", "Place",
                    ["location": .location(Location(latitude: 48.85 + Double(i) / 100, longitude: 2.35))])
            }, deleting: [])
        let plans = try #require(db.embedded).core.plans
        let q = RecordQuery(
            recordType: "Place", predicate: "distanceToLocation:fromLocation:(location, %@) < %@",
            arguments: [.value(.location(Location(latitude: 48.85, longitude: 2.35))), .value(.double(3))])
        for _ in 0..<5 { #expect(Set(try await names(db, q)) == ["l0", "l1", "l2"]) }
        #expect(plans.preparedCount == 1 && plans.counts == (hits: 3, misses: 2), "\(plans.counts)")
    }

    /// Two hundred circles asked in turn, round after round (as an application's screens
    /// refresh): each is planned in its first two rounds, then kept.
    @Test func manyCirclesAskedInTurnAreEachKept() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        _ = try await db.modifyRecords(
            saving: (0..<50).map { i in
                rec("l\(i)", "Place", ["location": .location(Location(latitude: Double(i), longitude: 2.35))])
            }, deleting: [])
        let plans = try #require(db.embedded).core.plans
        let queries = (0..<200).map { i in
            RecordQuery(
                recordType: "Place", predicate: "distanceToLocation:fromLocation:(location, %@) < %@",
                arguments: [.value(.location(Location(latitude: Double(i) / 4, longitude: 2.35))), .value(.double(1))])
        }
        for _ in 0..<5 {
            for (i, q) in queries.enumerated() {
                #expect(try await names(db, q) == (i % 4 == 0 && i / 4 < 50 ? ["l\(i / 4)"] : []))
            }
        }
        #expect(plans.counts == (hits: 600, misses: 400), "\(plans.counts)")
    }

    @Test func queriesAskedOnceKeepNoPlan() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        _ = try await db.modifyRecords(saving: kinds(40), deleting: [])
        let plans = try #require(db.embedded).core.plans
        for i in 0..<200 {
            let q = RecordQuery(
                recordType: "Place", predicate: "population == %@", arguments: [.value(.int64(Int64(i)))])
            #expect(try await names(db, q) == (i < 40 ? [String(format: "p%03d", i)] : []))
        }
        #expect(plans.counts == (hits: 0, misses: 200))
        #expect(plans.count == 0, "none asked twice: none kept (\(plans.count))")
    }

    @Test func anIndexAddedToTheSchemaIsUsedByTheNextRunOfAKeptQuery() async throws {
        let container = try TestEnv().open(.development)
        let grants = "GRANT WRITE TO \"_creator\", GRANT CREATE TO \"_icloud\", GRANT READ TO \"_world\""
        try container.importSchema("DEFINE SCHEMA RECORD TYPE Item (n INT64, \(grants));")
        let db = container.privateDatabase(for: "_u1")
        let items = (0..<50).map { i in rec(String(format: "i%02d", i), "Item", ["n": .int64(Int64(i % 10))]) }
        _ = try await db.modifyRecords(saving: items, deleting: [])
        let embedded = try #require(db.embedded)
        let q = RecordQuery(recordType: "Item", predicate: "n == 3")
        func plan() throws -> QueryPlan {
            let checked = try embedded.check(q).0
            return embedded.plan(
                checked, embedded.querySnapshot(recordType: "Item"), limit: EmbeddedDatabase.defaultResultsLimit
            ).0
        }
        let want = ["i03", "i13", "i23", "i33", "i43"]
        #expect(try await names(db, q) == want)
        #expect(try await names(db, q) == want)  // kept from the second run
        #expect(try plan().root.allNodes.contains { $0.op == .fullScan }, "no index on n: a full scan")
        #expect(embedded.core.plans.counts == (hits: 1, misses: 2), "plan() found the plan the query ran")
        try container.importSchema("DEFINE SCHEMA RECORD TYPE Item (n INT64 QUERYABLE, \(grants));")
        #expect(try await names(db, q) == want)
        let indexed = try plan()
        #expect(!indexed.root.allNodes.contains { $0.op == .fullScan }, "the new index is used: \(indexed.explain())")
        #expect(
            indexed.root.allNodes.contains { if case .indexScan(field: "n", _, _, _) = $0.op { true } else { false } })
        #expect(embedded.core.plans.counts == (hits: 2, misses: 3), "the new version: planned again, kept at once")
    }

    /// A query with a circle is kept like any other: the kept plan's execution searches the
    /// circle itself (the first run read the rows its planning found) and answers alike; a
    /// commit that puts a record in the circle makes the next run plan again and find it.
    @Test func queriesWithACircleAreKeptAndSearchTheirCircleAgain() async throws {
        let container = try TestEnv().open(.development)
        let db = container.privateDatabase(for: "_u1")
        let here = Location(latitude: 48.85, longitude: 2.35)
        func place(_ name: String, _ dLat: Double, kind: String) -> Record {
            rec(
                name, "Place",
                ["location": .location(Location(latitude: 48.85 + dLat, longitude: 2.35)), "kind": .string(kind)])
        }
        _ = try await db.modifyRecords(
            saving: (0..<10).map { i in place("l\(i)", Double(i) / 100, kind: i % 2 == 0 ? "cafe" : "bar") },
            deleting: [])
        let plans = try #require(db.embedded).core.plans
        let q = RecordQuery(
            recordType: "Place", predicate: "distanceToLocation:fromLocation:(location, %@) < 3",
            arguments: [.value(.location(here))])
        let cafes = RecordQuery(
            recordType: "Place", predicate: "distanceToLocation:fromLocation:(location, %@) < 3 AND kind == 'cafe'",
            arguments: [.value(.location(here))])
        let circle = try await names(db, q)
        #expect(Set(circle) == ["l0", "l1", "l2"])
        #expect(Set(try await names(db, cafes)) == ["l0", "l2"])
        #expect(plans.counts == (hits: 0, misses: 2) && plans.count == 0, "asked once each: nothing kept")
        for _ in 0..<3 {
            #expect(try await names(db, q) == circle)
            #expect(Set(try await names(db, cafes)) == ["l0", "l2"])
        }
        #expect(plans.counts == (hits: 4, misses: 4) && plans.count == 2, "kept from the second run")
        _ = try await db.save(place("new", 0.005, kind: "cafe"))
        #expect(Set(try await names(db, q)) == Set(circle + ["new"]))
        #expect(Set(try await names(db, cafes)) == ["l0", "l2", "new"])
        #expect(Set(try await names(db, q)) == Set(circle + ["new"]))
        #expect(plans.counts == (hits: 5, misses: 6), "the new version planned again, then the kept plan")
    }
}
