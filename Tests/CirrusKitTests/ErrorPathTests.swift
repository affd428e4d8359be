// One test per CloudKit error a program meets, on both backends: unknownItem, zoneNotFound,
// changeTokenExpired, invalidArguments with the checker's message, notAuthenticated,
// permissionFailure (serverRecordChanged and partialFailure are in NoteAppTests).

import CirrusKit
import Foundation
import QueryChecker
import Testing

import struct QueryChecker.PredicateError

@Suite struct ErrorPathTests {
    @Test(arguments: Backend.allCases) func unknownItem(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let e = await ckError {
                _ = try await w.alice.privateCloudDatabase.record(for: CKRecord.ID(recordName: "nope"))
            }
            #expect(e?.code == .unknownItem)
            #expect(e?.errorCode == 11)
            let results = try await w.alice.publicCloudDatabase.records(for: [CKRecord.ID(recordName: "a")])
            #expect(results.count == 1)
            if case .failure(let f)? = results[CKRecord.ID(recordName: "a")] {
                #expect((f as? CKError)?.code == .unknownItem)
            } else {
                Issue.record("expected unknownItem")
            }
        }
    }

    @Test(arguments: Backend.allCases) func zoneNotFound(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let zone = CKRecordZone.ID(zoneName: "Missing")
            let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "z1", zoneID: zone))
            note["title"] = "lost"
            let e = await ckError { _ = try await w.alice.privateCloudDatabase.save(note) }
            #expect(e?.code == .zoneNotFound)
            let lookup = await ckError { _ = try await w.alice.privateCloudDatabase.recordZone(for: zone) }
            #expect(lookup?.code == .zoneNotFound)
        }
    }

    @Test(arguments: Backend.allCases) func changeTokenOfAnotherZoneExpired(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            let a = CKRecordZone.ID(zoneName: "A")
            let b = CKRecordZone.ID(zoneName: "B")
            _ = try await db.modifyRecordZones(
                saving: [CKRecordZone(zoneID: a), CKRecordZone(zoneID: b)], deleting: [])
            let tokenOfA = try await db.recordZoneChanges(inZoneWith: a, since: nil).changeToken
            let e = await ckError { _ = try await db.recordZoneChanges(inZoneWith: b, since: tokenOfA) }
            #expect(e?.code == .changeTokenExpired)
            #expect(e?.errorCode == 21)
        }
    }

    @Test(arguments: Backend.allCases) func invalidArgumentsCarriesTheCheckersMessage(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.publicCloudDatabase
            let place = CKRecord(recordType: "Place", recordID: CKRecord.ID(recordName: "louvre"))
            place["kind"] = "museum"
            _ = try await db.save(place)
            let format = "kind == %@ OR kind == %@"
            let query = CKQuery(recordType: "Place", predicate: NSPredicate(format: format, "museum", "cafe"))
            let e = await ckError { _ = try await db.records(matching: query) }
            #expect(e?.code == .invalidArguments)
            // The message is the checker's: its reason, the predicate with a caret under the
            // part at fault, and its hint.
            var expected = ""
            do throws(PredicateError) {
                _ = try QueryChecker.check(
                    format, context: CheckContext(arguments: ["museum", "cafe"], source: format))
            } catch {
                expected = error.rendered(source: format)
            }
            #expect(!expected.isEmpty)
            #expect(e?.localizedDescription == expected)
            #expect(expected.contains("^"))
            #expect(expected.contains("hint:"))
        }
    }

    @Test(arguments: Backend.allCases) func notAuthenticatedWithoutAnAccount(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let nobodyStatus = try await w.nobody.accountStatus()
            let aliceStatus = try await w.alice.accountStatus()
            #expect(nobodyStatus == CKAccountStatus.noAccount)
            #expect(aliceStatus == CKAccountStatus.available)
            let note = CKRecord(recordType: "Note")
            note["title"] = "anonymous"
            let privateSave = await ckError { _ = try await w.nobody.privateCloudDatabase.save(note) }
            #expect(privateSave?.code == .notAuthenticated)
            let publicSave = await ckError { _ = try await w.nobody.publicCloudDatabase.save(note) }
            #expect(publicSave?.code == .notAuthenticated)
            let me = await ckError { _ = try await w.nobody.userRecordID() }
            #expect(me?.code == .notAuthenticated)
        }
    }

    @Test(arguments: Backend.allCases) func permissionFailureOnAnotherUsersPublicRecord(_ backend: Backend) async throws
    {
        try await withWorld(backend) { w in
            let post = CKRecord(recordType: "Post", recordID: CKRecord.ID(recordName: "p1"))
            post["text"] = "by alice"
            _ = try await w.alice.publicCloudDatabase.save(post)
            let seen = try await w.bob.publicCloudDatabase.record(for: post.recordID)
            #expect(seen["text"] as? String == "by alice")
            seen["text"] = "edited by bob"
            let e = await ckError { _ = try await w.bob.publicCloudDatabase.save(seen) }
            #expect(e?.code == .permissionFailure)
            // Anyone may read it, even without an account.
            #expect(try await w.nobody.publicCloudDatabase.record(for: post.recordID)["text"] as? String == "by alice")
        }
    }
}
