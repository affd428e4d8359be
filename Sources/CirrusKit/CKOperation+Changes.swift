// Change-fetching and zone operations: CKFetchRecordZoneChangesOperation,
// CKFetchDatabaseChangesOperation and CKModifyRecordZonesOperation. With `fetchAllChanges` (the
// default) a fetch asks again while the server says more are coming, reporting each new token.

/// Fetches the changed and deleted records of zones since their tokens.
///
/// ```swift
/// let config = CKFetchRecordZoneChangesOperation.ZoneConfiguration(previousServerChangeToken: saved)
/// let op = CKFetchRecordZoneChangesOperation(recordZoneIDs: [work], configurationsByRecordZoneID: [work: config])
/// op.recordWasChangedBlock = { id, result in … }
/// op.recordWithIDWasDeletedBlock = { id, type in … }
/// op.recordZoneFetchResultBlock = { zone, result in if case .success(let r) = result { saved = r.serverChangeToken } }
/// database.add(op)
/// ```
open class CKFetchRecordZoneChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// Where and how to fetch one zone's changes.
    open class ZoneConfiguration: NSObject, @unchecked Sendable {
        /// The token of the last fetch (nil: from the start).
        open var previousServerChangeToken: CKServerChangeToken?
        /// Most changes per page (nil: the server chooses).
        open var resultsLimit: Int?
        /// The fields to fetch (nil: all).
        open var desiredKeys: [CKRecord.FieldKey]?
        /// A configuration.
        public init(
            previousServerChangeToken: CKServerChangeToken? = nil, resultsLimit: Int? = nil,
            desiredKeys: [CKRecord.FieldKey]? = nil
        ) {
            self.previousServerChangeToken = previousServerChangeToken
            self.resultsLimit = resultsLimit
            self.desiredKeys = desiredKeys
            super.init()
        }
    }

    /// The zones to fetch.
    open var recordZoneIDs: [CKRecordZone.ID]?
    /// Per-zone settings.
    open var configurationsByRecordZoneID: [CKRecordZone.ID: ZoneConfiguration]?
    /// Fetch every page (true) or one page per zone.
    open var fetchAllChanges: Bool = true
    /// Called for each changed record.
    open var recordWasChangedBlock: ((CKRecord.ID, Result<CKRecord, any Error>) -> Void)?
    /// Called for each deleted record.
    open var recordWithIDWasDeletedBlock: ((CKRecord.ID, CKRecord.RecordType) -> Void)?
    /// Called with a zone's token after each page but the last.
    open var recordZoneChangeTokensUpdatedBlock: ((CKRecordZone.ID, CKServerChangeToken?, Data?) -> Void)?
    /// Called once per zone: its last token and whether more are coming, or the error.
    open var recordZoneFetchResultBlock:
        (
            (
                CKRecordZone.ID,
                Result<
                    (serverChangeToken: CKServerChangeToken, clientChangeTokenData: Data?, moreComing: Bool), any Error
                >
            ) -> Void
        )?
    /// Called last: success, or the first zone's error.
    open var fetchRecordZoneChangesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called for each changed record (deprecated by Apple: use `recordWasChangedBlock`).
    open var recordChangedBlock: ((CKRecord) -> Void)?
    /// Called last (deprecated by Apple: use `fetchRecordZoneChangesResultBlock`).
    open var fetchRecordZoneChangesCompletionBlock: (((any Error)?) -> Void)?

    /// An operation without zones (set `recordZoneIDs`).
    public override init() { super.init() }

    /// An operation fetching the changes of `recordZoneIDs`.
    public convenience init(
        recordZoneIDs: [CKRecordZone.ID], configurationsByRecordZoneID: [CKRecordZone.ID: ZoneConfiguration]? = nil
    ) {
        self.init()
        self.recordZoneIDs = recordZoneIDs
        self.configurationsByRecordZoneID = configurationsByRecordZoneID
    }

    override func perform() async {
        let db = targetDatabase
        var firstError: (any Error)?
        for zone in recordZoneIDs ?? [] {
            let config = configurationsByRecordZoneID?[zone]
            var token = config?.previousServerChangeToken
            do {
                while true {
                    if isCancelled { throw cancelledError }
                    let page = try await db.recordZoneChanges(
                        inZoneWith: zone, since: token, desiredKeys: config?.desiredKeys,
                        resultsLimit: config?.resultsLimit)
                    for (id, result) in page.modificationResultsByID.sorted(by: {
                        $0.key.recordName < $1.key.recordName
                    }) {
                        let r = result.map(\.record)
                        recordWasChangedBlock?(id, r)
                        if case .success(let rec) = r { recordChangedBlock?(rec) }
                    }
                    for d in page.deletions { recordWithIDWasDeletedBlock?(d.recordID, d.recordType) }
                    token = page.changeToken
                    if page.moreComing && fetchAllChanges {
                        recordZoneChangeTokensUpdatedBlock?(zone, page.changeToken, nil)
                        continue
                    }
                    recordZoneFetchResultBlock?(zone, .success((page.changeToken, nil, page.moreComing)))
                    break
                }
            } catch {
                recordZoneFetchResultBlock?(zone, .failure(error))
                firstError = firstError ?? error
            }
        }
        fetchRecordZoneChangesResultBlock?(firstError.map { .failure($0) } ?? .success(()))
        fetchRecordZoneChangesCompletionBlock?(firstError)
    }
}

