// The modify call's types, the same on every engine: save policies, operations, results.

import RecordModel

/// What to do when the record being saved already exists.
public enum SavePolicy: Sendable, Hashable {
    /// Save only if the record's `recordChangeTag` is the server's (a new record has none);
    /// otherwise serverRecordChanged (14) carrying the server's record. CloudKit's default.
    case ifServerRecordUnchanged
    /// Ignore the tag; write the given fields over the server's, keeping the server's others.
    case changedKeys
    /// Ignore the tag; replace the server's record with the given one.
    case allKeys
}

/// One item of `Database.modify(_:atomically:)`.
public enum RecordOperation: Sendable {
    /// Save under `policy`. `mergingFields` with `.ifServerRecordUnchanged`: after the change-tag
    /// check, fields the record does not carry keep the server's values (Web Services `update`).
    case save(Record, SavePolicy, mergingFields: Bool)
    /// Delete, with the deleteSelf cascade. With a change tag, only while the server's record
    /// still has it (else serverRecordChanged, 14, carrying the server's record).
    case delete(RecordID, ifChangeTag: String?)
}

/// The per-item outcome of `modifyRecords`, in the order the items were given.
///
/// ```swift
/// let r = try await db.modifyRecords(saving: [a, b], deleting: [oldID])
/// if let e = r.partialFailure { print(e.partialErrors) }
/// ```
public struct ModifyResult: Sendable {
    /// One entry per record to save, in the order given: the saved record as the server now holds
    /// it (system fields and change tag set), or why it was not saved.
    public var saveResults: [(RecordID, Result<Record, CirrusError>)]
    /// One entry per id to delete, in the order given: success, or why it was not deleted.
    public var deleteResults: [(RecordID, Result<Void, CirrusError>)]

    /// A result from its per-item outcomes (an engine's `modifyRecords` builds one).
    public init(
        saveResults: [(RecordID, Result<Record, CirrusError>)], deleteResults: [(RecordID, Result<Void, CirrusError>)]
    ) {
        self.saveResults = saveResults
        self.deleteResults = deleteResults
    }

    /// partialFailure (2) listing every failed item's error, or nil when every item succeeded.
    public var partialFailure: CirrusError? {
        var errs: [RecordID: CirrusError] = [:]
        for (id, r) in saveResults { if case .failure(let e) = r { errs[id] = e } }
        for (id, r) in deleteResults { if case .failure(let e) = r { errs[id] = e } }
        if errs.isEmpty { return nil }
        return CirrusError(
            .partialFailure, "\(errs.count) of \(saveResults.count + deleteResults.count) items failed",
            partialErrors: errs)
    }

    /// The saved records, throwing partialFailure if any item failed.
    public func get() throws(CirrusError) -> [Record] {
        if let e = partialFailure { throw e }
        return saveResults.compactMap { try? $0.1.get() }  // no partial failure: every result is a success
    }
}
