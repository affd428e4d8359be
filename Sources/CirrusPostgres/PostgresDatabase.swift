// PostgresDatabase: the PostgreSQL side of the storage seam — a `DatabaseBackend` over one
// tenant's PostgresStore — and PostgresContainer, the `ContainerBackend` behind
// `Container.open(postgres:…)`, which hands out the same `Container` / `Database` API as a
// container directory.
//
// What the façade's callers get, the same as on the embedded engine: records by id with
// unknownItem / permissionFailure / zoneNotFound per id; saves and deletions with the three save
// policies, change tags, per-item rules (Web Services' update / forceUpdate / delete with a tag),
// default-zone items independent (partialFailure) and custom zones atomic (a request whose
// atomic zone has a failed item is rolled back and run again without that zone); custom zones
// (`cirrus_zones`: create, list, delete with their records); access rules (AccessRules: database ownership, the
// schema's grants — write grants checked inside the transaction, after the row is locked);
// queries checked by QueryChecker against the container's schema, run as SQL, paged with
// cursors whose tokens are signed like the embedded engine's (docs/cursor-format.md: on this
// engine each position value is the sort key's text as PostgreSQL prints it); `explain` shows
// PostgreSQL's plan. Change tokens: PostgresDatabase+Changes.swift; assets:
// PostgresDatabase+Assets.swift; subscriptions and notifications across processes:
// PostgresDatabase+Subscriptions.swift; user identities (the async user calls):
// PostgresContainer+Users.swift.
//
// One PostgresClient (connection pool) per container; a store per tenant shares it. The schema
// is the container's: a save that grows it (development) publishes the new schema to the
// container, and every tenant's store adopts it before its next call.

import CirrusFacade
import Crypto
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import PredicateSyntax
import QueryChecker
import QueryExecution
import QueryPlanner
import RecordModel

extension Container {
    /// Opens the container `containerID` in `environment` on PostgreSQL + PostGIS at `url`
    /// (`postgres://user[:password]@host[:port]/database`): the same `Container` and `Database`
    /// API as a container directory, on the PostgreSQL engine (PostgresDatabase; what it does not
    /// hold yet is refused with serverRejectedRequest). Calls fail with networkFailure (4) after
    /// `timeout` without an answer; an unreachable server → networkUnavailable (3), a malformed
    /// URL → invalidArguments (12). `maximumRecordsPerDatabase`: a new record past it fails with
    /// quotaExceeded (25), as `ContainerOptions.maximumRecordsPerDatabase` does for a directory.
    ///
    /// ```swift
    /// let container = try await Container.open(
    ///     postgres: "postgres://cirrus@127.0.0.1:5432/cirrus", containerID: "iCloud.com.example.places")
    /// let db = container.publicDatabase(as: .user("_alice"))
    /// try await db.save(place)
    /// try container.close()
    /// ```
    public static func open(
        postgres url: String, containerID: String, environment: Environment = .development,
        timeout: Duration = .seconds(15), maximumRecordsPerDatabase: Int? = nil
    ) async throws(CirrusError) -> Container {
        Container(
            backend: try await PostgresContainer.open(
                url: url, containerID: containerID, environment: environment, timeout: timeout,
                quota: maximumRecordsPerDatabase))
    }

    /// The PostgreSQL engine of a container opened with `open(postgres:…)`; nil for a directory.
    public var postgres: PostgresContainer? { backend as? PostgresContainer }
}

/// A CloudKit container whose databases live on PostgreSQL + PostGIS: the `ContainerBackend` of
/// `Container.open(postgres:…)`. Its own API is what a container directory does through other
/// calls: applying a schema (DDL).
public final class PostgresContainer: ContainerBackend {
    /// The container identifier (e.g. `iCloud.com.example.places`).
    public let containerID: String
    /// The environment opened.
    public let environment: Environment
    /// `postgresql`.
    public var engineName: String { "postgresql" }
    /// `postgresql host:port/database containerID`.
    public var location: String { "postgresql \(root.address) \(containerID)" }

    let root: PostgresStore
    let citus: Bool
    /// Most records one database may hold (nil: no quota).
    public let maximumRecordsPerDatabase: Int?
    /// 32 bytes kept in the server (`cirrus_secrets`); each database's cursor secret is derived
    /// from it and the tenant's key, so every process signs and accepts the same cursors.
    let secret: [UInt8]
    /// This process's notification streams of the container and their LISTEN connection.
    let notifier: PostgresNotifier
    private let state: NIOLockedValueBox<State>

    struct State {
        var schema: Schema
        var version = 0
        /// Each tenant's store and the schema version it has adopted (-1: none yet).
        var stores: [String: (store: PostgresStore, version: Int)] = [:]
    }

