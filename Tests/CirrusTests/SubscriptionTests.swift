// Subscriptions: query subscriptions fire on creation / update / deletion of matching records
// (RecordMatcher decides), once-only subscriptions are removed after their first notification,
// zone subscriptions fire on every change in their zone, predicates are checked like queries,
// and notifications arrive after the commit, in commit order.

import CirrusTestSupport
import RecordModel
import Testing

@testable import CirrusEmbedded
@testable import CirrusFacade

private let alice = "_alice"

/// Collects what has been delivered so far (the stream yields synchronously during the commit).
func drain(_ stream: AsyncStream<RecordNotification>, count: Int) async -> [RecordNotification] {
    var out: [RecordNotification] = []
    var it = stream.makeAsyncIterator()
    while out.count < count, let n = await it.next() { out.append(n) }
    return out
}

@Suite struct SubscriptionTests {
    @Test func querySubscriptionFiresOnMatchingChanges() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("seed", "Place", ["kind": "cafe", "n": 1]))  // creates the schema
        _ = try await db.save(
            Subscription(
                id: "cafes", recordType: "Place", predicate: "kind == %@", arguments: ["cafe"],
                firesOn: [.creation, .deletion]))
        _ = try await db.save(Subscription(id: "big", recordType: "Place", predicate: "n > 5", firesOn: [.update]))
        let stream = db.notifications()
        try await db.save(rec("bar", "Place", ["kind": "bar", "n": 1]))  // matches nothing
        try await db.save(rec("c1", "Place", ["kind": "cafe", "n": 1]))  // cafes: created
        var c1 = try await db.record(for: rid("c1", zone: .default))
        c1["n"] = 9
        try await db.save(c1)  // big: updated (now matches)
        try await db.deleteRecord(withID: rid("c1"))  // cafes: deleted
        let got = await drain(stream, count: 3)
        #expect(got.map(\.subscriptionID) == ["cafes", "big", "cafes"])
        #expect(got.map(\.reason) == [.recordCreated, .recordUpdated, .recordDeleted])
        #expect(got[0].record?["kind"] == "cafe")
        #expect(got[2].record == nil)
        #expect(try await db.allSubscriptions().map(\.id) == ["big", "cafes"])
    }

    @Test func onceSubscriptionsAreRemovedAfterFiring() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("seed", ["n": 1]))
        _ = try await db.save(
            Subscription(id: "once", recordType: "Note", predicate: "TRUEPREDICATE", firesOn: [.creation, .once]))
        let stream = db.notifications()
        try await db.save(rec("a", ["n": 1]))
        try await db.save(rec("b", ["n": 1]))
        let got = await drain(stream, count: 1)
        #expect(got.map(\.recordID.recordName) == ["a"])
        #expect(try await db.allSubscriptions().isEmpty)
    }

    @Test func zoneSubscriptionsSeeEveryChangeInTheZone() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        _ = try await db.save(Subscription(id: "z", zoneID: z))
        let stream = db.notifications()
        try await db.save(rec("outside"))
        try await db.save(rec("inside", zone: z))
        try await db.deleteZone(z)
        let got = await drain(stream, count: 2)
        #expect(got.map(\.recordID.recordName) == ["inside", "inside"])
        #expect(got.map(\.reason) == [.recordCreated, .recordDeleted])
        #expect(try await db.allSubscriptions().isEmpty)  // the zone's subscription went with it
    }

    @Test func subscriptionPredicatesAreCheckedLikeQueries() async throws {
        let c = try TestEnv().open()
        let db = c.privateDatabase(for: alice)
        try await db.save(rec("seed", ["n": 1]))
        #expect(
            await code { try await db.save(Subscription(id: "or", recordType: "Note", predicate: "n == 1 OR n == 2")) }
                == .invalidArguments)
        #expect(
            await code { try await db.save(Subscription(id: "bad", recordType: "Note", predicate: "n ==")) }
                == .invalidArguments)
        #expect(
            await code { try await db.save(Subscription(id: "users", recordType: "Users", predicate: "TRUEPREDICATE")) }
                == .invalidArguments)
        #expect(
            await code { try await db.save(Subscription(id: "z", zoneID: ZoneID(zoneName: "Nope"))) } == .zoneNotFound)
        #expect(await code { try await db.deleteSubscription(withID: "nope") } == .unknownItem)
    }

    @Test func publicSubscriptionsDeliverOnlyWhatTheSubscriberMayRead() async throws {
        let c = try TestEnv().open()
        try c.importSchema(
            """
            DEFINE SCHEMA
            RECORD TYPE Diary (n INT64 QUERYABLE, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            """)
        let bob = c.publicDatabase(as: .user("_bob"))
        _ = try await bob.save(Subscription(id: "d", recordType: "Diary", predicate: "TRUEPREDICATE"))
        let stream = bob.notifications()
        try await c.publicDatabase(as: .user(alice)).save(rec("alices", "Diary", ["n": 1]))
        try await bob.save(rec("bobs", "Diary", ["n": 1]))
        let got = await drain(stream, count: 1)
        #expect(got.map(\.recordID.recordName) == ["bobs"])
    }

    @Test func subscriptionsSurviveReopening() async throws {
        let env = TestEnv()
        var c = try env.open()
        var db = c.privateDatabase(for: alice)
        let z = try await db.save(zone: ZoneID(zoneName: "Z"))
        try await db.save(
            rec("seed", "Place", ["kind": "cafe", "loc": .location(Location(latitude: 1, longitude: 2))]))
        _ = try await db.save(
            Subscription(
                id: "near", recordType: "Place",
                predicate: "kind == %@ AND distanceToLocation:fromLocation:(loc, %@) < 10",
                arguments: ["cafe", .value(.location(Location(latitude: 1, longitude: 2)))],
                firesOn: [.creation, .once]))
        _ = try await db.save(Subscription(id: "z", zoneID: z))
        try c.close()
        c = try env.open()
        db = c.privateDatabase(for: alice)
        #expect(try await db.allSubscriptions().map(\.id) == ["near", "z"])
        let stream = db.notifications()
        try await db.save(
            rec("far", "Place", ["kind": "cafe", "loc": .location(Location(latitude: 40, longitude: 2))]))
        try await db.save(
            rec("close", "Place", ["kind": "cafe", "loc": .location(Location(latitude: 1.01, longitude: 2))]))
        let got = await drain(stream, count: 1)
        #expect(got.map(\.recordID.recordName) == ["close"])
        #expect(try await db.allSubscriptions().map(\.id) == ["z"])  // the once subscription fired
        try c.close()
        #expect(try await env.open().privateDatabase(for: alice).allSubscriptions().map(\.id) == ["z"])
    }
}
