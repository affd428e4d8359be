// Operations: CKOperation and CKDatabaseOperation (Foundation `Operation`s), CKQueryOperation,
// CKModifyRecordsOperation and CKFetchRecordsOperation. An operation's `main()` runs its async
// work on a task and waits for it, so the operation finishes — and its dependents start, and an
// OperationQueue sees it done — when every block has been called. The change-fetching and zone
// operations are in CKOperation+Changes.swift.
//
// Sendable: as Apple's, an operation is configured (its properties and blocks set) before it is
// added to a database or a queue and not changed afterwards; it reads them on its own thread
// then, and calls the blocks from it. That is the documented contract, not a lock, so the
// classes are `@unchecked Sendable`.

import Cirrus

/// The base of CloudKit's operations.
open class CKOperation: Operation, @unchecked Sendable {
    /// An operation's id.
    public typealias ID = String

    /// Settings of an operation (kept; Cirrus applies `timeoutIntervalForRequest` to nothing).
    open class Configuration: NSObject, @unchecked Sendable {
        /// The container the operation runs against (nil: the database's).
        open var container: CKContainer?
        /// How long a request may take.
        open var timeoutIntervalForRequest: TimeInterval = 60
        /// How long the whole operation may take.
        open var timeoutIntervalForResource: TimeInterval = 7 * 24 * 3600
        /// Whether cellular data may be used (meaningless here).
        open var allowsCellularAccess: Bool = true
        /// Whether the operation outlives the app (not supported: always false in effect).
        open var isLongLived: Bool = false
        /// Default settings.
        public override init() { super.init() }
    }

    /// The operation's id.
    public let operationID: ID = UUID().uuidString
    /// The operation's settings.
    open var configuration: Configuration! = Configuration()

    /// A new operation.
    public override init() { super.init() }

    /// Runs the operation's work and returns when it is done.
    open override func main() {
        let semaphore = DispatchSemaphore(value: 0)
        let me = UncheckedSendable(self)
        Task.detached {
            await me.value.perform()
            semaphore.signal()
        }
        semaphore.wait()
    }

    /// The operation's work (subclasses).
    func perform() async {}

    /// operationCancelled, for an operation cancelled before or while it ran.
    var cancelledError: CKError { CKError(.operationCancelled, "the operation was cancelled") }
}

/// An operation on one database.
open class CKDatabaseOperation: CKOperation, @unchecked Sendable {
    /// The database (set by `CKDatabase.add(_:)`; nil: the container's private database).
    open var database: CKDatabase?

    /// The database to use.
    var targetDatabase: CKDatabase {
        database ?? configuration?.container?.privateCloudDatabase ?? CKContainer.default().privateCloudDatabase
    }
}

/// Runs a query, or continues one from a cursor: one page of results.
///
/// ```swift
/// let op = CKQueryOperation(query: CKQuery(recordType: "Note", predicate: NSPredicate(value: true)))
/// op.resultsLimit = 50
/// op.recordMatchedBlock = { id, result in if case .success(let note) = result { notes.append(note) } }
/// op.queryResultBlock = { result in if case .success(let cursor) = result { next = cursor } }
/// database.add(op)
/// ```
open class CKQueryOperation: CKDatabaseOperation, @unchecked Sendable {
    /// Where the next page starts.
    public typealias Cursor = CKQueryCursor
    /// "As many as the server chooses" (0).
    public static let maximumResults: Int = 0

    /// The query (nil when continuing from `cursor`).
    open var query: CKQuery?
    /// The cursor to continue from.
    open var cursor: Cursor?
    /// The zone to search (nil: the default zone).
    open var zoneID: CKRecordZone.ID?
    /// Most records in the page (`maximumResults`: the server chooses).
    open var resultsLimit: Int = CKQueryOperation.maximumResults
    /// The fields to fetch (nil: all).
    open var desiredKeys: [CKRecord.FieldKey]?
    /// Called for each record of the page.
    open var recordMatchedBlock: ((CKRecord.ID, Result<CKRecord, any Error>) -> Void)?
    /// Called last: the cursor of the next page (nil: no more), or the error.
    open var queryResultBlock: ((Result<Cursor?, any Error>) -> Void)?
    /// Called for each record (deprecated by Apple: use `recordMatchedBlock`).
    open var recordFetchedBlock: ((CKRecord) -> Void)?
    /// Called last (deprecated by Apple: use `queryResultBlock`).
    open var queryCompletionBlock: ((Cursor?, (any Error)?) -> Void)?

    /// An operation without a query (set `query` or `cursor`).
    public override init() { super.init() }

    /// An operation running `query`.
    public convenience init(query: CKQuery) {
        self.init()
        self.query = query
    }

    /// An operation continuing from `cursor`.
    public convenience init(cursor: Cursor) {
        self.init()
        self.cursor = cursor
    }

