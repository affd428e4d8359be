// The README's "CloudKit code on Linux" example, verbatim (kept in step by hand).

import CirrusKit

@main struct Notes {
    static func main() async throws {
        let container = CKContainer(identifier: "iCloud.com.example.notes")
        guard try await container.accountStatus() == .available else { return print("set CIRRUS_USER") }
        let db = container.privateCloudDatabase

        let zone = try await db.save(CKRecordZone(zoneName: "Notes"))
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n1", zoneID: zone.zoneID))
        note["title"] = "Groceries"
        note["priority"] = 2
        note["where"] = CLLocation(latitude: 48.8606, longitude: 2.3376)
        _ = try await db.save(note)

        let query = CKQuery(recordType: "Note", predicate: NSPredicate(format: "priority >= %d", 2))
        query.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        let (matches, _) = try await db.records(matching: query, inZoneWith: zone.zoneID)
        for (id, result) in matches { print(id.recordName, (try result.get())["title"] as? String ?? "") }

        do {
            let bad = CKQuery(recordType: "Note", predicate: NSPredicate(format: "priority == 1 OR priority == 2"))
            _ = try await db.records(matching: bad, inZoneWith: zone.zoneID)
        } catch let error as CKError where error.code == .invalidArguments {
            print(error.localizedDescription)  // the checker's message, a caret under OR, a hint
        }
    }
}