    private init(
        containerID: String, environment: Environment, root: PostgresStore, schema: Schema, citus: Bool,
        secret: [UInt8], quota: Int?, notifier: PostgresNotifier
    ) {
        self.maximumRecordsPerDatabase = quota
        self.containerID = containerID
        self.environment = environment
        self.root = root
        self.citus = citus
        self.secret = secret
        self.notifier = notifier
        self.state = NIOLockedValueBox(State(schema: schema, stores: [root.tenant.key: (root, 0)]))
    }

    /// Connects (see `Container.open(postgres:…)`), reads the schema and the container's secret.
    static func open(
        url: String, containerID: String, environment: Environment, timeout: Duration, quota: Int? = nil
    ) async throws(CirrusError) -> PostgresContainer {
        let tenant = PostgresTenant(containerID: containerID, environment: environment, database: .public)
        let root: PostgresStore
        let secret: [UInt8]
        do {
            root = try await PostgresStore.connect(url: url, tenant: tenant, timeout: timeout)
        } catch {
            throw error
        }
        do {
            // Creates what is missing (a new container; tables a newer version added).
            try await root.prepare()
            try await root.prepareZones()
            try await root.prepareSubscriptions()
            try await root.prepareUsers()
            secret = try await root.secret(named: "\(containerID)/\(environment.rawValue)")
        } catch {
            await root.close()
            throw error
        }
        return PostgresContainer(
            containerID: containerID, environment: environment, root: root, schema: await root.schema,
            citus: await root.citus, secret: secret, quota: quota,
            notifier: PostgresNotifier(
                configuration: PostgresNotifier.configuration(url: url, namespace: tenant.namespace, timeout: timeout),
                channel: PostgresStore.channel(tenant.namespace)))
    }

    /// The container's schema, as this process last read or grew it.
    public var schema: Schema { state.withLockedValue { $0.schema } }

    /// Applies `schema` (add-only DDL in one transaction; docs/scale-out.md) and makes it every
    /// database's schema.
    ///
    /// ```swift
    /// try await container.postgres?.apply(schema: try Schema(schemaLanguage: text, environment: .production))
    /// ```
    public func apply(schema: Schema) async throws(CirrusError) {
        do {
            try await root.apply(schema: schema)
        } catch {
            throw error
        }
        publish(await root.schema)
    }

    /// Reads the schema stored in the server again (another process may have grown it).
    public func reloadSchema() async throws(CirrusError) {
        do {
            try await root.reloadSchema()
        } catch {
            throw error
        }
        publish(await root.schema)
    }

    /// The database with `scope` on behalf of `identity`: its tenant's store (made on first use,
    /// sharing the container's connections; it adopts the schema on its first call).
    public func database(_ scope: Database.Scope, as identity: Identity) -> any DatabaseBackend {
        let tenant = PostgresTenant(
            containerID: containerID, environment: environment,
            database: scope == .public ? .public : .private(owner: scope.owner))
        let store = state.withLockedValue { s in
            if let known = s.stores[tenant.key] { return known.store }
            let made = root.sibling(for: tenant)
            s.stores[tenant.key] = (made, -1)
            return made
        }
        let key = SymmetricKey(data: secret)
        let derived = Array(HMAC<SHA256>.authenticationCode(for: Array(tenant.key.utf8), using: key))
        return PostgresDatabase(container: self, store: store, scope: scope, identity: identity, secret: derived)
    }

    /// Stops the container's connections; later calls fail with networkFailure.
    public func close() {
        notifier.close()
        root.runTask.cancel()
    }

    /// Makes `schema` the container's when it differs (a save grew it).
    func publish(_ schema: Schema) {
        state.withLockedValue { s in
            guard s.schema != schema else { return }
            s.schema = schema
            s.version += 1
        }
    }

    /// `store` after it adopted the container's latest schema.
    func current(_ store: PostgresStore) async -> PostgresStore {
        let key = store.tenant.key
        let (schema, version, stale) = state.withLockedValue { s in
            (s.schema, s.version, (s.stores[key]?.version ?? -1) < s.version)
        }
        if stale {
            await store.adopt(schema, citus: citus)
            state.withLockedValue { s in
                if let e = s.stores[key], e.version < version { s.stores[key] = (e.store, version) }
            }
        }
        return store
    }
}