    override func perform() async {
        let db = targetDatabase
        do {
            if isCancelled { throw cancelledError }
            let page: (matchResults: [(CKRecord.ID, Result<CKRecord, any Error>)], queryCursor: Cursor?)
            if let cursor {
                page = try await db.records(
                    continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            } else if let query {
                page = try await db.records(
                    matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            } else {
                throw CKError(.invalidArguments, "a CKQueryOperation needs a query or a cursor")
            }
            for (id, result) in page.matchResults {
                recordMatchedBlock?(id, result)
                if case .success(let r) = result { recordFetchedBlock?(r) }
            }
            queryResultBlock?(.success(page.queryCursor))
            queryCompletionBlock?(page.queryCursor, nil)
        } catch {
            queryResultBlock?(.failure(error))
            queryCompletionBlock?(nil, error)
        }
    }
}

/// Saves and deletes records in one request.
///
/// ```swift
/// let op = CKModifyRecordsOperation(recordsToSave: [note], recordIDsToDelete: [old.recordID])
/// op.savePolicy = .changedKeys
/// op.perRecordSaveBlock = { id, result in … }
/// op.modifyRecordsResultBlock = { result in … }   // .failure(partialFailure) when an item failed
/// database.add(op)
/// ```
open class CKModifyRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    /// How a save treats the server's version of a record.
    public enum RecordSavePolicy: Int, Sendable, Hashable {
        /// Save only if the server's version is the one fetched (its change tag); otherwise
        /// serverRecordChanged with the server's record.
        case ifServerRecordUnchanged = 0
        /// Write the changed fields over the server's, whatever its version.
        case changedKeys = 1
        /// Replace the server's record, whatever its version.
        case allKeys = 2
    }

    /// The records to save.
    open var recordsToSave: [CKRecord]?
    /// The ids of the records to delete.
    open var recordIDsToDelete: [CKRecord.ID]?
    /// The save policy.
    open var savePolicy: RecordSavePolicy = .ifServerRecordUnchanged
    /// Custom-zone items succeed or fail together (per zone).
    open var isAtomic: Bool = true
    /// Kept, not used (CloudKit returns it in change fetches).
    open var clientChangeTokenData: Data?
    /// Called with each record's outcome.
    open var perRecordSaveBlock: ((CKRecord.ID, Result<CKRecord, any Error>) -> Void)?
    /// Called with each deletion's outcome.
    open var perRecordDeleteBlock: ((CKRecord.ID, Result<Void, any Error>) -> Void)?
    /// Called last: success, or partialFailure (`partialErrorsByItemID`) or the request's error.
    open var modifyRecordsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the saved records, the deleted ids, the error.
    open var modifyRecordsCompletionBlock: (([CKRecord]?, [CKRecord.ID]?, (any Error)?) -> Void)?

    /// An operation saving `recordsToSave` and deleting `recordIDsToDelete`.
    public init(recordsToSave: [CKRecord]? = nil, recordIDsToDelete: [CKRecord.ID]? = nil) {
        self.recordsToSave = recordsToSave
        self.recordIDsToDelete = recordIDsToDelete
        super.init()
    }

    override func perform() async {
        let saving = recordsToSave ?? []
        let deleting = recordIDsToDelete ?? []
        do {
            if isCancelled { throw cancelledError }
            let (saves, deletes) = try await targetDatabase.modifyInOrder(
                saving: saving, deleting: deleting, savePolicy: savePolicy, atomically: isAtomic)
            var failures: [AnyHashable: any Error] = [:]
            var saved: [CKRecord] = []
            for (rec, result) in zip(saving, saves) {
                perRecordSaveBlock?(rec.recordID, result.mapError { $0 })
                switch result {
                case .success(let r): saved.append(r)
                case .failure(let e): failures[rec.recordID] = e
                }
            }
            var deleted: [CKRecord.ID] = []
            for (id, result) in zip(deleting, deletes) {
                perRecordDeleteBlock?(id, result.mapError { $0 })
                switch result {
                case .success: deleted.append(id)
                case .failure(let e): failures[id] = e
                }
            }
            if failures.isEmpty {
                modifyRecordsResultBlock?(.success(()))
                modifyRecordsCompletionBlock?(saved, deleted, nil)
            } else {
                let e = CKError(
                    .partialFailure, "\(failures.count) of \(saving.count + deleting.count) items failed",
                    [CKPartialErrorsByItemIDKey: failures])
                modifyRecordsResultBlock?(.failure(e))
                modifyRecordsCompletionBlock?(saved, deleted, e)
            }
        } catch {
            modifyRecordsResultBlock?(.failure(error))
            modifyRecordsCompletionBlock?(nil, nil, error)
        }
    }
}

/// Fetches records by id.
open class CKFetchRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The ids to fetch.
    open var recordIDs: [CKRecord.ID]?
    /// The fields to fetch (nil: all).
    open var desiredKeys: [CKRecord.FieldKey]?
    /// Called with each record's outcome (unknownItem for a missing one).
    open var perRecordResultBlock: ((CKRecord.ID, Result<CKRecord, any Error>) -> Void)?
    /// Called last: success, partialFailure, or the request's error.
    open var fetchRecordsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the records by id, and the error.
    open var fetchRecordsCompletionBlock: (([CKRecord.ID: CKRecord]?, (any Error)?) -> Void)?

    /// An operation without ids (set `recordIDs`).
    public override init() { super.init() }

    /// An operation fetching `recordIDs`.
    public convenience init(recordIDs: [CKRecord.ID]) {
        self.init()
        self.recordIDs = recordIDs
    }

    override func perform() async {
        let ids = recordIDs ?? []
        do {
            if isCancelled { throw cancelledError }
            let found = try await targetDatabase.records(for: ids, desiredKeys: desiredKeys)
            var records: [CKRecord.ID: CKRecord] = [:]
            var failures: [AnyHashable: any Error] = [:]
            for id in ids {
                guard let result = found[id] else { continue }
                perRecordResultBlock?(id, result)
                switch result {
                case .success(let r): records[id] = r
                case .failure(let e): failures[id] = e
                }
            }
            let error: CKError? =
                failures.isEmpty
                ? nil
                : CKError(
                    .partialFailure, "\(failures.count) of \(ids.count) records failed",
                    [CKPartialErrorsByItemIDKey: failures])
            fetchRecordsResultBlock?(error.map { .failure($0) } ?? .success(()))
            fetchRecordsCompletionBlock?(records, error)
        } catch {
            fetchRecordsResultBlock?(.failure(error))
            fetchRecordsCompletionBlock?(nil, error)
        }
    }
}
