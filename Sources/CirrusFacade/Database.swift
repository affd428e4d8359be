// Database: one database of a container — the public one, or a user's private one — as seen on
// behalf of one identity: the API every caller holds, shaped like CloudKit's async API. It is
// a small immutable value over a `DatabaseBackend` (DatabaseBackend.swift), the storage seam: the
// embedded engine (EmbeddedDatabase.swift) or PostgreSQL (CirrusPostgres). The façade adds the
// conveniences that are the same on every engine (one record, one save, one deletion) and
// forwards the rest.

import QueryExecution
import QueryPlanner
import RecordModel

/// A CloudKit database: the public database of a container or one user's private database.
///
/// ```swift
/// let db = container.privateDatabase(for: "_alice")
/// var note = Record(recordType: "Note", recordID: RecordID(recordName: "n1"))
/// note["title"] = "Groceries"
/// let saved = try await db.save(note)
/// let again = try await db.record(for: saved.recordID)
/// ```
public final class Database: Sendable {
    /// Which database.
    public enum Scope: Sendable, Hashable, CustomStringConvertible {
        case `public`
        /// The private database of a user (by user record name).
        case `private`(owner: String)

        /// `public database` or `private database of "owner"`, as error messages print it.
        public var description: String {
            switch self {
            case .public: "public database"
            case .private(let o): "private database of \"\(o)\""
            }
        }

        /// The storage owner of the database's zones: `__defaultOwner__` for the public one.
        public var owner: String {
            switch self {
            case .public: ZoneID.defaultOwnerName
            case .private(let o): o
            }
        }

        /// The scope as cursors name it: `public`, `private:<user>` (docs/cursor-format.md).
        public var cursorScope: String {
            switch self {
            case .public: "public"
            case .private(let o): "private:\(o)"
            }
        }
    }

    /// The storage this database reads and writes.
    public let backend: any DatabaseBackend

    /// A database over `backend` (containers make these; a new engine's tests may too).
    public init(backend: any DatabaseBackend) { self.backend = backend }

    /// Which database this handle reads and writes.
    public var scope: Scope { backend.scope }
    /// On whose behalf this handle's calls are made.
    public var identity: Identity { backend.identity }
    /// The engine behind this database: `embedded` or `postgresql`.
    public var engineName: String { backend.engineName }

    /// The same database, with calls made on behalf of `identity`.
    public func acting(as identity: Identity) -> Database { Database(backend: backend.acting(as: identity)) }

    /// The environment of the container.
    public var environment: Environment { backend.environment }

    /// The current schema of this container in its environment.
    public var schema: Schema { backend.schema }

    /// 32 random bytes, created once per database and kept by the engine; used to sign query
    /// cursors.
    public var cursorSecret: [UInt8] { backend.cursorSecret }

    // MARK: fetching

    /// Fetches one record. Throws unknownItem when it does not exist.
    public func record(for id: RecordID) async throws(CirrusError) -> Record {
        try await backend.record(for: id)
    }

    /// Fetches records by id: a result per id, in the order given (unknownItem for a missing one,
    /// permissionFailure for one this identity may not read).
    public func records(for ids: [RecordID]) async throws(CirrusError) -> [(RecordID, Result<Record, CirrusError>)] {
        try await backend.records(for: ids)
    }

    // MARK: saving and deleting

    /// Saves one record with the given policy; returns it as stored (system fields set).
    @discardableResult
    public func save(
        _ record: Record, savePolicy: SavePolicy = .ifServerRecordUnchanged
    ) async throws(CirrusError) -> Record {
        let r = try await modifyRecords(saving: [record], deleting: [], savePolicy: savePolicy)
        switch r.saveResults.first?.1 {
        case .success(let rec): return rec
        case .failure(let e): throw e
        case nil: throw CirrusError(.internalError, "no result for the save", recordID: record.recordID)
        }
    }

    /// Deletes one record (and, cascading, the records that reference it with deleteSelf).
    public func deleteRecord(withID id: RecordID) async throws(CirrusError) {
        let r = try await modifyRecords(saving: [], deleting: [id])
        if case .failure(let e) = r.deleteResults.first?.1 { throw e }
    }

    /// Saves records and deletes ids in one request of at most 400 items (more →
    /// limitExceeded). Custom-zone items are atomic per zone when `atomically`; default-zone
    /// items are independent. Deleting a record deletes the records that reference it with
    /// deleteSelf, cascading, within the zone.
    ///
    /// ```swift
    /// let r = try await db.modifyRecords(saving: [note], deleting: [], savePolicy: .changedKeys)
    /// let saved = try r.saveResults[0].1.get()
    /// ```
    public func modifyRecords(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy = .ifServerRecordUnchanged,
        atomically: Bool = true
    ) async throws(CirrusError) -> ModifyResult {
        try await backend.modifyRecords(
            saving: saving, deleting: deleting, savePolicy: savePolicy, atomically: atomically)
    }