/// One database of a ``PostgresContainer`` on behalf of one identity: the PostgreSQL engine
/// behind a `Database` (see the file header for what it does and does not do yet).
public final class PostgresDatabase: DatabaseBackend {
    /// Which database.
    public let scope: Database.Scope
    /// On whose behalf calls are made.
    public let identity: Identity
    /// The secret this database's cursors are signed with (kept in the server).
    public let cursorSecret: [UInt8]
    let container: PostgresContainer
    let store: PostgresStore

    init(
        container: PostgresContainer, store: PostgresStore, scope: Database.Scope, identity: Identity,
        secret: [UInt8]
    ) {
        self.container = container
        self.store = store
        self.scope = scope
        self.identity = identity
        self.cursorSecret = secret
    }

    /// `postgresql`.
    public var engineName: String { "postgresql" }
    /// The container's environment.
    public var environment: Environment { container.environment }
    /// The container's schema.
    public var schema: Schema { container.schema }

    /// The same database for `identity`.
    public func acting(as identity: Identity) -> any DatabaseBackend {
        PostgresDatabase(container: container, store: store, scope: scope, identity: identity, secret: cursorSecret)
    }

    // MARK: records

    /// Records by id, one result per id in order.
    public func records(for ids: [RecordID]) async throws(CirrusError) -> [(RecordID, Result<Record, CirrusError>)] {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if ids.count > DatabaseLimits.maximumItemsPerRequest {
            throw CirrusError(
                .limitExceeded, "\(ids.count) ids in one fetch; the limit is \(DatabaseLimits.maximumItemsPerRequest)")
        }
        var checked: [RecordID: RecordID] = [:]
        var out: [(RecordID, Result<Record, CirrusError>)] = []
        var failures: [Int: CirrusError] = [:]
        for (i, id) in ids.enumerated() {
            do { checked[id] = try checkID(id) } catch { failures[i] = error }
        }
        if checked.values.contains(where: { !$0.zoneID.isDefaultZone }) {
            let zones = try await customZones()
            for (i, id) in ids.enumerated() {
                if let api = checked[id], !api.zoneID.isDefaultZone, !zones.contains(api.zoneID.zoneName) {
                    failures[i] = CirrusError(
                        .zoneNotFound, "zone \"\(api.zoneID.zoneName)\" does not exist", recordID: id)
                    checked[id] = nil
                }
            }
        }
        let found: [RecordID: Record]
        do {
            found = try await container.current(store).records(for: Array(Set(checked.values)))
        } catch {
            throw error
        }
        let schema = self.schema
        for (i, id) in ids.enumerated() {
            if let e = failures[i] {
                out.append((id, .failure(e)))
            } else if let api = checked[id], let r = found[api] {
                if AccessRules.canRead(r, scope: scope, identity: identity, schema: schema) {
                    out.append((id, .success(r)))
                } else {
                    out.append(
                        (
                            id,
                            .failure(
                                CirrusError(
                                    identity.userRecordName == nil ? .notAuthenticated : .permissionFailure,
                                    "\(identity) may not read this record", recordID: id))
                        ))
                }
            } else {
                out.append((id, .failure(CirrusError(.unknownItem, "record not found", recordID: id))))
            }
        }
        return out
    }

    /// Saves and deletes under one policy.
    public func modifyRecords(
        saving: [Record], deleting: [RecordID], savePolicy: SavePolicy, atomically: Bool
    ) async throws(CirrusError) -> ModifyResult {
        let ops =
            saving.map { RecordOperation.save($0, savePolicy, mergingFields: false) }
            + deleting.map { RecordOperation.delete($0, ifChangeTag: nil) }
        let results = try await modify(ops, atomically: atomically)
        var out = ModifyResult(saveResults: [], deleteResults: [])
        for (i, (id, r)) in results.enumerated() {
            if i < saving.count {
                out.saveResults.append(
                    (
                        id,
                        r.flatMap { rec -> Result<Record, CirrusError> in
                            rec.map { .success($0) }
                                ?? .failure(CirrusError(.internalError, "no record for a save", recordID: id))
                        }
                    ))
            } else {
                out.deleteResults.append((id, r.map { _ in () }))
            }
        }
        return out
    }

