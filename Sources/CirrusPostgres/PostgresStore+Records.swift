// Saves, fetches and deletes, with CloudKit's save policies and change tags (docs/database.md):
//
// - A request's items run in one transaction, saves before deletions, each against the
//   committed state plus the request's earlier items (rows are locked FOR UPDATE as read).
// - `atomically` (custom zones in CloudKit): one failing item rolls the whole request back; it
//   throws batchRequestFailed (22) with the failing item's own error and 22 for the others.
//   Otherwise each item runs under a SAVEPOINT and failures are reported per item.
// - The change tag of every record a request writes is the tenant's request counter in base 36
//   (row `cirrus_tenants`, incremented under its row lock), so tags never repeat in a tenant.
//   The row lock is held to the commit, so a tenant's requests commit in counter order: the
//   counter is also the sequence of the tenant's history that change tokens count in
//   (`cirrus_names.seq` for live records, `cirrus_tombstones` for deletions;
//   PostgresStore+Changes.swift).
// - A record name keeps its record type (`cirrus_names`): another type → constraintViolation.

import CirrusFacade
import Logging
import NIOCore
import PostgresNIO
import RecordModel

/// How a save treats the server's version of a record (CloudKit's `CKModifyRecordsOperation.RecordSavePolicy`).
public enum PostgresSavePolicy: Sendable, Hashable {
    /// The record's change tag must be the server's (a new record has none): else serverRecordChanged (14).
    case ifServerRecordUnchanged
    /// The given fields are written over the server's; the others are kept. The tag is ignored.
    case changedKeys
    /// The record replaces the server's. The tag is ignored.
    case allKeys
}

extension SavePolicy {
    /// The façade's policy of the same name.
    init(_ policy: PostgresSavePolicy) {
        switch policy {
        case .ifServerRecordUnchanged: self = .ifServerRecordUnchanged
        case .changedKeys: self = .changedKeys
        case .allKeys: self = .allKeys
        }
    }
}

/// What a ``PostgresStore/modify(saving:deleting:policy:atomically:by:)`` request did.
public struct PostgresModifyResult: Sendable {
    /// The saved records as stored (system fields set), in request order.
    public var saved: [Record]
    /// The deleted record ids, in request order.
    public var deleted: [RecordID]
    /// Items that failed (non-atomic requests only; an atomic request throws instead).
    public var failures: [RecordID: CirrusError]
}

/// One item of a request with a rule per item (what the façade's `modify` sends).
enum PostgresItem: Sendable {
    /// Save under a policy; `mergingFields`: after the tag check, fields the record does not
    /// carry keep the server's values.
    case save(Record, PostgresSavePolicy, mergingFields: Bool)
    /// Delete; with a tag, only while the server's record has it.
    case delete(RecordID, ifChangeTag: String?)

    var recordID: RecordID {
        switch self {
        case .save(let r, _, _): r.recordID
        case .delete(let id, _): id
        }
    }

    var record: Record? {
        if case .save(let r, _, _) = self { return r }
        return nil
    }
}

/// What one item of a request did to a record: its version before (nil: created) and after
/// (nil: deleted).
struct PostgresChange: Sendable {
    var old: Record?
    var new: Record?
}

/// Work a request does in its own transaction after its items, before the commit (the
/// notifications of the façade's subscriptions): the connection, the tenant's sequence the
/// request writes at, and the changes of the items that succeeded, in order. An error rolls the
/// whole request back.
typealias PostgresAfterWrites = @Sendable (PostgresConnection, Int64, [PostgresChange]) async throws -> Void

extension PostgresStore {
    /// CloudKit's limit on items per modify request.
    public static let maximumItemsPerRequest = 400

    /// Most record types whose tables a fetch by id reads in one statement (see
    /// ``records(for:)``).
    public static let maximumTypesPerFetch = 16