/// Fetches which zones of a database changed since a token.
open class CKFetchDatabaseChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The token of the last fetch (nil: every zone).
    open var previousServerChangeToken: CKServerChangeToken?
    /// Most zones per page (0: the server chooses).
    open var resultsLimit: Int = 0
    /// Fetch every page (true) or one.
    open var fetchAllChanges: Bool = true
    /// Called for each zone created or changed.
    open var recordZoneWithIDChangedBlock: ((CKRecordZone.ID) -> Void)?
    /// Called for each zone deleted.
    open var recordZoneWithIDWasDeletedBlock: ((CKRecordZone.ID) -> Void)?
    /// Called for each zone purged (never, in Cirrus).
    open var recordZoneWithIDWasPurgedBlock: ((CKRecordZone.ID) -> Void)?
    /// Called with the token after each page but the last.
    open var changeTokenUpdatedBlock: ((CKServerChangeToken) -> Void)?
    /// Called last: the token to keep and whether more are coming, or the error.
    open var fetchDatabaseChangesResultBlock:
        ((Result<(serverChangeToken: CKServerChangeToken, moreComing: Bool), any Error>) -> Void)?
    /// Called last (deprecated by Apple: use `fetchDatabaseChangesResultBlock`).
    open var fetchDatabaseChangesCompletionBlock: ((CKServerChangeToken?, Bool, (any Error)?) -> Void)?

    /// An operation fetching the changes since `previousServerChangeToken`.
    public init(previousServerChangeToken: CKServerChangeToken? = nil) {
        self.previousServerChangeToken = previousServerChangeToken
        super.init()
    }

    override func perform() async {
        let db = targetDatabase
        var token = previousServerChangeToken
        do {
            while true {
                if isCancelled { throw cancelledError }
                let page = try await db.databaseChanges(
                    since: token, resultsLimit: resultsLimit > 0 ? resultsLimit : nil)
                for m in page.modifications { recordZoneWithIDChangedBlock?(m.zoneID) }
                for d in page.deletions { recordZoneWithIDWasDeletedBlock?(d.zoneID) }
                token = page.changeToken
                if page.moreComing && fetchAllChanges {
                    changeTokenUpdatedBlock?(page.changeToken)
                    continue
                }
                fetchDatabaseChangesResultBlock?(.success((page.changeToken, page.moreComing)))
                fetchDatabaseChangesCompletionBlock?(page.changeToken, page.moreComing, nil)
                return
            }
        } catch {
            fetchDatabaseChangesResultBlock?(.failure(error))
            fetchDatabaseChangesCompletionBlock?(nil, false, error)
        }
    }
}

/// Creates and deletes zones.
open class CKModifyRecordZonesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The zones to create.
    open var recordZonesToSave: [CKRecordZone]?
    /// The ids of the zones to delete.
    open var recordZoneIDsToDelete: [CKRecordZone.ID]?
    /// Called with each zone's outcome.
    open var perRecordZoneSaveBlock: ((CKRecordZone.ID, Result<CKRecordZone, any Error>) -> Void)?
    /// Called with each deletion's outcome.
    open var perRecordZoneDeleteBlock: ((CKRecordZone.ID, Result<Void, any Error>) -> Void)?
    /// Called last: success, partialFailure, or the request's error.
    open var modifyRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// Called last (deprecated by Apple): the saved zones, the deleted ids, the error.
    open var modifyRecordZonesCompletionBlock: (([CKRecordZone]?, [CKRecordZone.ID]?, (any Error)?) -> Void)?

    /// An operation creating `recordZonesToSave` and deleting `recordZoneIDsToDelete`.
    public init(recordZonesToSave: [CKRecordZone]? = nil, recordZoneIDsToDelete: [CKRecordZone.ID]? = nil) {
        self.recordZonesToSave = recordZonesToSave
        self.recordZoneIDsToDelete = recordZoneIDsToDelete
        super.init()
    }

    override func perform() async {
        let saving = recordZonesToSave ?? []
        let deleting = recordZoneIDsToDelete ?? []
        do {
            if isCancelled { throw cancelledError }
            let r = try await targetDatabase.modifyRecordZones(saving: saving, deleting: deleting)
            var failures: [AnyHashable: any Error] = [:]
            var saved: [CKRecordZone] = []
            for zone in saving {
                guard let result = r.saveResults[zone.zoneID] else { continue }
                perRecordZoneSaveBlock?(zone.zoneID, result)
                switch result {
                case .success(let z): saved.append(z)
                case .failure(let e): failures[zone.zoneID] = e
                }
            }
            var deleted: [CKRecordZone.ID] = []
            for id in deleting {
                guard let result = r.deleteResults[id] else { continue }
                perRecordZoneDeleteBlock?(id, result)
                switch result {
                case .success: deleted.append(id)
                case .failure(let e): failures[id] = e
                }
            }
            let error: CKError? =
                failures.isEmpty
                ? nil
                : CKError(.partialFailure, "\(failures.count) zones failed", [CKPartialErrorsByItemIDKey: failures])
            modifyRecordZonesResultBlock?(error.map { .failure($0) } ?? .success(()))
            modifyRecordZonesCompletionBlock?(saved, deleted, error)
        } catch {
            modifyRecordZonesResultBlock?(.failure(error))
            modifyRecordZonesCompletionBlock?(nil, nil, error)
        }
    }
}
