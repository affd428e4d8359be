// A note app as Apple's CloudKit samples write one — save, fetch, query, modify and delete
// notes in the private database, with CKQueryOperation and CKModifyRecordsOperation, partial
// failures and conflicts — run on an embedded container and on `cirrus serve`.

import CirrusKit
import Foundation
import Testing

@Suite struct NoteAppTests {
    static let notes = CKRecordZone.ID(zoneName: "Notes")

    /// A note as the samples make one.
    static func note(_ name: String, title: String, priority: Int, zone: CKRecordZone.ID = notes) -> CKRecord {
        let r = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: name, zoneID: zone))
        r["title"] = title
        r["priority"] = priority
        r["done"] = false
        r["tags"] = ["home", "p\(priority)"]
        r["due"] = Date(timeIntervalSince1970: 1_800_000_000 + Double(priority) * 86_400)
        return r
    }

    @Test(arguments: Backend.allCases) func saveFetchQueryModifyDelete(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            _ = try await db.save(CKRecordZone(zoneID: Self.notes))
            let saved = try await db.save(Self.note("n1", title: "Groceries", priority: 2))
            #expect(saved.recordChangeTag != nil)
            #expect(saved.creationDate != nil)
            #expect(saved.creatorUserRecordID?.recordName == "_alice")
            #expect(saved.changedKeys().isEmpty)

            let fetched = try await db.record(for: CKRecord.ID(recordName: "n1", zoneID: Self.notes))
            #expect(fetched["title"] as? String == "Groceries")
            #expect(fetched["priority"] as? Int == 2)
            let done: Bool? = fetched["done"]
            #expect(done == false)
            #expect(fetched["tags"] as? [String] == ["home", "p2"])
            let due = try #require(fetched["due"] as? Date)
            #expect(
                abs(due.timeIntervalSince1970 - (1_800_000_000 + 2 * 86_400)) < 0.001, "\(due.timeIntervalSince1970)")
            #expect(fetched.recordChangeTag == saved.recordChangeTag)
            #expect(fetched.allKeys() == ["done", "due", "priority", "tags", "title"])

            // More notes, then a query by priority, sorted by title descending.
            for (i, title) in ["Taxes", "Birthday", "Plumber", "Books"].enumerated() {
                _ = try await db.save(Self.note("n\(i + 2)", title: title, priority: i + 1))
            }
            let query = CKQuery(recordType: "Note", predicate: NSPredicate(format: "priority >= %d", 2))
            query.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
            let (matches, cursor) = try await db.records(matching: query, inZoneWith: Self.notes)
            let titles = try matches.map { try $0.1.get()["title"] as? String }
            // priorities: n1 2 Groceries, n2 1 Taxes, n3 2 Birthday, n4 3 Plumber, n5 4 Books
            #expect(titles == ["Plumber", "Groceries", "Books", "Birthday"])
            #expect(cursor == nil)

            // Modify: change one field, save with the fetched change tag.
            fetched["title"] = "Groceries and flowers"
            #expect(fetched.changedKeys() == ["title"])
            let modified = try await db.save(fetched)
            #expect(modified["title"] as? String == "Groceries and flowers")
            #expect(modified.recordChangeTag != saved.recordChangeTag)

            // Delete; fetching it again is unknownItem.
            let gone = try await db.deleteRecord(withID: fetched.recordID)
            #expect(gone == fetched.recordID)
            let e = await ckError { _ = try await db.record(for: fetched.recordID) }
            #expect(e?.code == .unknownItem)
        }
    }

    @Test(arguments: Backend.allCases) func queryOperationPagesThroughACursor(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            _ = try await db.save(CKRecordZone(zoneID: Self.notes))
            let records = (1...7).map { Self.note("p\($0)", title: "Note \($0)", priority: $0) }
            let (saves, _) = try await db.modifyRecords(saving: records, deleting: [])
            #expect(saves.values.allSatisfy { (try? $0.get()) != nil })

            let query = CKQuery(recordType: "Note", predicate: NSPredicate(value: true))
            query.sortDescriptors = [NSSortDescriptor(key: "priority", ascending: false)]
            var pages: [[String]] = []
            var operation = CKQueryOperation(query: query)
            while true {
                let names = Collected<String>()
                let next = Collected<CKQueryOperation.Cursor?>()
                operation.zoneID = Self.notes
                operation.resultsLimit = 3
                operation.desiredKeys = ["priority"]
                operation.recordMatchedBlock = { id, result in
                    if case .success(let r) = result, r["title"] == nil { names.append(id.recordName) }
                }
                operation.queryResultBlock = { result in next.append(try? result.get()) }
                await run(operation, on: db)
                pages.append(names.all)
                guard let cursor = next.all.first ?? nil else { break }
                operation = CKQueryOperation(cursor: cursor)
            }
            #expect(pages.flatMap { $0 } == ["p7", "p6", "p5", "p4", "p3", "p2", "p1"])
            #expect(pages.first?.count == 3)
            #expect(pages.count >= 3)
        }
    }

    @Test(arguments: Backend.allCases) func conflictCarriesTheServerRecord(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            _ = try await db.save(CKRecordZone(zoneID: Self.notes))
            _ = try await db.save(Self.note("c1", title: "Original", priority: 1))
            // Two copies fetched; the first saves, the second is stale.
            let a = try await db.record(for: CKRecord.ID(recordName: "c1", zoneID: Self.notes))
            let b = try await db.record(for: CKRecord.ID(recordName: "c1", zoneID: Self.notes))
            a["title"] = "From device A"
            _ = try await db.save(a)
            b["title"] = "From device B"
            let e = await ckError { _ = try await db.save(b) }
            #expect(e?.code == .serverRecordChanged)
            #expect(e?.serverRecord?["title"] as? String == "From device A")
            #expect(e?.serverRecord?.recordChangeTag == a.recordChangeTag)
            #expect(e?.clientRecord === b)
            // The usual resolution: apply the change to the server's record and save that.
            let server = try #require(e?.serverRecord)
            server["title"] = "Merged"
            let merged = try await db.save(server)
            #expect(merged["title"] as? String == "Merged")
            // A new record under a taken name is a conflict too.
            let clash = await ckError { _ = try await db.save(Self.note("c1", title: "New", priority: 9)) }
            #expect(clash?.code == .serverRecordChanged)
            #expect(clash?.serverRecord?["title"] as? String == "Merged")
        }
    }

    @Test(arguments: Backend.allCases) func modifyOperationReportsPartialFailure(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            // Default zone: items are independent, so one failure leaves the others saved.
            let good = Self.note("g1", title: "Fine", priority: 1, zone: .default)
            _ = try await db.save(Self.note("s1", title: "Old", priority: 1, zone: .default))
            let stale = Self.note("s1", title: "Stale", priority: 1, zone: .default)
            let missing = CKRecord.ID(recordName: "never-saved")
            let operation = CKModifyRecordsOperation(recordsToSave: [good, stale], recordIDsToDelete: [missing])
            operation.isAtomic = false
            let perSave = Collected<(String, Bool)>()
            let final = Collected<Result<Void, any Error>>()
            operation.perRecordSaveBlock = { id, result in perSave.append((id.recordName, (try? result.get()) != nil)) }
            operation.modifyRecordsResultBlock = { final.append($0) }
            await run(operation, on: db)
            #expect(perSave.all.map(\.0) == ["g1", "s1"])
            #expect(perSave.all.map(\.1) == [true, false])
            guard case .failure(let error)? = final.all.first, let ck = error as? CKError else {
                Issue.record("expected partialFailure, got \(final.all)")
                return
            }
            #expect(ck.code == .partialFailure)
            let items = try #require(ck.partialErrorsByItemID)
            #expect((items[stale.recordID] as? CKError)?.code == .serverRecordChanged)
            #expect(items[good.recordID] == nil)
            // Deleting a record that does not exist: CloudKit reports it per item, or succeeds.
            if let deletion = items[missing] as? CKError { #expect(deletion.code == .unknownItem) }
            #expect(try await db.record(for: good.recordID)["title"] as? String == "Fine")
        }
    }

    @Test(arguments: Backend.allCases) func atomicCustomZoneBatchFailsTogether(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            _ = try await db.save(CKRecordZone(zoneID: Self.notes))
            _ = try await db.save(Self.note("a1", title: "Old", priority: 1))
            let fresh = Self.note("a2", title: "Fresh", priority: 2)
            let stale = Self.note("a1", title: "Stale", priority: 1)
            let (saves, _) = try await db.modifyRecords(saving: [fresh, stale], deleting: [], atomically: true)
            #expect((saves[stale.recordID].flatMap { try? $0.get() }) == nil)
            let freshError = saves[fresh.recordID].flatMap { r -> CKError? in
                if case .failure(let e) = r { return e as? CKError }
                return nil
            }
            #expect(freshError?.code == .batchRequestFailed)
            let e = await ckError { _ = try await db.record(for: fresh.recordID) }
            #expect(e?.code == .unknownItem)
        }
    }

    @Test(arguments: Backend.allCases) func savingFromArchivedSystemFieldsSendsOnlyTheChanges(
        _ backend: Backend
    )
        async throws
    {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            let saved = try await db.save(Self.note("sf1", title: "Kept", priority: 3, zone: .default))
            // A sync engine keeps only the system fields, and makes a record of them to save a change.
            let coder = NSKeyedArchiver(requiringSecureCoding: true)
            saved.encodeSystemFields(with: coder)
            coder.finishEncoding()
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: coder.encodedData)
            unarchiver.requiresSecureCoding = true
            let edit = try #require(CKRecord(coder: unarchiver))
            #expect(edit.recordChangeTag == saved.recordChangeTag)
            edit["priority"] = 4
            let after = try await db.save(edit)
            #expect(after["priority"] as? Int == 4)
            #expect(after["title"] as? String == "Kept")
            let fetched = try await db.record(for: edit.recordID)
            #expect(fetched["title"] as? String == "Kept")
            #expect(fetched["tags"] as? [String] == ["home", "p3"])
            // Removing a key of a whole record removes it on the server.
            fetched["tags"] = nil
            _ = try await db.save(fetched)
            let again = try await db.record(for: edit.recordID)
            #expect(again["tags"] == nil)
            #expect(again["title"] as? String == "Kept")
            // The archived system fields are stale now: saving from them again is a conflict.
            let unarchiver2 = try NSKeyedUnarchiver(forReadingFrom: coder.encodedData)
            unarchiver2.requiresSecureCoding = true
            let stale = try #require(CKRecord(coder: unarchiver2))
            stale["priority"] = 5
            let e = await ckError { _ = try await db.save(stale) }
            #expect(e?.code == .serverRecordChanged)
        }
    }

    @Test(arguments: Backend.allCases) func completionHandlerForms(_ backend: Backend) async throws {
        try await withWorld(backend) { w in
            let db = w.alice.privateCloudDatabase
            let note = Self.note("h1", title: "Handlers", priority: 5, zone: .default)
            let saved: CKRecord? = await withCheckedContinuation { c in db.save(note) { r, _ in c.resume(returning: r) }
            }
            #expect(saved?["title"] as? String == "Handlers")
            let fetched: CKRecord? = await withCheckedContinuation { c in
                db.fetch(withRecordID: note.recordID) { r, _ in c.resume(returning: r) }
            }
            #expect(fetched?["priority"] as? Int == 5)
            let query = CKQuery(recordType: "Note", predicate: NSPredicate(format: "title BEGINSWITH %@", "Hand"))
            let found: [CKRecord]? = await withCheckedContinuation { c in
                db.perform(query, inZoneWith: nil) { r, _ in c.resume(returning: r) }
            }
            #expect(found?.map(\.recordID.recordName) == ["h1"])
            let deleted: CKRecord.ID? = await withCheckedContinuation { c in
                db.delete(withRecordID: note.recordID) { id, _ in c.resume(returning: id) }
            }
            #expect(deleted == note.recordID)
            let missing: (any Error)? = await withCheckedContinuation { c in
                db.fetch(withRecordID: note.recordID) { _, e in c.resume(returning: e) }
            }
            #expect((missing as? CKError)?.code == .unknownItem)
        }
    }
}
