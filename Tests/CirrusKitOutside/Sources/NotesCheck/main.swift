// The checks: a container and its two databases, notes saved, queried, modified and deleted,
// a conflict, a predicate CloudKit refuses, zone changes resumed from an archived token.
// This file imports Foundation beside CirrusKit.

import CirrusKit
import Foundation

func runChecks() async throws {
    let container = CKContainer.default()
    let status = try await container.accountStatus()
    guard status == .available else {
        // Without an account CloudKit refuses the private database: so must this.
        try check(status == .noAccount, "no account")
        do {
            _ = try await container.privateCloudDatabase.save(CKRecord(recordType: "Note"))
            try check(false, "a private save without an account fails")
        } catch let error as CKError {
            try check(error.code == .notAuthenticated, "a private save without an account is notAuthenticated")
        }
        print("\(checks) passed, 0 failed")
        return
    }
    try check(status == .available, "an account is available")
    let me = try await container.userRecordID()
    try check(!me.recordName.isEmpty, "the user record id is \(me.recordName)")

    let database = container.privateCloudDatabase
    let zoneID = CKRecordZone.ID(zoneName: "Notes-\(UUID().uuidString.prefix(8))", ownerName: CKCurrentUserDefaultName)
    _ = try await database.save(CKRecordZone(zoneID: zoneID))
    let start = try await database.recordZoneChanges(inZoneWith: zoneID, since: nil)
    let archived = try NSKeyedArchiver.archivedData(withRootObject: start.changeToken, requiringSecureCoding: true)

    let notes = (1...5).map { Note(title: "Note \($0)", body: "Body \($0)", priority: 6 - $0) }
    let saved = try await saveNotes(notes, in: zoneID, database: database)
    try check(saved.count == 5 && saved.allSatisfy { $0.recordChangeTag != nil }, "five notes saved with change tags")

    let fetched = try await fetchNotes(in: zoneID, database: database, pageSize: 2)
    try check(fetched.map(\.priority) == [1, 2, 3, 4, 5], "the notes come back by priority, two per page")

    let predicate = NSPredicate(format: "priority >= %d AND title BEGINSWITH %@", 3, "Note")
    let query = CKQuery(recordType: "Note", predicate: predicate)
    query.sortDescriptors = [NSSortDescriptor(key: "title", ascending: false)]
    let (matches, _) = try await database.records(matching: query, inZoneWith: zoneID)
    let titles = matches.compactMap { try? $0.1.get()["title"] as? String }
    try check(titles == ["Note 3", "Note 2", "Note 1"], "NSPredicate(format:) with %d and %@, sorted: \(titles)")

    let first = try await database.record(for: CKRecord.ID(recordName: "note-1", zoneID: zoneID))
    let stale = try await database.record(for: CKRecord.ID(recordName: "note-1", zoneID: zoneID))
    first["body"] = "Edited" as CKRecordValue
    _ = try await database.save(first)
    stale["body"] = "Edited elsewhere" as CKRecordValue
    do {
        _ = try await database.save(stale)
        try check(false, "a stale save fails")
    } catch let error as CKError where error.code == .serverRecordChanged {
        try check(error.serverRecord?["body"] as? String == "Edited", "serverRecordChanged carries the server's record")
    }

    do {
        let bad = CKQuery(recordType: "Note", predicate: NSPredicate(format: "priority == 1 OR priority == 2"))
        _ = try await database.records(matching: bad, inZoneWith: zoneID)
        try check(false, "an OR predicate is refused")
    } catch let error as CKError {
        try check(
            error.code == .invalidArguments, "an OR predicate is invalidArguments:\n\(error.localizedDescription)")
    }

    try await database.deleteRecord(withID: CKRecord.ID(recordName: "note-5", zoneID: zoneID))
    let token = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: archived)
    let changes = try await database.recordZoneChanges(inZoneWith: zoneID, since: token)
    try check(changes.modificationResultsByID.count == 4, "four notes changed since the archived token")
    try check(
        !changes.modificationResultsByID.keys.contains { $0.recordName == "note-5" },
        "the deleted note is not among the changes (deletions: \(changes.deletions.map(\.recordID.recordName)))")

    let place = CKRecord(recordType: "Place")
    place["location"] = CLLocation(latitude: 48.8606, longitude: 2.3376)
    _ = try await container.publicCloudDatabase.save(place)
    let near = CKQuery(
        recordType: "Place",
        predicate: NSPredicate(
            format: "distanceToLocation:fromLocation:(location, %@) < 1",
            CLLocation(latitude: 48.8583, longitude: 2.3375)))
    let (found, _) = try await container.publicCloudDatabase.records(matching: near)
    try check(found.contains { $0.0 == place.recordID }, "a place found within 1 km in the public database")

    try await database.deleteRecordZone(withID: zoneID)
    print("\(checks) passed, 0 failed")
}

do {
    try await runChecks()
} catch {
    print("FAILED after \(checks) checks: \(error)")
    if let items = (error as? CKError)?.partialErrorsByItemID {
        for (id, e) in items { print("  \(id): \(e)") }
    }
    print("\(checks) passed, 1 failed")
    exit(1)
}
