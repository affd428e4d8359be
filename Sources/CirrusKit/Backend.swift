// The two backends behind CKContainer and CKDatabase, as one internal protocol in the façade's
// terms (Record, RecordID, ZoneID, RecordQuery, RecordOperation, Subscription): the embedded
// container (EmbeddedBackend.swift, over Cirrus's Container/Database) and a Web Services server
// (RemoteBackend.swift). CKDatabase turns CK values into these and back; a backend only moves
// them and maps its errors to CKError.

import Cirrus
import RecordModel

/// One page of a query.
struct QueryPage: Sendable {
    var matches: [(RecordID, Result<Record, CKError>)]
    var cursor: CKQueryCursor?
}

/// One page of a zone's changes.
struct ZoneChangePage: Sendable {
    var changed: [Record]
    var deleted: [(RecordID, String)]
    var token: Data
    var moreComing: Bool
}

/// One page of a database's zone changes.
struct DatabaseChangePage: Sendable {
    var changed: [ZoneID]
    var deleted: [ZoneID]
    var token: Data
    var moreComing: Bool
}

/// One database of one container, on behalf of the configured user.
protocol DatabaseBackend: Sendable {
    func records(
        for ids: [RecordID], desiredKeys: [String]?
    ) async throws(CKError) -> [(
        RecordID, Result<Record, CKError>
    )]
    func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CKError) -> [(
        RecordID, Result<Record?, CKError>
    )]
    func query(_ q: RecordQuery, zone: ZoneID?, desiredKeys: [String]?, limit: Int) async throws(CKError) -> QueryPage
    func query(continuing cursor: CKQueryCursor, desiredKeys: [String]?, limit: Int) async throws(CKError) -> QueryPage
    func allZones() async throws(CKError) -> [ZoneID]
    func modifyZones(
        saving: [ZoneID], deleting: [ZoneID]
    ) async throws(CKError) -> (
        saved: [(ZoneID, Result<ZoneID, CKError>)], deleted: [(ZoneID, Result<Void, CKError>)]
    )
    func zoneChanges(_ zone: ZoneID, since token: Data?, limit: Int?) async throws(CKError) -> ZoneChangePage
    func databaseChanges(since token: Data?, limit: Int?) async throws(CKError) -> DatabaseChangePage
    func save(_ subscription: Subscription) async throws(CKError) -> Subscription
    func deleteSubscription(_ id: String) async throws(CKError)
    func allSubscriptions() async throws(CKError) -> [Subscription]
    /// Stores a file's bytes for `field` of `record`, returning the field value to save.
    func storeAsset(
        _ bytes: [UInt8], record: RecordID, recordType: String, field: String
    ) async throws(CKError)
        -> Asset
    /// A local file holding an asset of a fetched record (nil when it cannot be had).
    func assetFile(_ asset: Asset, of record: RecordID) async -> URL?
}

/// A container: its databases and what it knows about the user.
protocol ContainerBackend: Sendable {
    func database(_ scope: CKDatabase.Scope) -> any DatabaseBackend
    func accountStatus() async throws(CKError) -> CKAccountStatus
    func userRecordName() async throws(CKError) -> String
    func discover(_ lookup: UserLookupInfo) async throws(CKError) -> FoundUser?
}

/// A user found by discovery.
struct FoundUser: Sendable {
    var userRecordName: String
    var givenName: String?
    var familyName: String?
}

/// Every call fails with the same error: a private database without an account, the shared
/// database, a container that could not be opened.
struct FailingBackend: DatabaseBackend, ContainerBackend {
    let error: CKError

    func records(
        for ids: [RecordID], desiredKeys: [String]?
    ) async throws(CKError) -> [(
        RecordID, Result<Record, CKError>
    )] { throw error }
    func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CKError) -> [(
        RecordID, Result<Record?, CKError>
    )] { throw error }
    func query(_ q: RecordQuery, zone: ZoneID?, desiredKeys: [String]?, limit: Int) async throws(CKError) -> QueryPage {
        throw error
    }
    func query(
        continuing cursor: CKQueryCursor, desiredKeys: [String]?, limit: Int
    ) async throws(CKError)
        -> QueryPage
    { throw error }
    func allZones() async throws(CKError) -> [ZoneID] { throw error }
    func modifyZones(
        saving: [ZoneID], deleting: [ZoneID]
    ) async throws(CKError) -> (
        saved: [(ZoneID, Result<ZoneID, CKError>)], deleted: [(ZoneID, Result<Void, CKError>)]
    ) { throw error }
    func zoneChanges(_ zone: ZoneID, since token: Data?, limit: Int?) async throws(CKError) -> ZoneChangePage {
        throw error
    }
    func databaseChanges(since token: Data?, limit: Int?) async throws(CKError) -> DatabaseChangePage { throw error }
    func save(_ subscription: Subscription) async throws(CKError) -> Subscription { throw error }
    func deleteSubscription(_ id: String) async throws(CKError) { throw error }
    func allSubscriptions() async throws(CKError) -> [Subscription] { throw error }
    func storeAsset(
        _ bytes: [UInt8], record: RecordID, recordType: String, field: String
    ) async throws(CKError)
        -> Asset
    { throw error }
    func assetFile(_ asset: Asset, of record: RecordID) async -> URL? { nil }
    func database(_ scope: CKDatabase.Scope) -> any DatabaseBackend { self }
    func accountStatus() async throws(CKError) -> CKAccountStatus { throw error }
    func userRecordName() async throws(CKError) -> String { throw error }
    func discover(_ lookup: UserLookupInfo) async throws(CKError) -> FoundUser? { throw error }
}

extension CKError {
    /// A Cirrus error as CloudKit's: the same code (Cirrus numbers its codes as CloudKit does),
    /// the message, the server's record and the per-item errors.
    init(_ e: CirrusError) {
        var info: [String: Any] = [NSLocalizedDescriptionKey: e.message]
        if let r = e.serverRecord {
            info[CKRecordChangedErrorServerRecordKey] = CKRecord(r, asset: { CKAsset(stored: $0, file: nil) })
        }
        if let seconds = e.retryAfterSeconds { info[CKErrorRetryAfterKey] = seconds }
        if !e.partialErrors.isEmpty {
            var items: [AnyHashable: any Error] = [:]
            for (id, item) in e.partialErrors { items[CKRecordID(id)] = CKError(item) }
            info[CKPartialErrorsByItemIDKey] = items
        }
        self.init(e.code, userInfo: info)
    }

    /// The same error with `key` set to `value` in its userInfo.
    func adding(_ key: String, _ value: Any) -> CKError {
        var info = userInfo
        info[key] = value
        return CKError(code, userInfo: info)
    }
}
