// A container and its two databases; zone and database changes with their tokens archived by
// NSKeyedArchiver and restored; subscriptions; assets — on both backends.

import Cirrus
import CirrusKit
import CirrusShell
import Foundation
import Testing

@Suite struct ContainerAndChangesTests {
    @Test(arguments: Backend.allCases) func aContainerAndItsTwoDatabases(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            #expect(w.alice.containerIdentifier == World.identifier)
            #expect(try await w.alice.userRecordID().recordName == "_alice")
            #expect(w.alice.privateCloudDatabase.databaseScope == .private)
            #expect(w.alice.publicCloudDatabase.databaseScope == .public)
            let mine = CKRecord(recordType: "Diary", recordID: CKRecord.ID(recordName: "d1"))
            mine["text"] = "private"
            _ = try await w.alice.privateCloudDatabase.save(mine)
            let shared = CKRecord(recordType: "Diary", recordID: CKRecord.ID(recordName: "d1"))
            shared["text"] = "public"
            _ = try await w.alice.publicCloudDatabase.save(shared)
            // Same name, two databases, two records.
            #expect(try await w.alice.privateCloudDatabase.record(for: mine.recordID)["text"] as? String == "private")
            #expect(try await w.alice.publicCloudDatabase.record(for: mine.recordID)["text"] as? String == "public")
            // Bob's private database is his own.
            let e = await ckError { _ = try await w.bob.privateCloudDatabase.record(for: mine.recordID) }
            #expect(e?.code == .unknownItem)
            let zones = try await w.bob.privateCloudDatabase.allRecordZones().map(\.zoneID.zoneName)
            #expect(zones == [CKRecordZone.ID.defaultZoneName])
        }
    }

    @Test(arguments: Backend.allCases) func discoveryFindsOnlyUsersWhoAgreed(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            // The administrator's side (`cirrus users add`), on the directory of the container.
            let dir = backend == .embedded ? w.directory + "/" + World.identifier : w.directory
            let carol = UserAccount(
                userRecordName: "_carol", emailAddress: "carol@example.com",
                name: UserNameComponents(givenName: "Carol", familyName: "Jones"), discoverability: .granted)
            let dave = UserAccount(userRecordName: "_dave", emailAddress: "dave@example.com")
            #expect(UserCommands.run(db: dir, action: .add(carol)).exitCode == 0)
            #expect(UserCommands.run(db: dir, action: .add(dave)).exitCode == 0)
            try await Task.sleep(for: .milliseconds(1_100))  // readers look at users.json at most once a second
            let found = try await w.alice.userIdentity(forEmailAddress: "Carol@Example.com")
            #expect(found?.userRecordID?.recordName == "_carol")
            #expect(found?.nameComponents?.givenName == "Carol")
            #expect(found?.nameComponents?.familyName == "Jones")
            #expect(try await w.alice.userIdentity(forEmailAddress: "dave@example.com") == nil)
            let byID = try await w.alice.userIdentity(forUserRecordID: CKRecord.ID(recordName: "_carol"))
            #expect(byID?.userRecordID?.recordName == "_carol")
            let e = await ckError { _ = try await w.nobody.userIdentity(forEmailAddress: "carol@example.com") }
            #expect(e?.code == .notAuthenticated)
        }
    }

    static func archive(_ token: CKServerChangeToken) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
    }

    static func restore(_ data: Data) throws -> CKServerChangeToken? {
        try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data)
    }

    @Test(arguments: Backend.allCases) func zoneChangesResumeFromAnArchivedToken(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            let zone = CKRecordZone.ID(zoneName: "Trips")
            _ = try await db.save(CKRecordZone(zoneID: zone))
            for name in ["rome", "oslo", "lima"] {
                let r = CKRecord(recordType: "Trip", recordID: CKRecord.ID(recordName: name, zoneID: zone))
                r["days"] = name.count
                _ = try await db.save(r)
            }
            let first = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
            #expect(Set(first.modificationResultsByID.keys.map(\.recordName)) == ["rome", "oslo", "lima"])
            #expect(first.deletions.isEmpty)
            let kept = try Self.archive(first.changeToken)

            // Later: one changed, one deleted, one added.
            let rome = try await db.record(for: CKRecord.ID(recordName: "rome", zoneID: zone))
            rome["days"] = 9
            _ = try await db.save(rome)
            try await db.deleteRecord(withID: CKRecord.ID(recordName: "oslo", zoneID: zone))
            let kyoto = CKRecord(recordType: "Trip", recordID: CKRecord.ID(recordName: "kyoto", zoneID: zone))
            kyoto["days"] = 12
            _ = try await db.save(kyoto)

            let token = try #require(try Self.restore(kept))
            #expect(token == first.changeToken)
            let since = try await db.recordZoneChanges(inZoneWith: zone, since: token)
            let changed = since.modificationResultsByID.mapValues { (try? $0.get())?.record["days"] as? Int }
            #expect(changed.count == 2)
            #expect(changed[CKRecord.ID(recordName: "rome", zoneID: zone)] == 9)
            #expect(changed[CKRecord.ID(recordName: "kyoto", zoneID: zone)] == 12)
            #expect(since.deletions.map(\.recordID.recordName) == ["oslo"])
            #expect(since.deletions.map(\.recordType) == ["Trip"])
            #expect(!since.moreComing)

            // The same through the operation, paging two at a time from the start.
            let ids = Collected<String>()
            let deleted = Collected<String>()
            let tokens = Collected<CKServerChangeToken>()
            let op = CKFetchRecordZoneChangesOperation(
                recordZoneIDs: [zone],
                configurationsByRecordZoneID: [zone: .init(previousServerChangeToken: nil, resultsLimit: 2)])
            op.recordWasChangedBlock = { id, _ in ids.append(id.recordName) }
            op.recordWithIDWasDeletedBlock = { id, _ in deleted.append(id.recordName) }
            op.recordZoneFetchResultBlock = { _, result in
                if case .success(let r) = result { tokens.append(r.serverChangeToken) }
            }
            await run(op, on: db)
            #expect(Set(ids.all) == ["rome", "lima", "kyoto"])
            #expect(tokens.all.count == 1)
            let last = try #require(tokens.all.first)
            let nothing = try await db.recordZoneChanges(inZoneWith: zone, since: try Self.restore(Self.archive(last)))
            #expect(nothing.modificationResultsByID.isEmpty)
            #expect(nothing.deletions.isEmpty)
        }
    }

    @Test(arguments: Backend.allCases) func databaseChangesResumeFromAnArchivedToken(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            _ = try await db.save(CKRecordZone(zoneName: "Work"))
            _ = try await db.save(CKRecordZone(zoneName: "Home"))
            let first = try await db.databaseChanges(since: nil)
            #expect(Set(first.modifications.map(\.zoneID.zoneName)) == ["Work", "Home"])
            let kept = try Self.archive(first.changeToken)

            let note = CKRecord(
                recordType: "Note", recordID: CKRecord.ID(recordName: "w1", zoneID: .init(zoneName: "Work")))
            note["title"] = "memo"
            _ = try await db.save(note)
            try await db.deleteRecordZone(withID: .init(zoneName: "Home"))

            let changed = Collected<String>()
            let deleted = Collected<String>()
            let done = Collected<Bool>()
            let op = CKFetchDatabaseChangesOperation(previousServerChangeToken: try Self.restore(kept))
            op.recordZoneWithIDChangedBlock = { changed.append($0.zoneName) }
            op.recordZoneWithIDWasDeletedBlock = { deleted.append($0.zoneName) }
            op.fetchDatabaseChangesResultBlock = { result in done.append((try? result.get()) != nil) }
            await run(op, on: db)
            #expect(changed.all == ["Work"])
            #expect(deleted.all == ["Home"])
            #expect(done.all == [true])
        }
    }

    @Test(arguments: Backend.allCases) func subscriptionsAreSavedListedAndDeleted(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.publicCloudDatabase
            let seed = CKRecord(recordType: "Place", recordID: CKRecord.ID(recordName: "seed"))
            seed["kind"] = "cafe"
            _ = try await db.save(seed)
            let s = CKQuerySubscription(
                recordType: "Place", predicate: NSPredicate(format: "kind == %@", "cafe"), subscriptionID: "cafes",
                options: [.firesOnRecordCreation, .firesOnRecordUpdate])
            _ = try await db.save(s)
            let all = try await db.allSubscriptions()
            #expect(all.map(\.subscriptionID) == ["cafes"])
            let q = try #require(all.first as? CKQuerySubscription)
            #expect(q.recordType == "Place")
            #expect(q.querySubscriptionOptions == [.firesOnRecordCreation, .firesOnRecordUpdate])
            let bad = CKQuerySubscription(
                recordType: "Place", predicate: NSPredicate(format: "kind == 'a' OR kind == 'b'"),
                options: [.firesOnRecordCreation])
            let e = await ckError { _ = try await db.save(bad) }
            #expect(e?.code == .invalidArguments)
            try await db.deleteSubscription(withID: "cafes")
            #expect(try await db.allSubscriptions().isEmpty)
        }
    }

    @Test(arguments: Backend.allCases) func zoneAndSubscriptionOperations(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            let zones = CKModifyRecordZonesOperation(
                recordZonesToSave: [CKRecordZone(zoneName: "Z1"), CKRecordZone(zoneName: "Z2")],
                recordZoneIDsToDelete: nil)
            let savedZones = Collected<String>()
            zones.perRecordZoneSaveBlock = { id, r in if (try? r.get()) != nil { savedZones.append(id.zoneName) } }
            await run(zones, on: db)
            #expect(savedZones.all == ["Z1", "Z2"])

            let fetch = CKFetchRecordZonesOperation(recordZoneIDs: [.init(zoneName: "Z2"), .init(zoneName: "Nope")])
            let outcomes = Collected<(String, Bool)>()
            let final = Collected<CKError.Code?>()
            fetch.perRecordZoneResultBlock = { id, r in outcomes.append((id.zoneName, (try? r.get()) != nil)) }
            fetch.fetchRecordZonesResultBlock = { r in
                if case .failure(let e) = r { final.append((e as? CKError)?.code) } else { final.append(nil) }
            }
            await run(fetch, on: db)
            #expect(outcomes.all.map(\.0) == ["Z2", "Nope"])
            #expect(outcomes.all.map(\.1) == [true, false])
            #expect(final.all == [.partialFailure])

            let all = CKFetchRecordZonesOperation.fetchAllRecordZonesOperation()
            let names = Collected<String>()
            all.perRecordZoneResultBlock = { id, _ in names.append(id.zoneName) }
            await run(all, on: db)
            #expect(Set(names.all) == [CKRecordZone.ID.defaultZoneName, "Z1", "Z2"])

            let sub = CKRecordZoneSubscription(zoneID: .init(zoneName: "Z1"), subscriptionID: "z1-changes")
            let modify = CKModifySubscriptionsOperation(subscriptionsToSave: [sub], subscriptionIDsToDelete: nil)
            let savedSubs = Collected<String>()
            modify.perSubscriptionSaveBlock = { id, r in if (try? r.get()) != nil { savedSubs.append(id) } }
            await run(modify, on: db)
            #expect(savedSubs.all == ["z1-changes"])
            let fetchSubs = CKFetchSubscriptionsOperation.fetchAllSubscriptionsOperation()
            let found = Collected<(String, CKSubscription.SubscriptionType?)>()
            fetchSubs.perSubscriptionResultBlock = { id, r in found.append((id, try? r.get().subscriptionType)) }
            await run(fetchSubs, on: db)
            #expect(found.all.map(\.0) == ["z1-changes"])
            #expect(found.all.map(\.1) == [.recordZone])
        }
    }

    @Test(arguments: Backend.allCases) func assetsRoundTrip(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let file = URL(fileURLWithPath: NSTemporaryDirectory() + "cirruskit-asset-\(UUID().uuidString).txt")
            defer { try? FileManager.default.removeItem(at: file) }
            let bytes = Data("pretend this is a JPEG \(backend)".utf8)
            try bytes.write(to: file)
            let photo = CKRecord(recordType: "Photo", recordID: CKRecord.ID(recordName: "ph1"))
            photo["image"] = CKAsset(fileURL: file)
            _ = try await w.alice.privateCloudDatabase.save(photo)
            let fetched = try await w.alice.privateCloudDatabase.record(for: photo.recordID)
            let asset = try #require(fetched["image"] as? CKAsset)
            let url = try #require(asset.fileURL)
            #expect(try Data(contentsOf: url) == bytes)
        }
    }

    @Test(arguments: Backend.allCases) func locationsQueryAndSortByDistance(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.publicCloudDatabase
            let places: [(String, Double, Double)] = [
                ("louvre", 48.8606, 2.3376), ("orsay", 48.86, 2.3266), ("flore", 48.854, 2.3325),
                ("eiffel", 48.8584, 2.2945), ("versailles", 48.8049, 2.1204),
            ]
            for (name, lat, lon) in places {
                let r = CKRecord(recordType: "Place", recordID: CKRecord.ID(recordName: name))
                r["location"] = CLLocation(latitude: lat, longitude: lon)
                _ = try await db.save(r)
            }
            let here = CLLocation(latitude: 48.8583, longitude: 2.3375)
            let query = CKQuery(
                recordType: "Place",
                predicate: NSPredicate(format: "distanceToLocation:fromLocation:(location, %@) < %f", here, 3.0))
            query.sortDescriptors = [CKLocationSortDescriptor(key: "location", relativeLocation: here)]
            let (matches, _) = try await db.records(matching: query)
            let names = matches.map(\.0.recordName)
            let expected = places.map { ($0.0, CLLocation(latitude: $0.1, longitude: $0.2).distance(from: here)) }
                .filter { $0.1 < 3000 }.sorted { $0.1 < $1.1 }.map(\.0)
            #expect(names == expected)
            #expect(!names.contains("versailles"))
            let loc = try #require(try matches.first?.1.get()["location"] as? CLLocation)
            #expect(abs(loc.coordinate.latitude - 48.8606) < 1e-9)
        }
    }
}