    /// Saves and deletes in one request where each item has its own rule — the operation types of
    /// CloudKit Web Services' `records/modify` (create, update, forceUpdate, replace, forceReplace,
    /// delete, forceDelete). Same limits, atomicity and checks as `modifyRecords`; the results are in
    /// the order of `operations` (a deletion's record is nil).
    ///
    /// ```swift
    /// let results = try await db.modify([
    ///     .save(edited, .ifServerRecordUnchanged, mergingFields: true),   // update
    ///     .delete(old.recordID, ifChangeTag: old.recordChangeTag),          // delete
    /// ])
    /// ```
    public func modify(
        _ operations: [RecordOperation], atomically: Bool = true
    ) async throws(CirrusError) -> [(RecordID, Result<Record?, CirrusError>)] {
        try await backend.modify(operations, atomically: atomically)
    }

    // MARK: queries

    /// The page size when `resultsLimit` is 0 ("the engine chooses").
    public static let defaultResultsLimit = 100

    /// Records of `query`, in its order: the first page of at most `resultsLimit` records (0: the
    /// engine chooses) and a cursor when more may follow. `zoneID` nil means every zone of this
    /// database. `desiredKeys` nil returns whole records, `[]` only the system fields.
    public func records(
        matching query: RecordQuery, inZoneWith zoneID: ZoneID? = nil, desiredKeys: [String]? = nil,
        resultsLimit: Int = 0
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        try await backend.records(
            matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The next page of the query a cursor came from. The query is checked again against the
    /// current schema; a cursor of another database is rejected.
    public func records(
        continuingMatchFrom cursor: QueryCursor, desiredKeys: [String]? = nil, resultsLimit: Int = 0
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        try await backend.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The printable token of a cursor, signed with this database's secret (docs/cursor-format.md).
    public func token(for cursor: QueryCursor) -> String { cursor.token(secret: cursorSecret) }

    /// The cursor of a token issued by this database; with `expecting`, it must belong to that query.
    public func cursor(fromToken token: String, expecting query: RecordQuery? = nil) throws(CirrusError) -> QueryCursor
    {
        try backend.cursor(fromToken: token, expecting: query)
    }

    /// Plans `query` (and, with `execute`, runs its first page) and describes what happened: the
    /// embedded planner's plan, or the plan of the engine's own planner (PostgreSQL's EXPLAIN).
    public func explain(
        _ query: RecordQuery, inZoneWith zoneID: ZoneID? = nil, resultsLimit: Int = 0, execute: Bool = true
    ) async throws(CirrusError) -> QueryExplanation {
        try await backend.explain(query, inZoneWith: zoneID, resultsLimit: resultsLimit, execute: execute)
    }

    /// The index options `query` needs in production (the development index advisor).
    public func requiredIndexes(for query: RecordQuery) throws(CirrusError) -> [IndexRequirement] {
        try backend.requiredIndexes(for: query)
    }

    /// Throws unless this identity may read records of `recordType` here — the check the query
    /// code runs before executing a query. In the public database a `_creator`-only READ grant
    /// passes for a signed-in user; filter rows with `canRead(_:)` then.
    ///
    /// ```swift
    /// try db.checkCanRead(recordType: "Place")   // permissionFailure / notAuthenticated / invalidArguments (Users)
    /// ```
    public func checkCanRead(recordType: String) throws(CirrusError) {
        try backend.checkCanRead(recordType: recordType)
    }

    /// Whether this identity may read `record` (a record of this database, API form).
    public func canRead(_ record: Record) -> Bool { backend.canRead(record) }

    // MARK: zones and changes

    /// Creates a custom zone (private databases only); saving an existing zone succeeds.
    @discardableResult
    public func save(zone: ZoneID) async throws(CirrusError) -> ZoneID { try await backend.save(zone: zone) }

    /// Deletes a custom zone and every record in it.
    public func deleteZone(_ zone: ZoneID) async throws(CirrusError) { try await backend.deleteZone(zone) }

    /// The zones of this database: the default zone, then custom zones by name.
    public func allZones() async throws(CirrusError) -> [ZoneID] { try await backend.allZones() }

    /// The records changed and deleted in `zone` since `token` (nil: from the beginning), at most
    /// `limit` per page; `moreComing` when another page follows.
    public func changes(
        in zone: ZoneID, since token: ChangeToken?, limit: Int = DatabaseLimits.defaultChangesPageSize
    ) async throws(CirrusError) -> ZoneChanges {
        try await backend.changes(in: zone, since: token, limit: limit)
    }

    /// The custom zones created, changed or deleted since `token` (nil: every zone).
    public func databaseChanges(
        since token: DatabaseChangeToken?, limit: Int = DatabaseLimits.defaultChangesPageSize
    ) async throws(CirrusError) -> DatabaseChanges {
        try await backend.databaseChanges(since: token, limit: limit)
    }

    // MARK: assets

    /// Stores bytes as a content-addressed asset file and returns the value to put in a field.
    /// The file is deleted once no live record refers to it (an asset never saved in a record
    /// is removed at the next open).
    public func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset {
        try await backend.storeAsset(bytes)
    }

    /// The content of an asset of a record this identity may read.
    public func assetData(_ asset: Asset, of recordID: RecordID) async throws(CirrusError) -> [UInt8] {
        try await backend.assetData(asset, of: recordID)
    }

    // MARK: subscriptions

    /// Saves (or replaces) a subscription; its predicate is checked like a query's.
    @discardableResult
    public func save(_ subscription: Subscription) async throws(CirrusError) -> Subscription {
        try await backend.save(subscription)
    }

    /// Deletes a subscription of this identity by id (unknownItem if it has none by that id).
    public func deleteSubscription(withID id: String) async throws(CirrusError) {
        try await backend.deleteSubscription(withID: id)
    }

    /// The subscriptions of this database saved by this identity.
    public func allSubscriptions() async throws(CirrusError) -> [Subscription] { try await backend.allSubscriptions() }

    /// The notifications of this identity's subscriptions in this database, from now on, in
    /// commit order. The stream ends when the consumer stops iterating.
    public func notifications() -> AsyncStream<RecordNotification> { backend.notifications() }

    // MARK: users

    /// The caller's account status: `available` for a signed-in user, `noAccount` for an
    /// anonymous caller; `couldNotDetermine` when the user directory cannot be read,
    /// `temporarilyUnavailable` when the container is closed. Never throws.
    ///
    /// ```swift
    /// if container.publicDatabase.accountStatus() == .noAccount { /* read-only: ask to sign in */ }
    /// ```
    public func accountStatus() -> AccountStatus { backend.accountStatus() }

    /// Whether the signed-in caller is discoverable. Anonymous → notAuthenticated.
    public func discoverabilityStatus() throws(CirrusError) -> DiscoverabilityStatus {
        try backend.discoverabilityStatus()
    }

    /// Records the signed-in caller's answer to the request for discoverability (CloudKit asks
    /// the user in a system prompt; here the caller is the user answering): `granted` makes them
    /// discoverable by their email address, phone number and user record name, `denied` hides
    /// them again. Returns the new status. Anonymous → notAuthenticated.
    ///
    /// ```swift
    /// let mine = container.publicDatabase(as: .user("_alice"))
    /// try mine.requestDiscoverability()               // .granted
    /// try mine.requestDiscoverability(granted: false)  // .denied
    /// ```
    @discardableResult
    public func requestDiscoverability(granted: Bool = true) throws(CirrusError) -> DiscoverabilityStatus {
        try backend.requestDiscoverability(granted: granted)
    }

    /// The discoverable user with this email address (any case), nil for anyone else. An
    /// address that is not one → invalidArguments; anonymous → notAuthenticated.
    public func discoverUserIdentity(email: String) throws(CirrusError) -> UserIdentity? {
        try discoverUserIdentities([.emailAddress(email)]).first
    }

    /// The discoverable user with this phone number (spaces, dots, hyphens and parentheses
    /// ignored), nil for anyone else. Not a phone number → invalidArguments.
    public func discoverUserIdentity(phoneNumber: String) throws(CirrusError) -> UserIdentity? {
        try discoverUserIdentities([.phoneNumber(phoneNumber)]).first
    }

    /// The discoverable user with this user record id (its record name; the zone is ignored),
    /// nil for anyone else.
    public func discoverUserIdentity(userRecordID: RecordID) throws(CirrusError) -> UserIdentity? {
        try discoverUserIdentities([.userRecordName(userRecordID.recordName)]).first
    }

    /// Looks up many users at once (an address book): the discoverable users found, in the
    /// order of `lookups` (each once, with the first lookup that found them). At most 1 000
    /// lookups (limitExceeded); any malformed one → invalidArguments naming it and its index, and
    /// nothing is looked up. Anonymous → notAuthenticated.
    ///
    /// ```swift
    /// let found = try db.discoverUserIdentities([.emailAddress("bob@example.com"), .phoneNumber("+33 6 12 34 56 78")])
    /// ```
    public func discoverUserIdentities(_ lookups: [UserLookupInfo]) throws(CirrusError) -> [UserIdentity] {
        try backend.discoverUserIdentities(lookups)
    }

    /// The caller's own account, whether or not they are discoverable (what `users/caller`
    /// shows); nil when nothing is kept about them. Anonymous → notAuthenticated.
    public func callerAccount() throws(CirrusError) -> UserAccount? { try backend.callerAccount() }
}
