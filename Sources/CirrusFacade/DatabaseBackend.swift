// DatabaseBackend: the storage seam. `Database` (the façade every caller holds: the Swift API,
// the shell, `cirrus serve`) talks to its storage only through this protocol. Two
// implementations: the embedded engine (EmbeddedDatabase: log + segments + Cirrus's own indexes
// and planner) and PostgreSQL + PostGIS (CirrusPostgres's PostgresDatabase). docs/ARCHITECTURE.md
// "The storage seam" lists what each does.
//
// One value per database (public, or one user's private one) and identity: `acting(as:)` gives
// the same database for another identity. Every call checks what the embedded engine checks —
// database ownership, grants, the CKQuery subset, limits — so callers see the same answers and
// the same errors on both. The groups a backend does not hold yet (zones as objects, change
// tokens, assets, subscriptions, user discovery) have default implementations that throw
// `CirrusError.unsupported(_:on:)`: serverRejectedRequest (15) naming the feature and the
// backend, never a wrong answer — after checking the database's access, as the embedded engine
// does, so another user's private database answers permissionFailure either way.

import QueryExecution
import QueryPlanner
import RecordModel

/// The storage behind a ``Database``: the embedded engine, or another engine such as PostgreSQL.
///
/// A conforming type answers for one database (``scope``) on behalf of one ``identity``, with
/// CloudKit's semantics: save policies and change tags, atomic batches, access rules, checked
/// queries with cursors. Requirements after ``explain(_:inZoneWith:resultsLimit:execute:)`` have
/// default implementations that refuse the call with serverRejectedRequest (15).
///
/// ```swift
/// let db = Database(backend: myBackend)     // what Container.open(…) does for its engine
/// let saved = try await db.save(record)
/// ```
public protocol DatabaseBackend: Sendable {
    /// Which database this value reads and writes.
    var scope: Database.Scope { get }
    /// On whose behalf calls are made.
    var identity: Identity { get }
    /// The environment of the container.
    var environment: Environment { get }
    /// The container's current schema in its environment.
    var schema: Schema { get }
    /// The secret query cursors of this database are signed with (stable across processes).
    var cursorSecret: [UInt8] { get }
    /// The engine's name for messages and `explain`: `embedded`, `postgresql`.
    var engineName: String { get }

    /// The same database, with calls made on behalf of `identity`.
    func acting(as identity: Identity) -> any DatabaseBackend