    /// Saves one record and returns it as stored.
    public func save(
        _ record: Record, policy: PostgresSavePolicy = .ifServerRecordUnchanged, by user: String? = nil
    )
        async throws(CirrusError) -> Record
    {
        do {
            return try await modify(saving: [record], policy: policy, atomically: true, by: user).saved[0]
        } catch {
            throw error.partialErrors[record.recordID] ?? error
        }
    }

    /// Deletes one record; unknownItem (11) when there is none.
    public func delete(_ id: RecordID) async throws(CirrusError) {
        do {
            _ = try await modify(deleting: [id], atomically: true)
        } catch {
            throw error.partialErrors[id] ?? error
        }
    }

    /// Saves and deletes records of this tenant in one transaction (see the file header).
    ///
    /// ```swift
    /// let result = try await store.modify(saving: [a, b], deleting: [oldID], atomically: true)
    /// ```
    public func modify(
        saving: [Record] = [], deleting: [RecordID] = [], policy: PostgresSavePolicy = .ifServerRecordUnchanged,
        atomically: Bool = true, by user: String? = nil
    ) async throws(CirrusError) -> PostgresModifyResult {
        let items =
            saving.map { PostgresItem.save($0, policy, mergingFields: false) }
            + deleting.map {
                PostgresItem.delete($0, ifChangeTag: nil)
            }
        let outcome = try await modify(items, atomically: atomically, by: user)
        var result = PostgresModifyResult(saved: [], deleted: [], failures: [:])
        for (item, r) in zip(items, outcome) {
            switch r {
            case .success(let rec?): result.saved.append(rec)
            case .success(nil): result.deleted.append(item.recordID)
            case .failure(let e): result.failures[item.recordID] = e
            }
        }
        return result
    }

    /// Saves and deletes with a rule per item, in one transaction (see the file header): one
    /// result per item in order — the record as stored, nil for a deletion, or the item's error
    /// (non-atomic requests; an atomic one throws batchRequestFailed instead). `authorize` runs
    /// for every item after the server's version is read and locked (nil for a new record), and
    /// its error fails that item.
    ///
    /// `zones` (the façade's containers): an item in a custom zone needs the zone's row in
    /// `cirrus_zones` (locked FOR SHARE, so a zone deletion waits) or fails with zoneNotFound.
    /// `atomicZones`: when any item of a custom zone fails (or the request has an item of one of
    /// `failedZones`, whose other items the caller refused), the whole request is rolled back and
    /// `batchRequestFailed` is thrown with the failed items' errors in
    /// `partialErrors` — the caller runs it again without that zone's items (CloudKit's atomic
    /// zones; default-zone items stay independent).
    func modify(
        _ items: [PostgresItem], atomically: Bool, by user: String?, quota: Int? = nil, zones: Bool = false,
        atomicZones: Bool = false,
        failedZones: Set<String> = [],
        authorize: (@Sendable (_ type: String, _ server: Record?, _ id: RecordID) throws -> Void)? = nil,
        afterWrites: PostgresAfterWrites? = nil
    ) async throws(CirrusError) -> [Result<Record?, CirrusError>] {
        let saving = items.compactMap(\.record)
        let count = items.count
        guard count <= Self.maximumItemsPerRequest else {
            throw CirrusError(
                .limitExceeded, "\(count) items in one request; the limit is \(Self.maximumItemsPerRequest)")
        }
        let cached = schema
        let tables = self.tables
        let environment = tenant.environment
        let address = self.address
        // Development grows the schema just in time, as the façade does: new types and fields
        // (automatic index options) are DDL in the request's own transaction.
        let grows = environment == .development && saving.contains { Self.grows(cached, by: $0) }
        let partitioned = layout == .hashPartitioned
        if grows && partitioned {
            throw CirrusError(
                .invalidArguments,
                "a save cannot grow the schema of a hash-partitioned layout (its DDL is made outside the store)",
                location: address)
        }
        let registry = statements
        // Saves only, of the schema's types: a few statements for the whole request
        // (PostgresStore+Batch.swift); a batch PostgreSQL refuses runs again item by item.
        var batch = !grows && !partitioned && Self.batchable(items, tables: tables)
        while true {
            do {
                let r = try await modifyOnce(
                    items, atomically: atomically, by: user, quota: quota, zones: zones, atomicZones: atomicZones,
                    failedZones: failedZones, authorize: authorize, afterWrites: afterWrites, batch: batch,
                    grows: grows, registry: registry)
                await noteWritten(items, r)
                return r
            } catch  where error.batchRefused && batch {
                batch = false
            }
        }
    }