    /// Saves and deletes with a rule per item, in one transaction. Every item is in the default
    /// zone, whose items succeed or fail one by one (CloudKit's rule), so `atomically` changes
    /// nothing here.
    public func modify(
        _ operations: [RecordOperation], atomically: Bool
    ) async throws(CirrusError) -> [(RecordID, Result<Record?, CirrusError>)] {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        if operations.count > DatabaseLimits.maximumItemsPerRequest {
            throw CirrusError(
                .limitExceeded,
                "\(operations.count) items in one request; the limit is \(DatabaseLimits.maximumItemsPerRequest)")
        }
        if operations.isEmpty { return [] }
        guard let user = identity.userRecordName else {
            throw CirrusError(.notAuthenticated, "saving and deleting records needs a signed-in user")
        }
        // Items whose ids this database refuses fail on their own; the rest go to the server.
        var results: [Result<Record?, CirrusError>?] = Array(repeating: nil, count: operations.count)
        var items: [PostgresItem] = []
        var positions: [Int] = []
        // Saves first, then deletions (the embedded engine's order); a record saved twice in one
        // request is refused after its first save, as there.
        let saves = operations.indices.filter { if case .save = operations[$0] { return true } else { return false } }
        let order = saves + operations.indices.filter { !saves.contains($0) }
        var saved = Set<RecordID>()
        let deleting = saves.count < operations.count
        for i in order {
            let op = operations[i]
            do throws(CirrusError) {
                switch op {
                case .save(var r, let policy, let merging):
                    r.recordID = try checkID(r.recordID)
                    if !saved.insert(r.recordID).inserted {
                        throw CirrusError(
                            .invalidArguments, "the record is saved twice in one request", recordID: r.recordID)
                    }
                    if r.recordType == Schema.usersRecordType {
                        guard case .public = scope, identity.userRecordName == r.recordID.recordName else {
                            throw CirrusError(
                                .permissionFailure,
                                "a Users record can only be saved by its user, in the public database",
                                recordID: r.recordID)
                        }
                    }
                    items.append(.save(r, PostgresSavePolicy(policy), mergingFields: merging))
                case .delete(let id, let tag):
                    items.append(.delete(try checkID(id), ifChangeTag: tag))
                }
                positions.append(i)
            } catch {
                results[i] = .failure(error)
            }
        }
        if !items.isEmpty {
            let scope = self.scope, identity = self.identity, schema = self.schema
            let authorize: @Sendable (String, Record?, RecordID) throws -> Void = { type, server, id in
                do throws(CirrusError) {
                    try AccessRules.checkWrite(
                        type: type, current: server, id: id, scope: scope, identity: identity, schema: schema)
                } catch {
                    throw CirrusError(
                        CirrusError.Code(rawValue: error.code.rawValue) ?? .permissionFailure, error.message,
                        recordID: id)
                }
            }
            let store = await container.current(store)
            // Atomic custom zones (CloudKit's rule): a request in which an item of such a zone
            // fails is rolled back and runs again without that zone's items, which all fail —
            // with their own error, or batchRequestFailed.
            // Custom zone names only ("" never fails atomically); a zone with an item refused
            // before the server (a record saved twice, an id of another database) fails whole.
            // Their items still run once (rolled back), so each gets its own error, as on the
            // embedded engine, whose first planning round sees every item.
            var excluded = Set<String>()
            var forced = Set<String>()
            if atomically {
                for (i, op) in operations.enumerated() where results[i] != nil {
                    let id: RecordID
                    switch op {
                    case .save(let r, _, _): id = r.recordID
                    case .delete(let d, _): id = d
                    }
                    if !id.zoneID.isDefaultZone { forced.insert(id.zoneID.zoneName) }
                }
            }
            var firstErrors: [Int: CirrusError] = [:]
            var rounds = 0
            while true {
                let run = items.indices.filter { !excluded.contains(zoneName(items[$0].recordID)) }
                do {
                    let outcome = try await store.modify(
                        run.map { items[$0] }, atomically: false, by: user, quota: container.maximumRecordsPerDatabase,
                        zones: true, atomicZones: atomically,
                        failedZones: forced.subtracting(excluded), authorize: authorize,
                        afterWrites: notifyingAfterWrites())
                    for (k, r) in zip(run, outcome) { results[positions[k]] = r }
                    break
                } catch  where error.code == .batchRequestFailed && atomically && rounds < 8 {
                    rounds += 1
                    excluded.formUnion(forced)
                    for (j, e) in error.itemErrors {
                        let k = run[j]
                        excluded.insert(zoneName(items[k].recordID))
                        if firstErrors[k] == nil { firstErrors[k] = e }
                    }
                } catch {
                    throw error
                }
            }
            for k in items.indices where excluded.contains(zoneName(items[k].recordID)) {
                let id = items[k].recordID
                results[positions[k]] = .failure(
                    firstErrors[k]
                        ?? CirrusError(
                            .batchRequestFailed,
                            "another item of this atomic zone batch failed; nothing in zone \"\(id.zoneID.zoneName)\" was saved",
                            recordID: id))
            }
            container.publish(await store.schema)
            // Assets the deleted records held may be unreferenced now (swept at most once a minute).
            if deleting,
                schema.recordTypes.values.contains(where: { $0.fields.values.contains { $0.type.scalar == .asset } })
            {
                _ = try? await store.sweepAssets()
            }
        }
        return operations.enumerated().map { i, op in
            let id: RecordID
            switch op {
            case .save(let r, _, _): id = r.recordID
            case .delete(let d, _): id = d
            }
            return (id, results[i] ?? .failure(CirrusError(.internalError, "no result", recordID: id)))
        }
    }

