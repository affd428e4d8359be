// Isolation: a private database is visible only to its owner. Every API call is tried on
// alice's private database on behalf of bob and of nobody, and through bob's own database with
// ids naming alice's zones; each must fail (or see only bob's data) and change nothing. Run on
// every engine this run reaches (`Engine.available`), with the same assertions; each test opens
// a fresh container (on PostgreSQL its own container id) and closes it.
//
// Embedded-only, in Tests/CirrusTests/IsolationTests.swift: cursorSecretsArePersistedWithTheFirstCommit,
// which reopens a container directory read-only (a directory engine option). PostgreSQL keeps
// the secret in the server from the container's first open (`cirrus_secrets`); EngineTests'
// twoProcessesServeOneContainer checks that two opens sign and accept the same cursors.
//
// Query snapshots (`Database.querySnapshot`) are the embedded engine's rows in this process and
// nil on PostgreSQL: where the embedded tests counted a snapshot's rows, the count is asserted
// on the snapshot (embedded) and through a query or a fetch (both engines).
//
// Subscriptions, notifications and assets are part of every private database's isolation, on
// both engines; alice's setup records a failure and goes on, so that one broken feature does not
// hide the record, zone and change-token checks.

import Cirrus
import CirrusPostgres
import CirrusTestSupport
import RecordModel
import Testing

private let alice = "_alice"
private let bob = "_bob"

/// The Note records `db` finds with a query (every zone), by name.
private func notes(in db: Database) async throws -> [String] {
    let q = RecordQuery(recordType: "Note", predicate: "TRUEPREDICATE")
    return try await db.records(matching: q, resultsLimit: 400).matchResults.map(\.0.recordName).sorted()
}

@Suite(.serialized) struct EngineIsolationTests {
    /// Runs `body` on a container of `engine` where alice has a record in her default zone and
    /// in zone Z, and a subscription.
    func withAlice(_ engine: Engine, _ body: (EngineFixture, ZoneID) async throws -> Void) async throws {
        try await withFixture(engine) { f in
            let db = f.container.privateDatabase(for: alice)
            let z = try await db.save(zone: ZoneID(zoneName: "Z"))
            try await db.save(rec("secret", ["text": "alice only"]))
            try await db.save(rec("zsecret", zone: z, ["text": "alice zone"]))
            // A failed subscription is an issue, not the end of the test: the record and zone
            // checks still run (on an engine without subscriptions, the subscription checks fail).
            let subscribed = await attempt {
                try await db.save(Subscription(id: "s", recordType: "Note", predicate: "TRUEPREDICATE"))
            }
            #expect(subscribed.errorCode == nil, "alice's subscription on \(engine): \(subscribed)")
            try await body(f, z)
        }
    }

    @Test(arguments: Engine.available, [Identity.user(bob), Identity.anonymous])
    func everyCallOnAnothersPrivateDatabaseFails(_ engine: Engine, _ who: Identity) async throws {
        try await withAlice(engine) { f, z in
            let c = f.container
            let intruder = c.privateDatabase(for: alice).acting(as: who)
            let expected: CirrusError.Code = who == .anonymous ? .notAuthenticated : .permissionFailure
            var r = rec("secret", ["text": "bob was here"])
            r.recordChangeTag = try await c.privateDatabase(for: alice).record(for: rid("secret")).recordChangeTag
            let calls: [(String, () async throws -> Any)] = [
                ("record(for:)", { try await intruder.record(for: rid("secret")) }),
                ("records(for:)", { try await intruder.records(for: [rid("secret")]) }),
                ("save", { try await intruder.save(r) }),
                ("save allKeys", { try await intruder.save(r, savePolicy: .allKeys) }),
                (
                    "modifyRecords",
                    { try await intruder.modifyRecords(saving: [r], deleting: [rid("zsecret", zone: z)]) }
                ),
                ("deleteRecord", { try await intruder.deleteRecord(withID: rid("secret")) }),
                ("save(zone:)", { try await intruder.save(zone: ZoneID(zoneName: "Y")) }),
                ("deleteZone", { try await intruder.deleteZone(z) }),
                ("allZones", { try await intruder.allZones() }),
                ("changes", { try await intruder.changes(in: z, since: nil) }),
                ("checkCanRead", { try intruder.checkCanRead(recordType: "Note") }),
                ("save(subscription)", { try await intruder.save(Subscription(id: "t", zoneID: z)) }),
                ("deleteSubscription", { try await intruder.deleteSubscription(withID: "s") }),
                ("allSubscriptions", { try await intruder.allSubscriptions() }),
                ("storeAsset", { try await intruder.storeAsset([1, 2, 3]) }),
            ]
            for (name, call) in calls {
                let got = await code(call)
                #expect(got == expected, "\(name) as \(who) on \(engine): \(String(describing: got))")
            }
            #expect(!intruder.canRead(try await c.privateDatabase(for: alice).record(for: rid("secret"))))
            // Nothing changed.
            let owner = c.privateDatabase(for: alice)
            #expect(try await owner.record(for: rid("secret"))["text"] == "alice only")
            #expect(try await owner.record(for: rid("zsecret", zone: z))["text"] == "alice zone")
            #expect(try await owner.allZones() == [.default, ZoneID(zoneName: "Z")])
            #expect(try await owner.allSubscriptions().map(\.id) == ["s"])
        }
    }

