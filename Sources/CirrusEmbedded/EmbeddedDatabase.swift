// EmbeddedDatabase: the embedded engine's side of the storage seam — one database of a
// container (the public one, or a user's private one) over the container's shared core (log,
// segments, type tables, indexes, planner), as seen on behalf of one identity. `Database` (the
// façade, Database.swift) forwards every call here when the container was opened from a
// directory. A handle is a small immutable value, so handles are cheap and Sendable. Record
// calls are `async` like CloudKit's; they run at once (writes serialize on the container's write
// lock and wait for the log's fsync). Snapshot, schema and secret accessors are synchronous.
//
// Modify batches: EmbeddedDatabase+Modify.swift; zones and changes: EmbeddedDatabase+Zones.swift;
// access rules: Access.swift. The query API (EmbeddedDatabase+Query.swift) builds on
// `querySnapshot(recordType:)`.

import CirrusFacade
import RecordLog
import RecordModel

/// The embedded engine's database: records in the container's log and segments, queries planned
/// and run on Cirrus's own indexes.
final class EmbeddedDatabase: DatabaseBackend {
    let core: ContainerCore
    /// Which database this handle reads and writes.
    let scope: Database.Scope
    /// On whose behalf this handle's calls are made.
    let identity: Identity

    init(core: ContainerCore, scope: Database.Scope, identity: Identity) {
        self.core = core
        self.scope = scope
        self.identity = identity
    }

    /// The storage owner of this database's zones.
    var owner: String { scope.owner }

    /// `embedded`.
    var engineName: String { "embedded" }

    /// The same database, with calls made on behalf of `identity`.
    func acting(as identity: Identity) -> any DatabaseBackend {
        EmbeddedDatabase(core: core, scope: scope, identity: identity)
    }

    /// The environment of the container.
    public var environment: Environment { core.environment }

    /// The current schema of this container in its environment.
    public var schema: Schema { core.schema }

    /// 32 random bytes, created once per database (from the container's injected randomness)
    /// and persisted beside the log; used to sign query cursors.
    public var cursorSecret: [UInt8] { core.cursorSecret(owner: owner) }

    /// A consistent view of one record type in this database: rows and indexes of one commit.
    /// Does not check access (call `checkCanRead(recordType:)` first).
    ///
    /// ```swift
    /// let snap = db.querySnapshot(recordType: "Place")
    /// snap.rowCount
    /// ```
    public func querySnapshot(recordType: String) -> RecordTypeSnapshot {
        let (t, s, version) = core.versionedTable(owner: owner, type: recordType)
        return snapshot(recordType, table: t, schema: s, version: version)
    }

    /// The published schema, whether everyone may read `recordType`, and the type's snapshot,
    /// read together (ContainerCore.queryState).
    func queryView(recordType: String) -> (Schema, everyone: Bool, RecordTypeSnapshot) {
        let state = core.queryState(owner: owner, type: recordType)
        return (
            state.schema, state.everyone,
            snapshot(recordType, table: state.table, schema: state.typeSchema, version: state.version)
        )
    }

    private func snapshot(
        _ recordType: String, table: TypeTable?, schema: RecordTypeSchema?, version: UInt64
    ) -> RecordTypeSnapshot {
        var snap = RecordTypeSnapshot(
            recordType: recordType, environment: core.environment, table: table, schema: schema,
            nodeSize: core.options.indexNodeSize)
        snap.version = version
        return snap
    }

    // MARK: helpers for the query code (same module)

    /// The container's clock as a timestamp (the value of `now()` in predicates).
    var now: Timestamp { Timestamp(millisecondsSince1970: core.options.clock.wallMilliseconds()) }

    /// Checks a query's zone: nil means every zone of the database; a zone must belong to this
    /// database (permissionFailure / badDatabase) and exist (zoneNotFound). Returns it in API form.
    func resolveQueryZone(_ zone: ZoneID?) throws(CirrusError) -> ZoneID? {
        guard let zone else { return nil }
        let z = try checkZone(zone)
        if !core.zoneExists(owner: owner, z) { throw .zone(.zoneNotFound, zone, "no such zone") }
        return z
    }

    // MARK: ids

    /// Checks a zone id's owner and returns it in API form.
    func checkZone(_ z: ZoneID) throws(CirrusError) -> ZoneID { try DatabaseRules.checkZone(z, scope: scope) }

    func checkID(_ id: RecordID) throws(CirrusError) -> RecordID { try DatabaseRules.checkID(id, scope: scope) }

    static func checkCancelled() throws(CirrusError) { try DatabaseRules.checkCancelled() }

    // MARK: fetching

