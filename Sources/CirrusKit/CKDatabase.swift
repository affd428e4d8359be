// CKDatabase: a container's public, private or shared database — the async API of CloudKit's
// current SDK for records and queries (zones, changes and subscriptions are in
// CKDatabase+Zones.swift, the completion-handler forms in CKDatabase+Completion.swift). Each
// call turns CK values into the façade's (Record, RecordQuery, RecordOperation), asks the
// container's backend, and turns the answer back; per-item errors are CKErrors carrying the
// client's and the server's records.

import Cirrus
import RecordModel

/// A database of a container.
///
/// ```swift
/// let db = CKContainer(identifier: "iCloud.com.example.notes").privateCloudDatabase
/// let note = CKRecord(recordType: "Note")
/// note["title"] = "Groceries"
/// let saved = try await db.save(note)
/// let (matches, cursor) = try await db.records(matching: CKQuery(recordType: "Note", predicate: NSPredicate(value: true)))
/// ```
open class CKDatabase: NSObject, @unchecked Sendable {
    // @unchecked: every stored member is a `let`.
    /// Which database.
    public enum Scope: Int, Sendable, Hashable {
        /// The public database.
        case `public` = 1
        /// The current user's private database.
        case `private` = 2
        /// The shared database (not supported by Cirrus).
        case shared = 3
    }

    /// Which database this is.
    public let databaseScope: Scope
    /// The container the database belongs to.
    let container: CKContainer

    /// Runs the operations added with `add(_:)`.
    static let operationQueue: OperationQueue = {
        let q = OperationQueue()
        q.name = "CirrusKit operations"
        q.maxConcurrentOperationCount = 4
        return q
    }()

    init(container: CKContainer, scope: Scope) {
        self.container = container
        databaseScope = scope
        super.init()
    }

    /// The backend of this database.
    var backend: any DatabaseBackend { container.backend.database(databaseScope) }

    /// Runs `operation` against this database.
    public func add(_ operation: CKDatabaseOperation) {
        operation.database = self
        Self.operationQueue.addOperation(operation)
    }

    // MARK: records

    /// The record with `recordID`; unknownItem when there is none.
    public func record(for recordID: CKRecord.ID) async throws -> CKRecord {
        guard let result = try await records(for: [recordID])[recordID] else {
            throw CKError(.unknownItem, "record \"\(recordID.recordName)\" not found")
        }
        return try result.get()
    }

    /// The records with `ids`, each as a result (unknownItem for a missing one); `desiredKeys`
    /// limits the fields fetched (nil: all).
    public func records(
        for ids: [CKRecord.ID], desiredKeys: [CKRecord.FieldKey]? = nil
    ) async throws -> [CKRecord.ID: Result<CKRecord, any Error>] {
        let found = try await backend.records(for: ids.map(\.cirrus), desiredKeys: desiredKeys)
        var out: [CKRecord.ID: Result<CKRecord, any Error>] = [:]
        for (i, item) in found.enumerated() {
            let id = i < ids.count ? ids[i] : CKRecord.ID(item.0)
            switch item.1 {
            case .success(let r): out[id] = .success(await makeRecord(r))
            case .failure(let e): out[id] = .failure(e)
            }
        }
        return out
    }

    /// Saves `record` (with `.ifServerRecordUnchanged`): the record as the server now holds it.
    /// serverRecordChanged (with `serverRecord`) when the server's version changed since it
    /// was fetched.
    public func save(_ record: CKRecord) async throws -> CKRecord {
        let r = try await modifyRecords(saving: [record], deleting: [])
        guard let result = r.saveResults[record.recordID] else {
            throw CKError(.internalError, "no result for the save of \"\(record.recordID.recordName)\"")
        }
        return try result.get()
    }

    /// Deletes the record with `recordID` (and the records referring to it with `.deleteSelf`).
    @discardableResult
    public func deleteRecord(withID recordID: CKRecord.ID) async throws -> CKRecord.ID {
        let r = try await modifyRecords(saving: [], deleting: [recordID])
        if case .failure(let e)? = r.deleteResults[recordID] { throw e }
        return recordID
    }

