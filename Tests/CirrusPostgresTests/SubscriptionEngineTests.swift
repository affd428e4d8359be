// Subscriptions and notifications as a contract of the storage seam: the same calls give the same
// subscriptions, errors and notifications on the embedded engine and on PostgreSQL (where a
// write through one process notifies a stream opened in another: the last test opens two
// containers on one server). Every wait for notifications is bounded (`Inbox.first`), and what
// must not fire is checked by order: notifications arrive in commit order, so a sentinel that
// fires after a write that must not proves it did not.

import Cirrus
import CirrusTestSupport
import Foundation
import NIOConcurrencyHelpers
import RecordModel
import Testing

@testable import CirrusPostgres

/// Collects a notification stream in a task of its own; `first(_:within:)` waits, bounded, until
/// that many have arrived.
private final class Inbox: Sendable {
    private let received = NIOLockedValueBox<[RecordNotification]>([])
    private let ended = NIOLockedValueBox(false)
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<RecordNotification>) {
        let received = self.received
        let ended = self.ended
        task = Task {
            for await n in stream { received.withLockedValue { $0.append(n) } }
            ended.withLockedValue { $0 = true }
        }
    }

    /// Everything received so far.
    var all: [RecordNotification] { received.withLockedValue { $0 } }

    /// The first `count` notifications, or what arrived within `within` when fewer did (the
    /// caller's expectation then fails, showing them).
    func first(_ count: Int, within: Duration = .seconds(30)) async -> [RecordNotification] {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            let got = all
            if got.count >= count { return Array(got.prefix(count)) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return all
    }

    /// Whether the stream ended within `within`.
    func ends(within: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if ended.withLockedValue({ $0 }) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Stops consuming (the stream's consumer cancels).
    func stop() { task.cancel() }
}

private func record(
    _ name: String, _ type: String, _ fields: RecordFields, zone: ZoneID = .default
)
    -> Record
{
    Record(recordType: type, recordID: RecordID(recordName: name, zoneID: zone), fields: fields)
}

/// Whether `condition` holds within `within` (asked every 50 ms).
private func eventually(within: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + within
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

private func place(_ name: String, _ fields: RecordFields) -> Record { record(name, "Place", fields) }

@Suite(.serialized) struct SubscriptionEngineTests {
    @Test(arguments: Engine.available)
    func savingListingReplacingAndDeletingFollowTheRules(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let alice = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        try await alice.save(place("seed", ["kind": "cafe", "n": 1]))  // creates the schema
        let cafes = try await alice.save(
            Subscription(id: "cafes", recordType: "Place", predicate: "kind == %@", arguments: ["cafe"]))
        #expect(cafes.id == "cafes")
        _ = try await alice.save(Subscription(id: "big", recordType: "Place", predicate: "n > 5", firesOn: [.update]))
        #expect(try await alice.allSubscriptions().map(\.id) == ["big", "cafes"])
        // Saving an id in use replaces it.
        _ = try await alice.save(
            Subscription(
                id: "cafes", recordType: "Place", predicate: "kind == %@ AND n < %@", arguments: ["bar", 3],
                firesOn: [.deletion, .once]))
        let listed = try await alice.allSubscriptions()
        #expect(listed.map(\.id) == ["big", "cafes"])
        guard case .query(let type, let predicate, let args, let firesOn) = listed.last?.kind else {
            Issue.record("cafes is not a query subscription: \(String(describing: listed.last?.kind))")
            return
        }
        #expect(type == "Place" && predicate == "kind == %@ AND n < %@" && firesOn == [.deletion, .once])
        #expect(args == ["bar", 3])
        // A zone subscription needs its zone; it lists with the others.
        #expect(
            await code { try await alice.save(Subscription(id: "z", zoneID: ZoneID(zoneName: "Nope"))) }
                == .zoneNotFound)
        let zone = try await alice.save(zone: ZoneID(zoneName: "Trips"))
        _ = try await alice.save(Subscription(id: "z", zoneID: zone))
        #expect(try await alice.allSubscriptions().map(\.id) == ["big", "cafes", "z"])
        // Predicates are checked like queries.
        for (id, text) in [("or", "n == 1 OR n == 2"), ("bad", "n =="), ("field", "nope == 1")] {
            #expect(
                await code { try await alice.save(Subscription(id: id, recordType: "Place", predicate: text)) }
                    == .invalidArguments, "\(text)")
        }
        #expect(
            await code {
                try await alice.save(Subscription(id: "users", recordType: "Users", predicate: "TRUEPREDICATE"))
            } == .invalidArguments)
        // Deleting: once; another identity's or a missing id is unknownItem.
        try await alice.deleteSubscription(withID: "big")
        #expect(await code { try await alice.deleteSubscription(withID: "big") } == .unknownItem)
        #expect(try await alice.allSubscriptions().map(\.id) == ["cafes", "z"])
        // Somebody else's private database, and no signed-in user.
        let bobInAlices = try await f.database(.private(owner: "_alice"), as: .user("_bob"))
        #expect(
            await code { try await bobInAlices.save(Subscription(id: "x", zoneID: .default)) } == .permissionFailure)
        #expect(await code { try await bobInAlices.allSubscriptions() } == .permissionFailure)
        #expect(await code { try await bobInAlices.deleteSubscription(withID: "cafes") } == .permissionFailure)
        let anonymous = try await f.database(.public, as: .anonymous)
        #expect(
            await code {
                try await anonymous.save(Subscription(id: "a", recordType: "Place", predicate: "TRUEPREDICATE"))
            } == .notAuthenticated)
        // The public database: one name space, each id one user's.
        let alicePublic = try await f.database(.public, as: .user("_alice"))
        let bobPublic = try await f.database(.public, as: .user("_bob"))
        try await alicePublic.save(place("p", ["kind": "cafe"]))
        _ = try await alicePublic.save(Subscription(id: "shared", recordType: "Place", predicate: "TRUEPREDICATE"))
        #expect(
            await code {
                try await bobPublic.save(Subscription(id: "shared", recordType: "Place", predicate: "kind == 'x'"))
            } == .constraintViolation)
        #expect(await code { try await bobPublic.deleteSubscription(withID: "shared") } == .unknownItem)
        #expect(try await bobPublic.allSubscriptions().isEmpty)
        #expect(try await alicePublic.allSubscriptions().map(\.id) == ["shared"])
        #expect(
            await code { try await alicePublic.save(Subscription(id: "pz", zoneID: ZoneID(zoneName: "Trips"))) }
                == .badDatabase)
        // Alice's private subscriptions are not the public database's.
        #expect(try await alice.allSubscriptions().map(\.id) == ["cafes", "z"])
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func querySubscriptionsFireOnCreationUpdateAndDeletion(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        try await db.save(place("seed", ["kind": "cafe", "n": 1]))
        try await db.save(record("seedNote", "Note", ["n": 1]))
        _ = try await db.save(
            Subscription(
                id: "cafes", recordType: "Place", predicate: "kind == %@", arguments: ["cafe"],
                firesOn: [.creation, .deletion]))
        _ = try await db.save(Subscription(id: "big", recordType: "Place", predicate: "n > 5", firesOn: [.update]))
        _ = try await db.save(Subscription(id: "notes", recordType: "Note", predicate: "TRUEPREDICATE"))
        let inbox = Inbox(db.notifications())
        try await db.save(place("bar", ["kind": "bar", "n": 1]))  // matches nothing
        try await db.save(place("c1", ["kind": "cafe", "n": 1]))  // cafes: created
        var c1 = try await db.record(for: RecordID(recordName: "c1"))
        c1["n"] = 9
        c1 = try await db.save(c1)  // big: updated (now matches)
        c1["n"] = 2
        c1 = try await db.save(c1)  // big: updated (no longer matches)
        c1["kind"] = "tea"
        c1 = try await db.save(c1)  // matches neither before nor after for big; cafes ignores updates
        try await db.deleteRecord(withID: RecordID(recordName: "c1"))  // cafes matched before: no (kind tea)
        try await db.save(place("c2", ["kind": "cafe", "n": 1]))  // cafes: created
        try await db.deleteRecord(withID: RecordID(recordName: "c2"))  // cafes: deleted
        // One request, two changes, two subscriptions: in item order, then by subscription id.
        _ = try await db.modifyRecords(
            saving: [place("c3", ["kind": "cafe", "n": 7]), record("note", "Note", ["n": 1])], deleting: [])
        let got = await inbox.first(7)
        #expect(got.map(\.subscriptionID) == ["cafes", "big", "big", "cafes", "cafes", "cafes", "notes"])
        #expect(got.map(\.recordID.recordName) == ["c1", "c1", "c1", "c2", "c2", "c3", "note"])
        #expect(
            got.map(\.reason) == [
                .recordCreated, .recordUpdated, .recordUpdated, .recordCreated, .recordDeleted, .recordCreated,
                .recordCreated,
            ])
        #expect(got.first?.record?["kind"] == .string("cafe"))
        #expect(got.count > 4 && got[4].record == nil && got[4].recordType == "Place")
        #expect(got.count > 2 && got[2].record?["n"] == .int64(2))
        #expect(inbox.all.count == 7)
        #expect(try await db.allSubscriptions().map(\.id) == ["big", "cafes", "notes"])
        inbox.stop()
        #expect(await inbox.ends())
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func onceSubscriptionsAreRemovedAfterFiring(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        try await db.save(record("seed", "Note", ["n": 1]))
        try await db.save(record("seedMark", "Mark", ["n": 1]))
        _ = try await db.save(
            Subscription(id: "once", recordType: "Note", predicate: "n > 5", firesOn: [.creation, .once]))
        _ = try await db.save(Subscription(id: "sentinel", recordType: "Mark", predicate: "TRUEPREDICATE"))
        let inbox = Inbox(db.notifications())
        try await db.save(record("small", "Note", ["n": 1]))  // does not match: the subscription stays
        #expect(try await db.allSubscriptions().map(\.id) == ["once", "sentinel"])
        try await db.save(record("a", "Note", ["n": 9]))
        try await db.save(record("b", "Note", ["n": 9]))
        try await db.save(record("m", "Mark", ["n": 1]))
        let got = await inbox.first(2)
        #expect(got.map(\.subscriptionID) == ["once", "sentinel"])
        #expect(got.first?.recordID.recordName == "a")
        #expect(try await db.allSubscriptions().map(\.id) == ["sentinel"])
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func zoneSubscriptionsSeeTheirZoneAndGoWithIt(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        let db = try await f.database(.private(owner: "_alice"), as: .user("_alice"))
        let zone = try await db.save(zone: ZoneID(zoneName: "Z"))
        let other = try await db.save(zone: ZoneID(zoneName: "Other"))
        _ = try await db.save(Subscription(id: "z", zoneID: zone))
        _ = try await db.save(Subscription(id: "other", zoneID: other))
        let inbox = Inbox(db.notifications())
        try await db.save(record("outside", "Note", ["n": 1]))
        try await db.save(record("inside", "Note", ["n": 1], zone: zone))
        var inside = try await db.record(for: RecordID(recordName: "inside", zoneID: zone))
        inside["n"] = 2
        try await db.save(inside)
        try await db.deleteZone(zone)
        #expect(try await db.allSubscriptions().map(\.id) == ["other"])  // z went with its zone
        // A zone made again with the old name is not watched.
        let again = try await db.save(zone: ZoneID(zoneName: "Z"))
        try await db.save(record("later", "Note", ["n": 1], zone: again))
        try await db.save(record("sentinel", "Note", ["n": 1], zone: other))
        let got = await inbox.first(4)
        #expect(got.map(\.subscriptionID) == ["z", "z", "z", "other"])
        #expect(got.map(\.recordID.recordName) == ["inside", "inside", "inside", "sentinel"])
        #expect(got.map(\.reason) == [.recordCreated, .recordUpdated, .recordDeleted, .recordCreated])
        try await f.close()
    }

    @Test(arguments: Engine.available)
    func notificationsCarryOnlyWhatTheSubscriberMayRead(_ engine: Engine) async throws {
        let f = try await EngineFixture(engine)
        _ = try await f.container.applySchema(
            """
            DEFINE SCHEMA
            RECORD TYPE Diary (n INT64 QUERYABLE, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
            """)
        let bob = try await f.database(.public, as: .user("_bob"))
        let alice = try await f.database(.public, as: .user("_alice"))
        _ = try await bob.save(Subscription(id: "d", recordType: "Diary", predicate: "TRUEPREDICATE"))
        let bobs = Inbox(bob.notifications())
        let alices = Inbox(alice.notifications())  // Alice has no subscription: nothing for her
        try await alice.save(record("alices", "Diary", ["n": 1]))
        try await bob.save(record("bobs", "Diary", ["n": 1]))
        let got = await bobs.first(1)
        #expect(got.map(\.recordID.recordName) == ["bobs"])
        #expect(alices.all.isEmpty)
        // Bob's subscription and stream see nothing of a private database.
        let private_ = try await f.database(.private(owner: "_bob"), as: .user("_bob"))
        try await private_.save(record("mine", "Diary", ["n": 2]))
        try await bob.save(record("bobs2", "Diary", ["n": 1]))
        #expect(await bobs.first(2).map(\.recordID.recordName) == ["bobs", "bobs2"])
        try await f.close()
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func aWriteThroughOneProcessNotifiesAStreamOpenedInAnother() async throws {
        // Two containers on one URL: two pools and two listeners, as two `cirrus serve` processes.
        let id = PG.freshContainer("subs")
        let listening = try await Container.open(postgres: PG.url!, containerID: id)
        let writing = try await Container.open(postgres: PG.url!, containerID: id)
        let here = listening.privateDatabase(for: "_alice")
        let there = writing.privateDatabase(for: "_alice")
        try await there.save(place("seed", ["kind": "cafe", "n": 1]))
        try await listening.postgres?.reloadSchema()
        _ = try await here.save(Subscription(id: "cafes", recordType: "Place", predicate: "kind == 'cafe'"))
        _ = try await there.save(
            Subscription(id: "once", recordType: "Place", predicate: "n > 100", firesOn: [.creation, .once]))
        let inbox = Inbox(here.notifications())
        // A write of this process after the stream opened is delivered: it proves the stream is
        // listening, so what the other process commits from now on must arrive.
        try await here.save(place("local", ["kind": "cafe", "n": 1]))
        #expect(await inbox.first(1).map(\.recordID.recordName) == ["local"])
        try await there.save(place("remote1", ["kind": "cafe", "n": 1]))
        _ = try await there.modifyRecords(
            saving: [place("remote2", ["kind": "cafe", "n": 500]), place("remote3", ["kind": "cafe", "n": 500])],
            deleting: [RecordID(recordName: "local")])
        // In one commit a `once` subscription fires for each change it matches (as on the
        // embedded engine: it is removed after the commit it fires on).
        let got = await inbox.first(7)
        #expect(
            got.map { "\($0.subscriptionID):\($0.recordID.recordName)" } == [
                "cafes:local", "cafes:remote1", "cafes:remote2", "once:remote2", "cafes:remote3", "once:remote3",
                "cafes:local",
            ])
        #expect(got.last?.reason == .recordDeleted && got.last?.record == nil)
        #expect(try await there.allSubscriptions().map(\.id) == ["cafes"])  // once fired in the other process
        #expect(try await here.allSubscriptions().map(\.id) == ["cafes"])
        // A stream of the writing process sees its own writes and then the other's.
        let second = Inbox(there.notifications())
        try await there.save(place("fromThere", ["kind": "cafe", "n": 1]))
        #expect(await second.first(1).map(\.recordID.recordName) == ["fromThere"])
        try await here.save(place("fromHere", ["kind": "cafe", "n": 1]))
        #expect(await second.first(2).map(\.recordID.recordName) == ["fromThere", "fromHere"])
        #expect(await inbox.first(9).suffix(2).map(\.recordID.recordName) == ["fromThere", "fromHere"])
        // Closing a container ends its streams.
        try listening.close()
        #expect(await inbox.ends())
        second.stop()
        #expect(await second.ends())
        try writing.close()
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func theListenerComesBackWhenItsSessionEndsAndGoesWithTheLastStream() async throws {
        let id = PG.freshContainer("listen")
        let container = try await Container.open(postgres: PG.url!, containerID: id)
        let db = container.privateDatabase(for: "_alice")
        try await db.save(place("seed", ["kind": "cafe"]))
        _ = try await db.save(Subscription(id: "all", recordType: "Place", predicate: "TRUEPREDICATE"))
        let admin = try await PG.store(PG.freshContainer("admin"))
        let name =
            "cirrus listen " + PostgresTenant(containerID: id, environment: .development, database: .public).namespace
        func listeners() async throws -> Int64 {
            try await admin.run("counting listeners") { client in
                var n: Int64 = 0
                for try await c in try await client.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = left(\(name), 63)"
                ).decode(Int64.self) { n = c }
                return n
            }
        }
        #expect(try await listeners() == 0)  // no stream, no connection
        let inbox = Inbox(db.notifications())
        try await db.save(place("a", ["kind": "cafe"]))
        #expect(await inbox.first(1).map(\.recordID.recordName) == ["a"])
        #expect(try await listeners() == 1)
        // The listener's session is ended by an administrator: a write meanwhile is not lost (the
        // stream reads the outbox when the listener is back), and later writes arrive as before.
        try await admin.run("ending the listener's session") { client in
            for try await _ in try await client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = left(\(name), 63)")
            {}
        }
        try await db.save(place("b", ["kind": "cafe"]))
        #expect(await inbox.first(2).map(\.recordID.recordName) == ["a", "b"])
        #expect(try await eventually { try await listeners() == 1 })
        try await db.save(place("c", ["kind": "cafe"]))
        #expect(await inbox.first(3).map(\.recordID.recordName) == ["a", "b", "c"])
        // Its consumer stops: the stream ends and, the last one, closes the connection.
        inbox.stop()
        #expect(await inbox.ends())
        #expect(try await eventually { try await listeners() == 0 })
        try container.close()
        await admin.close()
    }

    @Test(.enabled(if: PG.available, PG.disabledReason))
    func concurrentWritesOfTwoProcessesArriveOnceEachInCommitOrder() async throws {
        let id = PG.freshContainer("order")
        let first = try await Container.open(postgres: PG.url!, containerID: id)
        let second = try await Container.open(postgres: PG.url!, containerID: id)
        let alice = first.publicDatabase(as: .user("_alice"))
        let bob = second.publicDatabase(as: .user("_bob"))
        try await alice.save(place("seed", ["kind": "cafe", "n": 0]))
        try await second.postgres?.reloadSchema()
        _ = try await alice.save(
            Subscription(id: "new", recordType: "Place", predicate: "TRUEPREDICATE", firesOn: [.creation]))
        let inbox = Inbox(alice.notifications())
        try await alice.save(place("start", ["kind": "cafe", "n": 0]))
        #expect(await inbox.first(1).map(\.recordID.recordName) == ["start"])
        // Two processes create 25 records each at the same time.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (db, prefix) in [(alice, "a"), (bob, "b")] {
                group.addTask {
                    for i in 0..<25 {
                        try await db.save(place("\(prefix)\(i)", ["kind": "cafe", "n": .int64(Int64(i))]))
                    }
                }
            }
            try await group.waitForAll()
        }
        let got = await inbox.first(51)
        let names = got.map(\.recordID.recordName)
        #expect(names.count == 51 && Set(names).count == 51)
        #expect(Set(names) == Set(["start"] + (0..<25).flatMap { ["a\($0)", "b\($0)"] }))
        // Commit order: a record's change tag is its tenant's request sequence (base 36).
        let sequences = got.compactMap { $0.record?.recordChangeTag.flatMap { Int64($0, radix: 36) } }
        #expect(sequences.count == 51 && sequences == sequences.sorted(), "\(sequences)")
        try first.close()
        try second.close()
    }
}