    /// The zone name of an item for atomicity ("" for the default zone, never atomic).
    private func zoneName(_ id: RecordID) -> String { id.zoneID.isDefaultZone ? "" : id.zoneID.zoneName }

    // MARK: zones

    /// Creates a custom zone (nothing when it exists). badDatabase in the public database.
    public func save(zone: ZoneID) async throws(CirrusError) -> ZoneID {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        let z = try checkZone(zone)
        if z.isDefaultZone { return z }
        do {
            try Validation.validateZoneID(z)
        } catch {
            throw CirrusError(.invalidArguments, error.message, zoneID: zone)
        }
        try requireWriter()
        do {
            try await store.createZone(z.zoneName)
        } catch {
            throw error
        }
        return z
    }

    /// Deletes a custom zone, every record in it (notifying their deletions) and its zone
    /// subscriptions. zoneNotFound if it does not exist.
    public func deleteZone(_ zone: ZoneID) async throws(CirrusError) {
        try Self.checkCancelled()
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        let z = try checkZone(zone)
        if z.isDefaultZone { throw CirrusError(.invalidArguments, "the default zone cannot be deleted", zoneID: zone) }
        try requireWriter()
        let existed: Bool
        do {
            existed = try await container.current(store).deleteZone(z.zoneName)
        } catch {
            throw error
        }
        if !existed { throw CirrusError(.zoneNotFound, "no such zone", zoneID: zone) }
    }

    /// The zones of this database, the default zone first, then custom zones by name.
    public func allZones() async throws(CirrusError) -> [ZoneID] {
        try AccessRules.checkDatabaseAccess(scope: scope, identity: identity)
        return [.default] + (try await customZones()).sorted().map { ZoneID(zoneName: $0) }
    }

    func requireWriter() throws(CirrusError) {
        if identity.userRecordName == nil {
            throw CirrusError(.notAuthenticated, "changing zones needs a signed-in user")
        }
    }

    /// The names of this database's custom zones (none in the public database).
    func customZones() async throws(CirrusError) -> Set<String> {
        guard case .private = scope else { return [] }
        do {
            return Set(try await store.zoneNames())
        } catch {
            throw error
        }
    }

    /// A query's zone: nil (every zone), or one of this database's that exists (zoneNotFound).
    func resolveQueryZone(_ zone: ZoneID?) async throws(CirrusError) -> ZoneID? {
        guard let zone else { return nil }
        let z = try checkZone(zone)
        if !z.isDefaultZone, !(try await customZones()).contains(z.zoneName) {
            throw CirrusError(.zoneNotFound, "no such zone", zoneID: zone)
        }
        return z
    }

    // MARK: queries

    /// The first page of a query.
    public func records(
        matching query: RecordQuery, inZoneWith zoneID: ZoneID?, desiredKeys: [String]?, resultsLimit: Int
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        let (checked, _) = try check(query)
        let zone = try await resolveQueryZone(zoneID)
        return try await page(checked, zone: zone, desiredKeys: desiredKeys, after: nil, resultsLimit: resultsLimit)
    }

    /// The page after a cursor's.
    public func records(
        continuingMatchFrom cursor: QueryCursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        guard cursor.scope == scope.cursorScope else {
            throw CirrusError(.invalidArguments, "the cursor was issued by another database (\(cursor.scope))")
        }
        try checkCanRead(recordType: cursor.query.recordType)
        try recheck(cursor.query)
        var keys: [String] = []
        for v in cursor.position.values {
            guard case .string(let s) = v else {
                throw CirrusError(.invalidArguments, "the cursor was not issued by the PostgreSQL engine")
            }
            keys.append(s)
        }
        return try await page(
            cursor.query, zone: cursor.zone, desiredKeys: desiredKeys,
            after: KeysetPosition(keys: keys, recordID: cursor.position.recordID), resultsLimit: resultsLimit)
    }

    /// The cursor of a token this database issued.
    public func cursor(fromToken token: String, expecting query: RecordQuery?) throws(CirrusError) -> QueryCursor {
        let expected = try query.map { (q) throws(CirrusError) in try check(q).0 }
        do {
            return try QueryCursor(token: token, secret: cursorSecret, expecting: expected)
        } catch {
            throw CirrusError(.invalidArguments, "\(error)")
        }
    }