    /// Saves and deletes in one request: a result per record and per id. Custom-zone items are
    /// atomic per zone when `atomically`; default-zone items are independent.
    public func modifyRecords(
        saving recordsToSave: [CKRecord], deleting recordIDsToDelete: [CKRecord.ID],
        savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true
    ) async throws -> ModifyResults<CKRecord.ID, CKRecord> {
        let (saves, deletes) = try await modifyInOrder(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
        return (Self.byID(recordsToSave.map(\.recordID), saves), Self.byID(recordIDsToDelete, deletes))
    }

    /// What `modifyRecords`, `modifyRecordZones` and `modifySubscriptions` answer: a result
    /// per item saved, by its ID, and per ID deleted.
    public typealias ModifyResults<ID: Hashable, Item> = (
        saveResults: [ID: Result<Item, any Error>], deleteResults: [ID: Result<Void, any Error>]
    )

    /// `outcomes`, in the order of `ids`, by ID.
    static func byID<ID: Hashable, Item, Failure: Error>(
        _ ids: [ID], _ outcomes: [Result<Item, Failure>]
    ) -> [ID: Result<Item, any Error>] {
        var out: [ID: Result<Item, any Error>] = [:]
        for (id, outcome) in zip(ids, outcomes) { out[id] = outcome.mapError { $0 } }
        return out
    }

    /// `modifyRecords` with the results in the order of the items (operations report them so).
    func modifyInOrder(
        saving recordsToSave: [CKRecord], deleting recordIDsToDelete: [CKRecord.ID],
        savePolicy: CKModifyRecordsOperation.RecordSavePolicy, atomically: Bool
    ) async throws(CKError) -> ([Result<CKRecord, CKError>], [Result<Void, CKError>]) {
        if recordsToSave.isEmpty && recordIDsToDelete.isEmpty { return ([], []) }
        let backend = self.backend
        // What each record sends: CloudKit uploads only the changed keys, and the server keeps
        // the others (`mergingFields`) — for `.changedKeys`, and for `.ifServerRecordUnchanged`
        // on a record the server has (it has a change tag) unless a key was removed, which a
        // merge cannot say: such a record replaces the server's with every field it holds.
        let plans = recordsToSave.map { rec -> (onlyChanged: Bool, merging: Bool) in
            switch savePolicy {
            case .changedKeys: return (true, false)
            case .allKeys: return (false, false)
            case .ifServerRecordUnchanged:
                let merge = rec.recordChangeTag != nil && !rec.hasRemovedKeys
                return (merge, merge)
            }
        }
        var stored: [ObjectIdentifier: Asset] = [:]
        for (rec, plan) in zip(recordsToSave, plans) {
            for (field, asset) in rec.assetsToSave(onlyChanged: plan.onlyChanged) {
                guard let url = asset.fileURL, let bytes = try? Data(contentsOf: url) else {
                    throw CKError(
                        .assetFileNotFound,
                        "the file of asset field \"\(field)\" of record \"\(rec.recordID.recordName)\" cannot be read")
                }
                stored[ObjectIdentifier(asset)] = try await backend.storeAsset(
                    Array(bytes), record: rec.recordID.cirrus, recordType: rec.recordType, field: field)
            }
        }
        let policy: SavePolicy =
            switch savePolicy {
            case .ifServerRecordUnchanged: .ifServerRecordUnchanged
            case .changedKeys: .changedKeys
            case .allKeys: .allKeys
            }
        var operations: [RecordOperation] = []
        for (rec, plan) in zip(recordsToSave, plans) {
            let r = try rec.cirrusRecord(onlyChanged: plan.onlyChanged) { (a) throws(CKError) in
                guard let s = stored[ObjectIdentifier(a)] else {
                    throw CKError(.assetFileNotFound, "an asset of \"\(rec.recordID.recordName)\" was not stored")
                }
                return s
            }
            operations.append(.save(r, policy, mergingFields: plan.merging))
        }
        operations += recordIDsToDelete.map { .delete($0.cirrus, ifChangeTag: nil) }
        let results = try await backend.modify(operations, atomically: atomically)
        var saves: [Result<CKRecord, CKError>] = []
        for (i, rec) in recordsToSave.enumerated() {
            switch i < results.count ? results[i].1 : .failure(CKError(.internalError, "no result")) {
            case .success(let r?):
                rec.adopt(r, asset: { CKAsset(stored: $0, file: nil) })
                await materializeAssets(of: rec, r)
                saves.append(.success(rec))
            case .success(nil): saves.append(.failure(CKError(.internalError, "the server returned no record")))
            case .failure(let e): saves.append(.failure(e.adding(CKRecordChangedErrorClientRecordKey, rec)))
            }
        }
        var deletes: [Result<Void, CKError>] = []
        for j in recordIDsToDelete.indices {
            let k = recordsToSave.count + j
            switch k < results.count ? results[k].1 : .failure(CKError(.internalError, "no result")) {
            case .success: deletes.append(.success(()))
            case .failure(let e): deletes.append(.failure(e))
            }
        }
        return (saves, deletes)
    }

    // MARK: queries

    /// The first page of `query`'s results in `zoneID` (nil: the default zone, as Web
    /// Services), at most `resultsLimit` (0, `CKQueryOperation.maximumResults`: the server
    /// chooses), and a cursor when more may follow. A predicate CloudKit refuses throws
    /// invalidArguments with the checker's message, a caret under the part at fault and a hint.
    public func records(
        matching query: CKQuery, inZoneWith zoneID: CKRecordZone.ID? = nil, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (
        matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?
    ) {
        let q = try query.recordQuery()
        let page = try await backend.query(
            q, zone: (zoneID ?? .default).cirrus, desiredKeys: desiredKeys, limit: max(0, resultsLimit))
        return (await matches(page), page.cursor)
    }

    /// The next page of the query `queryCursor` came from.
    public func records(
        continuingMatchFrom queryCursor: CKQueryOperation.Cursor, desiredKeys: [CKRecord.FieldKey]? = nil,
        resultsLimit: Int = CKQueryOperation.maximumResults
    ) async throws -> (
        matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: CKQueryOperation.Cursor?
    ) {
        let page = try await backend.query(
            continuing: queryCursor, desiredKeys: desiredKeys, limit: max(0, resultsLimit))
        return (await matches(page), page.cursor)
    }

    func matches(_ page: QueryPage) async -> [(CKRecord.ID, Result<CKRecord, any Error>)] {
        var out: [(CKRecord.ID, Result<CKRecord, any Error>)] = []
        for (id, result) in page.matches {
            switch result {
            case .success(let r): out.append((CKRecord.ID(id), .success(await makeRecord(r))))
            case .failure(let e): out.append((CKRecord.ID(id), .failure(e)))
            }
        }
        return out
    }

    // MARK: conversions

    /// A fetched record, with a local file for each asset.
    func makeRecord(_ r: Record) async -> CKRecord {
        let rec = CKRecord(r, asset: { CKAsset(stored: $0, file: nil) })
        await materializeAssets(of: rec, r)
        return rec
    }

    /// Gives each asset of `rec` (as the server returned `r`) its local file.
    func materializeAssets(of rec: CKRecord, _ r: Record) async {
        guard r.fields.contains(where: { $0.value.scalarType == .asset }) else { return }
        var files: [Asset: URL] = [:]
        for (_, v) in r.fields {
            for case .asset(let a) in v.elements where files[a] == nil {
                if let url = await backend.assetFile(a, of: r.recordID) { files[a] = url }
            }
        }
        rec.adopt(r, asset: { CKAsset(stored: $0, file: files[$0]) })
    }
}