    /// One run of ``modify(_:atomically:by:quota:zones:atomicZones:failedZones:authorize:afterWrites:)``:
    /// batched (`batch`) or item by item.
    private func modifyOnce(
        _ items: [PostgresItem], atomically: Bool, by user: String?, quota: Int?, zones: Bool, atomicZones: Bool,
        failedZones: Set<String>,
        authorize: (@Sendable (_ type: String, _ server: Record?, _ id: RecordID) throws -> Void)?,
        afterWrites: PostgresAfterWrites?, batch: Bool, grows: Bool, registry: PreparedSQL.Registry
    ) async throws(CirrusError) -> [Result<Record?, CirrusError>] {
        let count = items.count
        let tenantKey = tenant.key
        let logger = self.logger
        let request = ModifyTransaction(
            items: items, atomically: atomically, quota: quota, zones: zones, atomicZones: atomicZones,
            failedZones: failedZones, authorize: authorize, afterWrites: afterWrites, batch: batch, grows: grows,
            registry: registry, cached: schema, tables: tables, scope: scope, now: clock(), address: address,
            citus: citus, userID: user.map { RecordID(recordName: $0) })
        let (result, grown) = try await run("modifying \(count) records of \(tenantKey)") { client in
            try await client.withTransaction(logger: logger) {
                conn -> ([Result<Record?, CirrusError>], Schema?) in
                try await request.run(conn)
            }
        }
        if let grown { setSchema(grown) }
        return result
    }

    /// `schema` with the types and fields `records` bring (development's just-in-time schema):
    /// each new field gets CloudKit's automatic index options for its type. Records that are
    /// not valid and empty lists (their type is unknown) add nothing.
    static func grown(_ schema: Schema, by records: [Record]) -> Schema {
        var s = schema
        for r in records {
            guard (try? r.validateContent()) != nil else { continue }
            var type = s.recordTypes[r.recordType] ?? RecordTypeSchema(name: r.recordType)
            for (name, v) in r.fields where type.fields[name] == nil {  // in name order
                guard let ft = v.fieldType else { continue }
                type.fields[name] = FieldSchema(name: name, type: ft, options: .automatic(for: ft))
            }
            if s.recordTypes[r.recordType] != type { s.recordTypes[r.recordType] = type }
        }
        return s
    }

    /// Whether `record` would grow `schema` (`grown(schema, by: [record]) != schema`, without
    /// copying and comparing schemas: a request checks each of its records).
    static func grows(_ schema: Schema, by r: Record) -> Bool {
        if let type = schema.recordTypes[r.recordType],
            !r.fields.contains(where: { type.fields[$0.key] == nil && $0.value.fieldType != nil })
        {
            return false
        }
        return (try? r.validateContent()) != nil
    }

    /// An item's error with its record id.
    static func itemError(_ error: any Error, _ id: RecordID) -> CirrusError {
        var e = (error as? CirrusError) ?? mapError(error, what: "writing a record", address: "")
        if e.recordID == nil { e.recordID = id }
        if e.location == "" { e.location = nil }
        return e
    }

    /// The record with `id`; unknownItem (11) when there is none.
    public func record(for id: RecordID) async throws(CirrusError) -> Record {
        guard let r = try await records(for: [id])[id] else {
            throw CirrusError(.unknownItem, "no such record", location: address, recordID: id)
        }
        return r
    }