    /// The index options `query` needs in production.
    public func requiredIndexes(for query: RecordQuery) throws(CirrusError) -> [IndexRequirement] {
        QueryPlanner.requiredIndexes(try check(query).0)
    }

    /// Throws unless this identity may read records of `recordType`.
    public func checkCanRead(recordType: String) throws(CirrusError) {
        try AccessRules.checkCanRead(recordType: recordType, scope: scope, identity: identity, schema: schema)
    }

    /// Whether this identity may read `record`.
    public func canRead(_ record: Record) -> Bool {
        AccessRules.canRead(record, scope: scope, identity: identity, schema: schema)
    }

    /// PostgreSQL's plan of the query's first page (`execute`: `EXPLAIN ANALYZE`, and the page
    /// run to count what it returns).
    public func explain(
        _ query: RecordQuery, inZoneWith zoneID: ZoneID?, resultsLimit: Int, execute: Bool
    ) async throws(CirrusError) -> QueryExplanation {
        let (checked, warnings) = try check(query)
        let zone = try await resolveQueryZone(zoneID)
        let e: PostgresExplanation
        do {
            e = try await container.current(store).explain(
                checked, inZone: zone, resultsLimit: resultsLimit, analyze: execute)
        } catch {
            throw error
        }
        var returned: Int? = nil
        if execute {
            returned = try await page(checked, zone: zone, desiredKeys: [], after: nil, resultsLimit: resultsLimit)
                .matchResults.count
        }
        let required = QueryPlanner.requiredIndexes(checked)
        return QueryExplanation(
            enginePlan: e.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
            requiredIndexes: required,
            missingIndexes: QueryExplanation.missing(required, in: schema.recordTypes[checked.recordType]),
            warnings: warnings, returned: returned)
    }

    // MARK: internals

    static func checkCancelled() throws(CirrusError) { try DatabaseRules.checkCancelled() }

    func checkZone(_ z: ZoneID) throws(CirrusError) -> ZoneID { try DatabaseRules.checkZone(z, scope: scope) }

    func checkID(_ id: RecordID) throws(CirrusError) -> RecordID { try DatabaseRules.checkID(id, scope: scope) }

    /// Checks a query against the container's schema: access, predicate, sort descriptors.
    func check(_ q: RecordQuery) throws(CirrusError) -> (Query, [String]) {
        try checkCanRead(recordType: q.recordType)
        return try DatabaseRules.check(q, schema: schema, now: store.clock())
    }

    /// Checks a cursor's query against the current schema.
    func recheck(_ q: Query) throws(CirrusError) { try DatabaseRules.recheck(q, schema: schema, now: store.clock()) }

    func page(
        _ q: Query, zone: ZoneID?, desiredKeys: [String]?, after: KeysetPosition?, resultsLimit: Int
    ) async throws(CirrusError) -> (matchResults: [(RecordID, Result<Record, CirrusError>)], queryCursor: QueryCursor?)
    {
        let schema = self.schema
        guard schema.recordTypes[q.recordType] != nil else {
            // A type no record has created yet (development): no rows, as the embedded engine says.
            return ([], nil)
        }
        let p: PostgresQueryPage
        do {
            p = try await container.current(store).page(
                q, zone: zone, after: after, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        } catch {
            throw error
        }
        var records = p.records
        if !AccessRules.readsEveryRecord(of: q.recordType, scope: scope, identity: identity, schema: schema) {
            records = records.filter { AccessRules.canRead($0, scope: scope, identity: identity, schema: schema) }
        }
        let cursor = p.cursor.map {
            QueryCursor(
                scope: scope.cursorScope, query: q, zone: zone, desiredKeys: desiredKeys,
                position: OrderKey(values: $0.position.keys.map { .string($0) }, recordID: $0.position.recordID))
        }
        return (records.map { ($0.recordID, .success($0)) }, cursor)
    }
}

extension PostgresSavePolicy {
    /// The façade's policy.
    init(_ policy: SavePolicy) {
        switch policy {
        case .ifServerRecordUnchanged: self = .ifServerRecordUnchanged
        case .changedKeys: self = .changedKeys
        case .allKeys: self = .allKeys
        }
    }
}

extension PostgresStore {
    /// A store for another tenant of the same container, sharing this store's connections,
    /// Citus flag and schema. Closing it would close the shared pool: only the container's
    /// first store is closed.
    nonisolated func sibling(for tenant: PostgresTenant) -> PostgresStore {
        let s = PostgresStore(
            client: client, runTask: runTask, tenant: tenant, address: address, clock: clock, timeout: timeout,
            layout: layout, statements: statements)
        return s
    }