    /// Records by id: one result per id, in the order given (see ``Database/records(for:)``).
    func records(for ids: [RecordID]) async throws(CirrusError) -> [(RecordID, Result<Record, CirrusError>)]
    /// One record by id, or the error `records(for:)` would give for it (see
    /// ``Database/record(for:)``). The default fetches through `records(for:)`.
    func record(for id: RecordID) async throws(CirrusError) -> Record
    /// Saves and deletes in one request (see ``Database/modifyRecords(saving:deleting:savePolicy:atomically:)``).
    func modifyRecords(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy, atomically: Bool
    ) async throws(CirrusError) -> ModifyResult
    /// Saves and deletes with a rule per item (see ``Database/modify(_:atomically:)``).
    func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CirrusError) -> [(RecordID, Result<Record?, CirrusError>)]
    /// The first page of a query (see ``Database/records(matching:inZoneWith:desiredKeys:resultsLimit:)``).
    func records(
        matching query: RecordQuery, inZoneWith zoneID: ZoneID?, desiredKeys: [String]?, resultsLimit: Int
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    /// The page after a cursor's (see ``Database/records(continuingMatchFrom:desiredKeys:resultsLimit:)``).
    func records(
        continuingMatchFrom cursor: QueryCursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    /// The cursor of a token this database issued (see ``Database/cursor(fromToken:expecting:)``).
    func cursor(fromToken token: String, expecting query: RecordQuery?) throws(CirrusError) -> QueryCursor
    /// The index options `query` needs in production.
    func requiredIndexes(for query: RecordQuery) throws(CirrusError) -> [IndexRequirement]
    /// Throws unless this identity may read records of `recordType` here.
    func checkCanRead(recordType: String) throws(CirrusError)
    /// Whether this identity may read `record`.
    func canRead(_ record: Record) -> Bool
    /// How the engine runs `query` (and, with `execute`, what its first page did).
    func explain(
        _ query: RecordQuery, inZoneWith zoneID: ZoneID?, resultsLimit: Int, execute: Bool
    ) async throws(CirrusError) -> QueryExplanation

    /// Creates a custom zone (see ``Database/save(zone:)``).
    func save(zone: ZoneID) async throws(CirrusError) -> ZoneID
    /// Deletes a custom zone and its records.
    func deleteZone(_ zone: ZoneID) async throws(CirrusError)
    /// The zones of this database, the default zone first.
    func allZones() async throws(CirrusError) -> [ZoneID]
    /// A zone's changes since a token.
    func changes(in zone: ZoneID, since token: ChangeToken?, limit: Int) async throws(CirrusError) -> ZoneChanges
    /// The zones changed since a database change token.
    func databaseChanges(since token: DatabaseChangeToken?, limit: Int) async throws(CirrusError) -> DatabaseChanges
    /// Stores bytes as an asset.
    func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset
    /// The content of an asset of a record this identity may read.
    func assetData(_ asset: Asset, of recordID: RecordID) async throws(CirrusError) -> [UInt8]
    /// Saves (or replaces) a subscription.
    func save(_ subscription: Subscription) async throws(CirrusError) -> Subscription
    /// Deletes a subscription of this identity.
    func deleteSubscription(withID id: String) async throws(CirrusError)
    /// The subscriptions of this database saved by this identity.
    func allSubscriptions() async throws(CirrusError) -> [Subscription]
    /// The notifications of this identity's subscriptions from now on.
    func notifications() -> AsyncStream<RecordNotification>
    /// The caller's account status.
    func accountStatus() -> AccountStatus
    /// Whether the signed-in caller is discoverable.
    func discoverabilityStatus() throws(CirrusError) -> DiscoverabilityStatus
    /// Records the caller's answer to the discoverability request.
    func requestDiscoverability(granted: Bool) throws(CirrusError) -> DiscoverabilityStatus
    /// Discoverable users matching lookups.
    func discoverUserIdentities(_ lookups: [UserLookupInfo]) throws(CirrusError) -> [UserIdentity]
    /// The caller's own account.
    func callerAccount() throws(CirrusError) -> UserAccount?

    // The user calls as async calls, for engines whose user directory is not in-process (the
    // defaults call the synchronous forms above). Database+AsyncUsers.swift.

    /// ``accountStatus()`` on any engine.
    func fetchAccountStatus() async -> AccountStatus
    /// ``discoverabilityStatus()`` on any engine.
    func fetchDiscoverabilityStatus() async throws(CirrusError) -> DiscoverabilityStatus
    /// ``requestDiscoverability(granted:)`` on any engine.
    func setDiscoverability(granted: Bool) async throws(CirrusError) -> DiscoverabilityStatus
    /// ``discoverUserIdentities(_:)`` on any engine.
    func lookUpUserIdentities(_ lookups: [UserLookupInfo]) async throws(CirrusError) -> [UserIdentity]
    /// ``callerAccount()`` on any engine.
    func fetchCallerAccount() async throws(CirrusError) -> UserAccount?
}

extension DatabaseBackend {
    /// The synchronous ``accountStatus()``.
    public func fetchAccountStatus() async -> AccountStatus { accountStatus() }
    /// The synchronous ``discoverabilityStatus()``.
    public func fetchDiscoverabilityStatus() async throws(CirrusError) -> DiscoverabilityStatus {
        try discoverabilityStatus()
    }
    /// The synchronous ``requestDiscoverability(granted:)``.
    public func setDiscoverability(granted: Bool) async throws(CirrusError) -> DiscoverabilityStatus {
        try requestDiscoverability(granted: granted)
    }
    /// The synchronous ``discoverUserIdentities(_:)``.
    public func lookUpUserIdentities(_ lookups: [UserLookupInfo]) async throws(CirrusError) -> [UserIdentity] {
        try discoverUserIdentities(lookups)
    }
    /// The synchronous ``callerAccount()``.
    public func fetchCallerAccount() async throws(CirrusError) -> UserAccount? { try callerAccount() }
}

extension CirrusError {
    /// serverRejectedRequest (15): `what` is not available on the `engine` backend.
    ///
    /// ```swift
    /// throw CirrusError.unsupported("custom zones", on: "postgresql")
    /// ```
    public static func unsupported(_ what: String, on engine: String) -> CirrusError {
        CirrusError(
            .serverRejectedRequest,
            "\(what) are not available on the \(engine) backend yet (docs/scale-out.md, \"Not done yet\")")
    }
}

extension DatabaseBackend {
    /// One record by id through `records(for:)`.
    public func record(for id: RecordID) async throws(CirrusError) -> Record {
        let r = try await records(for: [id])
        switch r.first?.1 {
        case .success(let rec): return rec
        case .failure(let e): throw e
        case nil: throw CirrusError(.unknownItem, "record not found", recordID: id)
        }
    }

    /// Refuses: custom zones need a backend that stores zones.
    public func save(zone: ZoneID) async throws(CirrusError) -> ZoneID {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if zone.zoneName == ZoneID.defaultZoneName { return ZoneID(zoneName: zone.zoneName) }
        throw .unsupported("custom zones", on: engineName)
    }
    /// Refuses (the default zone cannot be deleted anywhere).
    public func deleteZone(_ zone: ZoneID) async throws(CirrusError) {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if zone.zoneName == ZoneID.defaultZoneName {
            throw CirrusError(.invalidArguments, "the default zone cannot be deleted", zoneID: zone)
        }
        throw .unsupported("custom zones", on: engineName)
    }
    /// The default zone only.
    public func allZones() async throws(CirrusError) -> [ZoneID] { [.default] }
    /// Refuses: change tokens need a backend that keeps history.
    public func changes(in zone: ZoneID, since token: ChangeToken?, limit: Int) async throws(CirrusError) -> ZoneChanges
    {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("zone change tokens", on: engineName)
    }
    /// Refuses: change tokens need a backend that keeps history.
    public func databaseChanges(
        since token: DatabaseChangeToken?, limit: Int
    ) async throws(CirrusError) -> DatabaseChanges {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("database change tokens", on: engineName)
    }
    /// Refuses: no asset storage.
    public func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("assets", on: engineName)
    }
    /// Refuses: no asset storage.
    public func assetData(_ asset: Asset, of recordID: RecordID) async throws(CirrusError) -> [UInt8] {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("assets", on: engineName)
    }
    /// Refuses: no subscription storage.
    public func save(_ subscription: Subscription) async throws(CirrusError) -> Subscription {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("subscriptions", on: engineName)
    }
    /// Refuses: no subscription storage.
    public func deleteSubscription(withID id: String) async throws(CirrusError) {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("subscriptions", on: engineName)
    }
    /// None: no subscription storage.
    public func allSubscriptions() async throws(CirrusError) -> [Subscription] {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        return []
    }
    /// A stream that ends at once: no subscription storage.
    public func notifications() -> AsyncStream<RecordNotification> { AsyncStream { $0.finish() } }
    /// `available` for a signed-in identity, `noAccount` for an anonymous one.
    public func accountStatus() -> AccountStatus { identity.userRecordName == nil ? .noAccount : .available }
    /// Refuses: no user directory.
    public func discoverabilityStatus() throws(CirrusError) -> DiscoverabilityStatus {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("user discovery", on: engineName)
    }
    /// Refuses: no user directory.
    public func requestDiscoverability(granted: Bool) throws(CirrusError) -> DiscoverabilityStatus {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("user discovery", on: engineName)
    }
    /// Refuses: no user directory.
    public func discoverUserIdentities(_ lookups: [UserLookupInfo]) throws(CirrusError) -> [UserIdentity] {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("user discovery", on: engineName)
    }
    /// Refuses: no user directory.
    public func callerAccount() throws(CirrusError) -> UserAccount? {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        throw .unsupported("user accounts", on: engineName)
    }
}