    @Test(arguments: Engine.available)
    func anotherUsersDatabaseHoldsOnlyItsOwnRecords(_ engine: Engine) async throws {
        try await withAlice(engine) { f, z in
            let c = f.container
            let mine = c.privateDatabase(for: bob)
            // The same names in bob's database are bob's records (not found, then separate).
            #expect(await code { try await mine.record(for: rid("secret")) } == .unknownItem)
            #expect(await code { try await mine.record(for: rid("zsecret", zone: z)) } == .zoneNotFound)
            try await mine.save(rec("secret", ["text": "bob's own"]))
            #expect(try await c.privateDatabase(for: alice).record(for: rid("secret"))["text"] == "alice only")
            // Ids naming alice as the zone owner are refused.
            let aliceZone = ZoneID(zoneName: "Z", ownerName: alice)
            #expect(await code { try await mine.record(for: rid("zsecret", zone: aliceZone)) } == .permissionFailure)
            #expect(await code { try await mine.save(rec("x", zone: aliceZone)) } == .permissionFailure)
            #expect(await code { try await mine.deleteZone(aliceZone) } == .permissionFailure)
            #expect(await code { try await mine.changes(in: aliceZone, since: nil) } == .permissionFailure)
            // Snapshots (embedded) and queries (both engines) are per database.
            if engine == .embedded {
                #expect(mine.querySnapshot(recordType: "Note")?.rowCount == 1)
                #expect(c.privateDatabase(for: alice).querySnapshot(recordType: "Note")?.rowCount == 2)
                #expect(c.publicDatabase.querySnapshot(recordType: "Note")?.rowCount == 0)
            }
            #expect(try await notes(in: mine) == ["secret"])
            #expect(try await notes(in: c.privateDatabase(for: alice)) == ["secret", "zsecret"])
            #expect(try await notes(in: c.publicDatabase).isEmpty)
            // A change token of alice's zone does not work on bob's zone of the same name.
            let bz = try await mine.save(zone: ZoneID(zoneName: "Z"))
            let aliceToken = try await c.privateDatabase(for: alice).changes(in: z, since: nil).token
            #expect(await code { try await mine.changes(in: bz, since: aliceToken) } == .changeTokenExpired)
            // Cursor secrets differ per database.
            #expect(mine.cursorSecret != c.privateDatabase(for: alice).cursorSecret)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Engine.available)
    func notificationsReachOnlyTheOwner(_ engine: Engine) async throws {
        try await withAlice(engine) { f, _ in
            let c = f.container
            let bobDB = c.privateDatabase(for: bob)
            _ = try await bobDB.save(Subscription(id: "s", recordType: "Note", predicate: "TRUEPREDICATE"))
            let bobStream = bobDB.notifications()
            let aliceStream = c.privateDatabase(for: alice).notifications()
            try await c.privateDatabase(for: alice).save(rec("n2"))
            try await bobDB.save(rec("b1"))
            var bi = bobStream.makeAsyncIterator()
            let first = await bi.next()
            #expect(first?.recordID.recordName == "b1")
            var ai = aliceStream.makeAsyncIterator()
            #expect(await ai.next()?.recordID.recordName == "n2")
        }
    }

    @Test(arguments: Engine.available)
    func invalidPrivateDatabaseOwnersAreRefused(_ engine: Engine) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            #expect(
                await code { try await c.privateDatabase(for: ZoneID.defaultOwnerName).save(rec("x")) }
                    == .invalidArguments)
            #expect(await code { try await c.privateDatabase(for: "has space").save(rec("x")) } == .invalidArguments)
            if engine == .embedded { #expect(c.publicDatabase.querySnapshot(recordType: "Note")?.rowCount == 0) }
            // Nor in the public database, whose records the default owner's name stores.
            #expect(await code { try await c.publicDatabase.record(for: rid("x")) } == .unknownItem)
        }
    }

    @Test(arguments: Engine.available, [Identity.user(bob), Identity.anonymous])
    func nobodyButTheCreatorWritesAPublicRecord(_ engine: Engine, _ who: Identity) async throws {
        try await withFixture(engine) { f in
            let c = f.container
            let original = try await c.publicDatabase(as: .user(alice)).save(rec("a", ["text": "alice's"]))
            let other = c.publicDatabase(as: who)
            let expected: CirrusError.Code = who == .anonymous ? .notAuthenticated : .permissionFailure
            var edit = original
            edit["text"] = "changed"
            let calls: [(String, () async throws -> Any)] = [
                ("save", { try await other.save(edit) }),
                ("save changedKeys", { try await other.save(edit, savePolicy: .changedKeys) }),
                ("save allKeys", { try await other.save(edit, savePolicy: .allKeys) }),
                ("deleteRecord", { try await other.deleteRecord(withID: rid("a")) }),
            ]
            for (name, call) in calls {
                let got = await code(call)
                #expect(got == expected, "\(name) as \(who) on \(engine): \(String(describing: got))")
            }
            switch await attempt({ try await other.modifyRecords(saving: [edit], deleting: [rid("a")]) }) {
            case .success(let r):  // bob: each item refused
                #expect(r.partialFailure?.partialErrors.values.allSatisfy { $0.code == .permissionFailure } == true)
            case .failure(let e):  // anonymous: the whole request refused
                #expect(e.code == .notAuthenticated && who == .anonymous)
            }
            #expect(try await c.publicDatabase.record(for: rid("a")) == original)  // unchanged, readable by all
            #expect(other.canRead(original))
        }
    }
}