    /// Creates the container's base tables (names, counters, the stored schema) when they are
    /// missing, keeping any schema stored already: a new container answers fetches and
    /// deletions with unknownItem instead of a missing relation. Single-node layout only.
    func prepare() async throws(CirrusError) {
        guard layout == .singleNode else { return }
        try await update { stored in
            // Every container has the Users type, as a container directory does.
            var s = stored
            if s.recordTypes[Schema.usersRecordType] == nil {
                s.recordTypes[Schema.usersRecordType] = RecordTypeSchema(name: Schema.usersRecordType)
            }
            return s
        }
    }

    /// Creates `cirrus_zones` (tenant, zone name, the sequence it was created at) when missing,
    /// under the namespace's DDL lock.
    func prepareZones() async throws(CirrusError) {
        let namespace = tenant.namespace
        let logger = self.logger
        let table = SQLName.qualified(namespace, "cirrus_zones")
        let citus = self.citus && layout == .singleNode
        try await run("preparing the zones of \(namespace)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var lock = PostgresBindings()
                lock.append(namespace)
                let existed = try await Self.tableExists(conn, namespace, "cirrus_zones", logger)
                for (sql, binds) in [
                    ("SELECT pg_advisory_xact_lock(hashtext($1))", lock),
                    ("CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))", PostgresBindings()),
                    (
                        "CREATE TABLE IF NOT EXISTS \(table) (tenant text NOT NULL, zone_name text COLLATE \"C\" NOT NULL, "
                            + "created_seq bigint NOT NULL DEFAULT 0, PRIMARY KEY (tenant, zone_name))",
                        PostgresBindings()
                    ),
                    // Zones made before change tokens count as created at sequence 0.
                    (
                        "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS created_seq bigint NOT NULL DEFAULT 0",
                        PostgresBindings()
                    ),
                ] {
                    for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                    {}
                }
                // Under Citus the zones are distributed with the other tenant tables (change
                // fetches join them with the names and tombstones of one tenant).
                if citus && !existed {
                    var t = PostgresBindings()
                    t.append(table)
                    t.append(SQLName.qualified(namespace, "cirrus_tenants"))
                    for try await _ in try await conn.query(
                        PostgresQuery(
                            unsafeSQL: "SELECT create_distributed_table($1::regclass, 'tenant', colocate_with => $2)",
                            binds: t), logger: logger)
                    {}
                }
            }
        }
    }

    /// This tenant's custom zones, by name.
    func zoneNames() async throws(CirrusError) -> [String] {
        let table = SQLName.qualified(tenant.namespace, "cirrus_zones")
        let key = tenant.key
        return try await run("listing the zones of \(key)", retryRead: true) { client in
            var b = SQLBuilder()
            let t = b.param(key)
            var out: [String] = []
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT zone_name FROM \(table) WHERE tenant = \(t) ORDER BY zone_name", binds: b.binds))
            for try await name in rows.decode(String.self) { out.append(name) }
            return out
        }
    }

    /// Creates the custom zone `name` of this tenant at the tenant's next sequence (nothing when
    /// it exists).
    func createZone(_ name: String) async throws(CirrusError) {
        let table = SQLName.qualified(tenant.namespace, "cirrus_zones")
        let key = tenant.key
        let context = writeContext
        try await run("creating zone \(name) of \(key)") { client in
            try await client.withTransaction(logger: context.logger) { conn in
                let w = context.make(conn)
                var b = SQLBuilder()
                let t = b.param(key)
                let z = b.param(name)
                var exists = false
                for try await _ in try await w.query(
                    "SELECT 1 FROM \(table) WHERE tenant = \(t) AND zone_name = \(z)", b)
                { exists = true }
                if exists { return }
                let seq = try await w.nextSequence()
                try await w.exec(
                    "INSERT INTO \(table) (tenant, zone_name, created_seq) VALUES (\(t), \(z), "
                        + "\(b.param(String(seq)))::bigint) ON CONFLICT DO NOTHING", b)
            }
        }
    }

    /// What makes a write context of this tenant (no record tables) on a connection.
    nonisolated var writeContext: (logger: Logger, make: @Sendable (PostgresConnection) -> WriteContext) {
        let (logger, namespace, key, environment) = (self.logger, tenant.namespace, tenant.key, tenant.environment)
        let partitioned = layout == .hashPartitioned
        return (
            logger,
            { conn in
                WriteContext(
                    conn: conn, logger: logger, tables: [:], namespace: namespace, tenant: key,
                    environment: environment, now: Timestamp(millisecondsSince1970: 0), user: nil,
                    partitioned: partitioned)
            }
        )
    }