    /// The records of `ids` that exist (absent ids are missing from the answer).
    ///
    /// One statement, one round trip: the rows of every record type's table with those keys
    /// (`UNION ALL`; a name is in its type's table only), as a prepared statement whose text
    /// depends on the schema's types and on whether one id or several are asked. A schema of
    /// more than ``maximumTypesPerFetch`` types reads the names' types first (two statements).
    public func records(for ids: [RecordID]) async throws(CirrusError) -> [RecordID: Record] {
        if ids.isEmpty { return [:] }
        let tables = self.tables
        let scope = self.scope
        let tenantKey = tenant.key
        let logger = self.logger
        if tables.count <= Self.maximumTypesPerFetch {
            let layouts = tables.values.sorted { $0.table < $1.table }
            if layouts.isEmpty { return [:] }
            var b = SQLBuilder()
            let t = b.param(tenantKey)
            let sql: String
            if ids.count == 1, let id = ids.first {
                let keys =
                    "tenant = \(t) AND zone_name = \(b.param(id.zoneID.zoneName)) AND zone_owner = "
                    + "\(b.param(id.zoneID.ownerName)) AND record_name = \(b.param(id.recordName))"
                sql = layouts.map { "SELECT data FROM \($0.qualifiedTable) WHERE \(keys)" }.joined(
                    separator: " UNION ALL ")
            } else {
                // Per id a LATERAL probe of each type's primary key (WriteContext.lookup's form).
                let z = b.param(ids.map(\.zoneID.zoneName))
                let o = b.param(ids.map(\.zoneID.ownerName))
                let r = b.param(ids.map(\.recordName))
                let keys = "tenant = \(t) AND zone_name = u.z AND zone_owner = u.o AND record_name = u.r"
                sql =
                    "SELECT l.data FROM unnest(\(z)::text[], \(o)::text[], \(r)::text[]) AS u(z, o, r) CROSS JOIN LATERAL ("
                    + layouts.map { "SELECT data FROM \($0.qualifiedTable) WHERE \(keys)" }.joined(
                        separator: " UNION ALL ")
                    + ") l"
            }
            let binds = b.binds
            // One id: a prepared primary-key probe. Several: planned at each call (see
            // WriteContext.planned), through the unnamed statement.
            let registry = ids.count == 1 ? statements : nil
            return try await run("fetching \(ids.count) records of \(tenantKey)", retryRead: true) { client in
                var out: [RecordID: Record] = [:]
                var rows: [PostgresRow] = []
                if let registry {
                    rows = try await client.run(sql, binds, registry: registry, logger: logger)
                } else {
                    for try await r in try await client.query(
                        PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                    {
                        rows.append(r)
                    }
                }
                for row in rows {
                    let data = try row.decode(ByteBuffer.self)
                    let r = try RecordRow.decode(Array(data.readableBytesView))
                    out[r.recordID] = r
                }
                return out
            }
        }
        return try await run("fetching \(ids.count) records of \(tenantKey)", retryRead: true) { client in
            try await client.withConnection { conn in
                let ctx = WriteContext(
                    conn: conn, scope: scope, tables: tables, now: Timestamp(millisecondsSince1970: 0), user: nil)
                return try await ctx.records(ids)
            }
        }
    }
}

/// One run of a modify request in its transaction (`PostgresStore.modifyOnce`): the request's
/// items and rules, and what it reads of the store, taken when the run starts.
private struct ModifyTransaction: Sendable {
    /// The request's items, in order.
    let items: [PostgresItem]
    /// One failing item rolls the whole request back.
    let atomically: Bool
    /// Most records the tenant may hold (nil: no quota).
    let quota: Int?
    /// An item in a custom zone needs the zone's row.
    let zones: Bool
    /// A failed item of a custom zone (or an item of `failedZones`) rolls the request back.
    let atomicZones: Bool
    /// Custom zones whose other items the caller refused.
    let failedZones: Set<String>
    /// The write grant's check of an item, after the server's version is read and locked.
    let authorize: (@Sendable (_ type: String, _ server: Record?, _ id: RecordID) throws -> Void)?
    /// Work after the items, before the commit (the subscriptions' notifications).
    let afterWrites: PostgresAfterWrites?
    /// The saves run as one batch (PostgresStore+Batch.swift).
    let batch: Bool
    /// Development's schema grows by the request's records.
    let grows: Bool
    /// The statements prepared on the store's sessions.
    let registry: PreparedSQL.Registry
    /// The store's schema when the run started.
    let cached: Schema
    /// The tables of `cached`, by record type.
    let tables: [String: TableLayout]
    /// The store's tenant: namespace, key, environment, logger, layout.
    let scope: TenantScope
    /// The request's time.
    let now: Timestamp
    /// `host:port/database`, for messages.
    let address: String
    /// Whether new tables are distributed by Citus.
    let citus: Bool
    /// The user the request runs for (nil: the administrator).
    let userID: RecordID?