    /// Fetches one record. Throws unknownItem when it does not exist.
    public func record(for id: RecordID) async throws(CirrusError) -> Record {
        // The same checks as `records(for:)` on one id, without its arrays.
        try Self.checkCancelled()
        try checkDatabaseAccess()
        let (schema, worldReadable) = core.schemaAndWorldReadable
        return try fetch(id, schema: schema, worldReadable: worldReadable)
    }

    /// Fetches records by id: a result per id, in the order given (unknownItem for a missing one,
    /// permissionFailure for one this identity may not read).
    public func records(for ids: [RecordID]) async throws(CirrusError) -> [(RecordID, Result<Record, CirrusError>)] {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        if ids.count > DatabaseLimits.maximumItemsPerRequest {
            throw CirrusError(
                .limitExceeded, "\(ids.count) ids in one fetch; the limit is \(DatabaseLimits.maximumItemsPerRequest)")
        }
        let (schema, worldReadable) = core.schemaAndWorldReadable
        var out: [(RecordID, Result<Record, CirrusError>)] = []
        out.reserveCapacity(ids.count)
        for id in ids {
            do throws(CirrusError) {
                out.append((id, .success(try fetch(id, schema: schema, worldReadable: worldReadable))))
            } catch {
                out.append((id, .failure(error)))
            }
        }
        return out
    }

    /// One id of a fetch: its record, or the error for it (zoneNotFound, unknownItem,
    /// notAuthenticated or permissionFailure).
    private func fetch(_ id: RecordID, schema: Schema, worldReadable: [String: Bool]) throws(CirrusError) -> Record {
        let api = try checkID(id)
        if !api.zoneID.isDefaultZone && !core.zoneExists(owner: owner, api.zoneID) {
            throw .record(.zoneNotFound, id, "zone \"\(api.zoneID.zoneName)\" does not exist")
        }
        guard let r = try core.current(owner: owner, api) else {
            throw .record(.unknownItem, id, "record not found")
        }
        if !Access.canRead(r, owner: owner, identity: identity, schema: schema, worldReadable: worldReadable) {
            throw .record(
                identity.userRecordName == nil ? .notAuthenticated : .permissionFailure, id,
                "\(identity) may not read this record")
        }
        return r
    }

    // MARK: saving and deleting

    // MARK: assets

    /// Stores bytes as a content-addressed asset file and returns the value to put in a field.
    /// The file is deleted once no live record refers to it (an asset never saved in a record
    /// is removed at the next open).
    public func storeAsset(_ bytes: [UInt8]) async throws(CirrusError) -> Asset {
        try checkDatabaseAccess()
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "storing an asset needs a signed-in user")
        }
        do {
            // Pinned before its file is checked: a removal of unreferenced assets beside this call
            // (another database deleting the last record that used the same bytes) leaves it.
            return try core.store.storeAsset(bytes) { hash in
                core.stateLock.withLock { core.assetPins[hash, default: 0] += 1 }
            }
        } catch {
            throw CirrusError(.internalError, "cannot store the asset: \(error)")
        }
    }

    /// The content of an asset of a record this identity may read.
    public func assetData(_ asset: Asset, of recordID: RecordID) async throws(CirrusError) -> [UInt8] {
        let r = try await record(for: recordID)
        guard r.fields.values.contains(where: { $0.elements.contains(.asset(asset)) }) else {
            throw .record(.unknownItem, recordID, "the record has no asset \(asset.contentHash)")
        }
        do {
            return try core.store.assetData(asset)
        } catch {
            throw .record(.internalError, recordID, "\(error)")
        }
    }

    // MARK: subscriptions

    /// Saves (or replaces) a subscription; its predicate is checked like a query's.
    @discardableResult
    public func save(_ subscription: Subscription) async throws(CirrusError) -> Subscription {
        try Self.checkCancelled()
        try checkDatabaseAccess()
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "subscriptions need a signed-in user")
        }
        if case .query(let t, _, _, _) = subscription.kind { try checkCanRead(recordType: t) }
        if case .zone(let z) = subscription.kind { _ = try checkZone(z) }
        return try core.saveSubscription(subscription, owner: owner, identity: identity)
    }

    /// Deletes a subscription of this identity by id (unknownItem if it has none by that id).
    public func deleteSubscription(withID id: String) async throws(CirrusError) {
        try checkDatabaseAccess()
        try core.deleteSubscription(id: id, owner: owner, subscriber: identity)
    }

    /// The subscriptions of this database saved by this identity.
    public func allSubscriptions() async throws(CirrusError) -> [Subscription] {
        try checkDatabaseAccess()
        return core.allSubscriptions(owner: owner).filter { $0.subscriber == identity }
    }

    /// The notifications of this identity's subscriptions in this database, from now on, in
    /// commit order. The stream ends when the consumer stops iterating.
    public func notifications() -> AsyncStream<RecordNotification> {
        core.addSubscriber(owner: owner, identity: identity)
    }
}
