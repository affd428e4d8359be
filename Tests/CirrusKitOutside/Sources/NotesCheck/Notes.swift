// A small notes model in the style of Apple's CloudKit samples. Only CloudKit's names are used;
// on Apple platforms this file compiles with `import CloudKit` instead of `import CirrusKit`.
// This file imports no Foundation: CirrusKit brings it, as CloudKit does.

import CirrusKit

enum CheckFailure: Error, CustomStringConvertible {
    case failed(String)
    var description: String {
        switch self {
        case .failed(let s): return s
        }
    }
}

var checks = 0

func check(_ condition: Bool, _ what: String) throws {
    checks += 1
    if !condition { throw CheckFailure.failed("FAILED: \(what)") }
    print("ok \(checks) - \(what)")
}

struct Note {
    static let recordType = "Note"
    var title: String
    var body: String
    var priority: Int

    func record(in zone: CKRecordZone.ID) -> CKRecord {
        let name = title.lowercased().replacingOccurrences(of: " ", with: "-")
        let record = CKRecord(recordType: Note.recordType, recordID: CKRecord.ID(recordName: name, zoneID: zone))
        record["title"] = title as CKRecordValue
        record["body"] = body as CKRecordValue
        record["priority"] = priority as CKRecordValue
        return record
    }

    init(title: String, body: String, priority: Int) {
        self.title = title
        self.body = body
        self.priority = priority
    }

    init?(record: CKRecord) {
        guard let title = record["title"] as? String, let priority = record["priority"] as? Int else { return nil }
        self.init(title: title, body: record["body"] as? String ?? "", priority: priority)
    }
}

/// Saves notes with a CKModifyRecordsOperation, as the samples do.
func saveNotes(_ notes: [Note], in zone: CKRecordZone.ID, database: CKDatabase) async throws -> [CKRecord] {
    try await withCheckedThrowingContinuation { continuation in
        let operation = CKModifyRecordsOperation(
            recordsToSave: notes.map { $0.record(in: zone) }, recordIDsToDelete: nil)
        var saved: [CKRecord] = []
        operation.perRecordSaveBlock = { _, result in
            if case .success(let record) = result { saved.append(record) }
        }
        operation.modifyRecordsResultBlock = { result in
            switch result {
            case .success: continuation.resume(returning: saved)
            case .failure(let error): continuation.resume(throwing: error)
            }
        }
        database.add(operation)
    }
}

/// Fetches every note of a zone with CKQueryOperation, following cursors.
func fetchNotes(in zone: CKRecordZone.ID, database: CKDatabase, pageSize: Int) async throws -> [Note] {
    let query = CKQuery(recordType: Note.recordType, predicate: NSPredicate(value: true))
    query.sortDescriptors = [NSSortDescriptor(key: "priority", ascending: true)]
    var notes: [Note] = []
    var cursor: CKQueryOperation.Cursor? = nil
    repeat {
        let operation = cursor.map { CKQueryOperation(cursor: $0) } ?? CKQueryOperation(query: query)
        operation.zoneID = zone
        operation.resultsLimit = pageSize
        cursor = try await withCheckedThrowingContinuation { continuation in
            operation.recordMatchedBlock = { _, result in
                if case .success(let record) = result, let note = Note(record: record) { notes.append(note) }
            }
            operation.queryResultBlock = { result in continuation.resume(with: result) }
            database.add(operation)
        }
    } while cursor != nil
    return notes
}