    /// What the items did so far, in order.
    struct Progress {
        /// One result per item run so far.
        var result: [Result<Record?, CirrusError>] = []
        /// The changes of the items that succeeded (cascaded deletions after their item).
        var changes: [PostgresChange] = []
        /// The failed item of an atomic request, and its error.
        var failed: (RecordID, CirrusError)? = nil
        /// The schema grown by the request (nil: unchanged).
        var grown: Schema? = nil
        /// The schema as the items that succeeded left it.
        var current: Schema
    }

    /// The tables of schema `s`, by record type.
    func layouts(_ s: Schema) -> [String: TableLayout] {
        Dictionary(
            uniqueKeysWithValues: s.recordTypes.values.map {
                ($0.name, TableLayout(namespace: scope.namespace, publicTenant: scope.publicTenant, schema: $0))
            })
    }

    /// Runs the request on `conn` (in its transaction): each item's result, and the schema it
    /// grew (nil: unchanged). Throws `batchRequestFailed` when an atomic request or an atomic
    /// zone has a failed item (the caller's transaction then rolls everything back).
    func run(_ conn: PostgresConnection) async throws -> ([Result<Record?, CirrusError>], Schema?) {
        var tables = tables
        var progress = Progress(current: cached)
        if grows && atomically {
            // All or nothing: the whole request's growth first.
            let saving = items.compactMap(\.record)
            let cached = self.cached
            let s = try await PostgresStore.applyDDL(
                conn, namespace: scope.namespace, publicTenant: scope.publicTenant, citus: citus,
                logger: scope.logger, address: address
            ) { old in PostgresStore.grown(old ?? cached, by: saving) }
            progress.grown = s
            tables = layouts(s)
        }
        var ctx = WriteContext(conn: conn, scope: scope, tables: tables, now: now, user: userID)
        ctx.quota = quota
        ctx.registry = registry
        ctx.sequence = try await ctx.nextSequence()
        let tag = String(ctx.sequence, radix: 36)
        if batch {
            try await runBatch(ctx, tag: tag, &progress)
        } else {
            try await runItems(conn, &ctx, tag: tag, &progress)
        }
        if atomicZones { try checkAtomicZones(progress.result) }
        if let (id, e) = progress.failed {
            var all: [RecordID: CirrusError] = [:]
            for other in items.map(\.recordID) where other != id {
                all[other] = CirrusError(
                    .batchRequestFailed, "not written: another item of the atomic request failed",
                    recordID: other)
            }
            all[id] = e
            throw CirrusError(
                .batchRequestFailed, "the atomic request was rolled back: \(e.message)", recordID: id,
                serverRecord: e.serverRecord, partialErrors: all)
        }
        if let afterWrites, !progress.changes.isEmpty { try await afterWrites(conn, ctx.sequence, progress.changes) }
        return (progress.result, progress.grown)
    }