    /// Deletes the custom zone `name`, every record in it and its zone subscriptions (the
    /// records' deletions notify first), in one transaction; false when there is no such zone.
    func deleteZone(_ name: String) async throws(CirrusError) -> Bool {
        let (schema, now) = (self.schema, clock())
        let namespace = tenant.namespace
        let key = tenant.key
        let logger = self.logger
        let tables = self.tables.values.map(\.qualifiedTable).sorted()
        let context = writeContext
        return try await run("deleting zone \(name) of \(key)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var b = SQLBuilder()
                let t = b.param(key)
                let z = b.param(name)
                var existed = false
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM \(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = \(t) "
                            + "AND zone_name = \(z) RETURNING 1", binds: b.binds), logger: logger)
                { existed = true }
                guard existed else { return false }
                // The deletion takes a sequence: the zone's old tokens are older than a zone of
                // the same name made later.
                let seq = try await context.make(conn).nextSequence()
                try await Self.zoneDeleted(
                    conn, logger: logger, namespace: namespace, tenant: key, zone: name, seq: seq, tables: tables,
                    schema: schema, now: now)
                var removed = 0
                for table in tables
                    + ["cirrus_names", "cirrus_tombstones", "cirrus_backrefs"].map({ SQLName.qualified(namespace, $0) })
                {
                    let names = table == SQLName.qualified(namespace, "cirrus_names")
                    for try await _ in try await conn.query(
                        PostgresQuery(
                            unsafeSQL: "DELETE FROM \(table) WHERE tenant = \(t) AND zone_name = \(z) RETURNING 1",
                            binds: b.binds),
                        logger: logger)
                    { if names { removed += 1 } }
                }
                try await context.make(conn).countRecords(-removed, RecordID(recordName: "-"))
                return true
            }
        }
    }

    /// Takes `schema` (the container's, grown by another tenant's save) and the Citus flag.
    func adopt(_ schema: Schema, citus: Bool? = nil) {
        if let citus { self.citus = citus }
        if schema != self.schema { setSchema(schema) }
    }

    /// The secret `name`: 32 random bytes made by the first process that asked and kept in
    /// `cirrus_secrets`, so every process reads the same.
    func secret(named name: String) async throws(CirrusError) -> [UInt8] {
        var fresh = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for i in fresh.indices { fresh[i] = UInt8.random(in: 0...255, using: &rng) }
        let namespace = tenant.namespace
        let table = SQLName.qualified(namespace, "cirrus_secrets")
        let key = name
        let hex = SQLText.hex(fresh)
        let logger = self.logger
        let citus = self.citus && layout == .singleNode
        let secret = try await run("reading the secret \(key)") { client in
            try await client.withTransaction(logger: logger) { conn in
                var b = SQLBuilder()
                let k = b.param(key)
                let h = b.param(hex)
                var lock = PostgresBindings()
                lock.append(namespace)
                for try await _ in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lock), logger: logger)
                {}
                let existed = try await Self.tableExists(conn, namespace, "cirrus_secrets", logger)
                for sql in [
                    "CREATE SCHEMA IF NOT EXISTS \(SQLName.quote(namespace))",
                    "CREATE TABLE IF NOT EXISTS \(table) (name text PRIMARY KEY, secret bytea NOT NULL)",
                ] {
                    for try await _ in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: logger) {}
                }
                // Under Citus: one copy on every node (it is the container's, not a tenant's).
                if citus && !existed {
                    var t = PostgresBindings()
                    t.append(table)
                    for try await _ in try await conn.query(
                        PostgresQuery(unsafeSQL: "SELECT create_reference_table($1::regclass)", binds: t),
                        logger: logger)
                    {}
                }
                for try await _ in try await conn.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(table) (name, secret) VALUES (\(k), decode(\(h), 'hex')) "
                            + "ON CONFLICT (name) DO NOTHING", binds: b.binds), logger: logger)
                {}
                var c = SQLBuilder()
                let k2 = c.param(key)
                var out: [UInt8] = []
                for try await bytes in try await conn.query(
                    PostgresQuery(unsafeSQL: "SELECT secret FROM \(table) WHERE name = \(k2)", binds: c.binds),
                    logger: logger
                ).decode(ByteBuffer.self) {
                    out = Array(bytes.readableBytesView)
                }
                return out
            }
        }
        guard secret.count == 32 else {
            throw CirrusError(
                .internalError, "the secret \(key) has \(secret.count) bytes, not 32", location: address)
        }
        return secret
    }
}