/// The storage behind a ``Container`` opened on another engine than the embedded one: it hands
/// out the container's databases and knows its schema. The container-level operations that
/// belong to the embedded engine's files — checkpoints, compaction, import and export, the user
/// directory — are refused on such a container with serverRejectedRequest (15). Schemas are
/// imported, promoted and their security roles changed through the async
/// `Container.applySchema(_:)`, `Container.promoteSchemaToProduction()` and
/// `Container.changeSecurityRoles(_:)`, which call ``replaceSchema(_:)``, ``promoteSchema()``
/// and ``updateSchema(_:)``.
///
/// ```swift
/// let container = Container(backend: postgresContainer)   // what Container.open(postgres:…) does
/// let db = container.publicDatabase(as: .user("_alice"))
/// ```
public protocol ContainerBackend: Sendable {
    /// The engine's name: `postgresql`.
    var engineName: String { get }
    /// Where the container lives, for messages (never a password).
    var location: String { get }
    /// The environment opened.
    var environment: Environment { get }
    /// The container's current schema in that environment.
    var schema: Schema { get }
    /// The database with `scope`, on behalf of `identity`.
    func database(_ scope: Database.Scope, as identity: Identity) -> any DatabaseBackend
    /// Makes every acknowledged write durable and releases the engine (its files, its
    /// connections); later calls fail.
    func close() throws(CirrusError)
    /// Makes `schema` this environment's (``Container/applySchema(_:)`` has checked it against
    /// the current one; the engine checks again under its own lock) and returns it as stored.
    func replaceSchema(_ schema: Schema) async throws(CirrusError) -> Schema
    /// Makes the development schema production's (see ``Container/schemaToPromote(_:over:)``)
    /// and returns production's new schema; called on the development container.
    func promoteSchema() async throws(CirrusError) -> Schema
    /// Changes this environment's schema by `body`, given the schema as stored (under the
    /// engine's lock, so concurrent changes are not lost), and returns the result.
    func updateSchema(
        _ body: @escaping @Sendable (Schema) throws(CirrusError) -> Schema
    ) async throws(CirrusError)
        -> Schema
    /// Every user account of the container, sorted by user record name (``Container/fetchUserAccounts()``).
    func userAccounts() async throws(CirrusError) -> [UserAccount]
    /// Adds or replaces a user account (``Container/storeUserAccount(_:)``); returns it as kept.
    func saveUserAccount(_ account: UserAccount) async throws(CirrusError) -> UserAccount
    /// Sets a user's discoverability (``Container/changeDiscoverability(_:ofUser:)``).
    func setDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) async throws(CirrusError)
}