    /// The saves (every item is one) as one batch (`WriteContext.saveBatch`).
    func runBatch(_ ctx: WriteContext, tag: String, _ progress: inout Progress) async throws {
        let saves = items.compactMap {
            item -> (record: Record, policy: PostgresSavePolicy, merging: Bool)? in
            if case .save(let r, let p, let m) = item { return (r, p, m) }
            return nil
        }
        let outcome = try await ctx.saveBatch(
            saves, tag: tag, atomically: atomically, zones: zones, authorize: authorize)
        for (item, o) in zip(items, outcome) {
            switch o {
            case .success(let (stored, server)):
                progress.result.append(.success(stored))
                progress.changes.append(PostgresChange(old: server, new: stored))
            case .failure(let e):
                if atomically && progress.failed == nil { progress.failed = (item.recordID, e) }
                progress.result.append(.failure(e))
            }
        }
    }

    /// The items one by one, in order; unless atomic, each under a savepoint, so a failed one
    /// is rolled back alone (its schema growth with it). An atomic request stops at its first
    /// failed item.
    func runItems(
        _ conn: PostgresConnection, _ ctx: inout WriteContext, tag: String, _ progress: inout Progress
    ) async throws {
        for item in items {
            let id = item.recordID
            if !atomically { try await ctx.exec("SAVEPOINT cirrus_item") }
            let before = ctx.tables
            do {
                // Items on their own grow the schema inside their savepoint: a failed
                // item's new types and fields are rolled back with it (as the embedded
                // engine grows the schema only by the records it saves).
                let current = progress.current
                if grows, !atomically, let record = item.record,
                    PostgresStore.grown(current, by: [record]) != current
                {
                    let s = try await PostgresStore.applyDDL(
                        conn, namespace: scope.namespace, publicTenant: scope.publicTenant, citus: citus,
                        logger: scope.logger, address: address
                    ) { old in PostgresStore.grown(old ?? current, by: [record]) }
                    ctx.tables = layouts(s)
                    progress.grown = s
                }
                if zones && !id.zoneID.isDefaultZone { try await ctx.requireZone(id) }
                let change: PostgresChange
                var cascaded: [PostgresChange] = []
                switch item {
                case .save(let record, let policy, let merging):
                    let (stored, server) = try await ctx.save(
                        record, policy: policy, merging: merging, tag: tag, authorize: authorize)
                    change = PostgresChange(old: server, new: stored)
                case .delete(_, let tag):
                    let deleted = try await ctx.delete(id, ifChangeTag: tag, authorize: authorize)
                    change = PostgresChange(old: deleted.first, new: nil)
                    // The cascade's deletions are changes too (after the given record's).
                    cascaded = deleted.dropFirst().map { PostgresChange(old: $0, new: nil) }
                }
                if !atomically { try await ctx.exec("RELEASE SAVEPOINT cirrus_item") }
                progress.result.append(.success(change.new))
                progress.changes.append(change)
                progress.changes += cascaded
                if let g = progress.grown { progress.current = g }
            } catch {
                let e = PostgresStore.itemError(error, id)
                if atomically {
                    progress.failed = (id, e)
                    break
                }
                try await ctx.exec("ROLLBACK TO SAVEPOINT cirrus_item")
                ctx.tables = before
                progress.grown = progress.current == cached ? nil : progress.current
                progress.result.append(.failure(e))
            }
        }
    }

    /// Throws `batchRequestFailed` (the failed items' errors in `partialErrors` and
    /// `itemErrors`) when an item of a custom zone failed or the request has an item of
    /// `failedZones`: nothing of this request commits.
    func checkAtomicZones(_ result: [Result<Record?, CirrusError>]) throws {
        var zoneFailures: [RecordID: CirrusError] = [:]
        var byItem: [Int: CirrusError] = [:]
        for (i, (item, r)) in zip(items, result).enumerated() where !item.recordID.zoneID.isDefaultZone {
            if case .failure(let e) = r {
                zoneFailures[item.recordID] = e
                byItem[i] = e
            }
        }
        if !zoneFailures.isEmpty
            || items.contains(where: { failedZones.contains($0.recordID.zoneID.zoneName) })
        {
            var e = CirrusError(
                .batchRequestFailed, "an item of an atomic zone failed; the request was rolled back",
                partialErrors: zoneFailures)
            e.itemErrors = byItem
            throw e
        }
    }
}
