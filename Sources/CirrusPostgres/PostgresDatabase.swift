// PostgresDatabase: the PostgreSQL side of the storage seam — a `DatabaseBackend` over one
// tenant's PostgresStore, handed out by PostgresContainer (PostgresContainer.swift), the
// `ContainerBackend` behind `Container.open(postgres:…)`: the same `Container` / `Database` API as
// a container directory.
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
        var (results, items, positions) = serverItems(operations)
        if !items.isEmpty {
            let schema = self.schema
            let authorize = writeAuthorizer(schema)
            let store = await container.current(store)
            try await runAtomicZones(
                items, positions: positions, operations: operations, atomically: atomically, user: user,
                store: store, authorize: authorize, results: &results)
            container.publish(await store.schema)
            // Assets the deleted records held may be unreferenced now (swept at most once a minute).
            if operations.contains(where: { if case .delete = $0 { return true } else { return false } }),
                schema.recordTypes.values.contains(where: { $0.fields.values.contains { $0.type.scalar == .asset } })
            {
                _ = try? await store.sweepAssets()
            }
        }
        return operations.enumerated().map { i, op in
            let id = Self.recordID(of: op)
            return (id, results[i] ?? .failure(CirrusError(.internalError, "no result", recordID: id)))
        }
    }

    /// The record id an operation names.
    private static func recordID(of op: RecordOperation) -> RecordID {
        switch op {
        case .save(let r, _, _): r.recordID
        case .delete(let d, _): d
        }
    }

    /// The items of `operations` this database sends to the server — saves first, then
    /// deletions (the embedded engine's order) — with each one's position in `operations`;
    /// `results` holds the failures of the others (an id of another database, a record saved
    /// twice in one request: refused after its first save, as there), nil elsewhere.
    private func serverItems(
        _ operations: [RecordOperation]
    ) -> (results: [Result<Record?, CirrusError>?], items: [PostgresItem], positions: [Int]) {
        var results: [Result<Record?, CirrusError>?] = Array(repeating: nil, count: operations.count)
        var items: [PostgresItem] = []
        var positions: [Int] = []
        let saves = operations.indices.filter { if case .save = operations[$0] { return true } else { return false } }
        let order = saves + operations.indices.filter { !saves.contains($0) }
        var saved = Set<RecordID>()
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
        return (results, items, positions)
    }

    /// The write grant of `schema` for this identity, checked by the store for every item after
    /// the server's version is read and locked; its error fails that item.
    private func writeAuthorizer(_ schema: Schema) -> @Sendable (String, Record?, RecordID) throws -> Void {
        let scope = self.scope, identity = self.identity
        return { type, server, id in
            do throws(CirrusError) {
                try AccessRules.checkWrite(
                    type: type, current: server, id: id, scope: scope, identity: identity, schema: schema)
            } catch {
                throw CirrusError(
                    CirrusError.Code(rawValue: error.code.rawValue) ?? .permissionFailure, error.message,
                    recordID: id)
            }
        }
    }

    /// Runs `items` (at `positions` of `operations`) on `store`, each checked by `authorize`, and
    /// sets their `results`.
    ///
    /// Atomic custom zones (CloudKit's rule): a request in which an item of such a zone
    /// fails is rolled back and runs again without that zone's items, which all fail —
    /// with their own error, or batchRequestFailed.
    /// Custom zone names only ("" never fails atomically); a zone with an item refused
    /// before the server (a record saved twice, an id of another database) fails whole.
    /// Their items still run once (rolled back), so each gets its own error, as on the
    /// embedded engine, whose first planning round sees every item.
    private func runAtomicZones(
        _ items: [PostgresItem], positions: [Int], operations: [RecordOperation], atomically: Bool, user: String,
        store: PostgresStore, authorize: @escaping @Sendable (String, Record?, RecordID) throws -> Void,
        results: inout [Result<Record?, CirrusError>?]
    ) async throws(CirrusError) {
        var excluded = Set<String>()
        var forced = Set<String>()
        if atomically {
            for (i, op) in operations.enumerated() where results[i] != nil {
                let id = Self.recordID(of: op)
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