extension ContainerBackend {
    /// Refuses: the engine keeps no user directory.
    public func userAccounts() async throws(CirrusError) -> [UserAccount] {
        throw .unsupported("user accounts", on: engineName)
    }
    /// Refuses: the engine keeps no user directory.
    public func saveUserAccount(_ account: UserAccount) async throws(CirrusError) -> UserAccount {
        throw .unsupported("user accounts", on: engineName)
    }
    /// Refuses: the engine keeps no user directory.
    public func setDiscoverability(_ status: DiscoverabilityStatus, ofUser user: String) async throws(CirrusError) {
        throw .unsupported("user accounts", on: engineName)
    }
    /// Refuses: the engine does not change schemas through the container.
    public func replaceSchema(_ schema: Schema) async throws(CirrusError) -> Schema {
        throw .unsupported("schema imports", on: engineName)
    }
    /// Refuses: the engine does not promote schemas through the container.
    public func promoteSchema() async throws(CirrusError) -> Schema {
        throw .unsupported("schema promotions", on: engineName)
    }
    /// Refuses: the engine does not change schemas through the container.
    public func updateSchema(
        _ body: @escaping @Sendable (Schema) throws(CirrusError) -> Schema
    ) async throws(CirrusError) -> Schema {
        throw .unsupported("schema changes", on: engineName)
    }
}
