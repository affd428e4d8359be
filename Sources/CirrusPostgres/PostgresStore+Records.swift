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
        let saving = items.compactMap(\.record)
        let count = items.count
        let cached = schema
        let tables = self.tables
        let namespace = tenant.namespace
        let tenantKey = tenant.key
        let environment = tenant.environment
        let now = clock()
        let logger = self.logger
        let address = self.address
        let citus = self.citus
        let userID = user.map { RecordID(recordName: $0) }
        let partitioned = layout == .hashPartitioned
        let (result, grown) = try await run("modifying \(count) records of \(tenantKey)") { client in
            try await client.withTransaction(logger: logger) {
                conn -> ([Result<Record?, CirrusError>], Schema?) in
                var tables = tables
                var grown: Schema? = nil
                func layouts(_ s: Schema) -> [String: TableLayout] {
                    Dictionary(
                        uniqueKeysWithValues: s.recordTypes.values.map {
                            ($0.name, TableLayout(namespace: namespace, schema: $0))
                        })
                }
                if grows && atomically {
                    // All or nothing: the whole request's growth first.
                    let s = try await PostgresStore.applyDDL(
                        conn, namespace: namespace, citus: citus, logger: logger, address: address
                    ) { old in PostgresStore.grown(old ?? cached, by: saving) }
                    grown = s
                    tables = layouts(s)
                }
                var ctx = WriteContext(
                    conn: conn, logger: logger, tables: tables, namespace: namespace, tenant: tenantKey,
                    environment: environment, now: now, user: userID, partitioned: partitioned)
                ctx.quota = quota
                ctx.registry = registry
                ctx.sequence = try await ctx.nextSequence()
                let tag = String(ctx.sequence, radix: 36)
                var changes: [PostgresChange] = []
                var result: [Result<Record?, CirrusError>] = []
                var failed: (RecordID, CirrusError)? = nil
                var current = cached
                if batch {
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
                            result.append(.success(stored))
                            changes.append(PostgresChange(old: server, new: stored))
                        case .failure(let e):
                            if atomically && failed == nil { failed = (item.recordID, e) }
                            result.append(.failure(e))
                        }
                    }
                }
                for item in items where !batch {
                    let id = item.recordID
                    if !atomically { try await ctx.exec("SAVEPOINT cirrus_item") }
                    let before = ctx.tables
                    do {
                        // Items on their own grow the schema inside their savepoint: a failed
                        // item's new types and fields are rolled back with it (as the embedded
                        // engine grows the schema only by the records it saves).
                        if grows, !atomically, let record = item.record,
                            PostgresStore.grown(current, by: [record]) != current
                        {
                            let s = try await PostgresStore.applyDDL(
                                conn, namespace: namespace, citus: citus, logger: logger, address: address
                            ) { old in PostgresStore.grown(old ?? current, by: [record]) }
                            ctx.tables = layouts(s)
                            grown = s
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
                        result.append(.success(change.new))
                        changes.append(change)
                        changes += cascaded
                        if let g = grown { current = g }
                    } catch {
                        let e = PostgresStore.itemError(error, id)
                        if atomically {
                            failed = (id, e)
                            break
                        }
                        try await ctx.exec("ROLLBACK TO SAVEPOINT cirrus_item")
                        ctx.tables = before
                        grown = current == cached ? nil : current
                        result.append(.failure(e))
                    }
                }
                if atomicZones {
                    // An atomic custom zone with a failed item: nothing of this request commits.
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
                if let (id, e) = failed {
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
                if let afterWrites, !changes.isEmpty { try await afterWrites(conn, ctx.sequence, changes) }
                return (result, grown)
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
        let tenantKey = tenant.key
        let namespace = tenant.namespace
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
                    conn: conn, logger: logger, tables: tables, namespace: namespace, tenant: tenantKey,
                    environment: .production, now: Timestamp(millisecondsSince1970: 0), user: nil,
                    partitioned: false)
                return try await ctx.records(ids)
            }
        }
    }
}

/// One transaction's writes for one tenant.
struct WriteContext {
    let conn: PostgresConnection
    let logger: Logger
    var tables: [String: TableLayout]
    let namespace: String
    let tenant: String
    let environment: Environment
    let now: Timestamp
    let user: RecordID?
    /// Hash-partitioned over foreign tables: no `ON CONFLICT` (no unique index on the parent).
    let partitioned: Bool
    /// The tenant's sequence this request writes at (``nextSequence()``).
    var sequence: Int64 = 0
    /// Most records the tenant may hold (nil: no quota); a new record past it → quotaExceeded.
    var quota: Int? = nil
    /// The statements prepared on the store's sessions (PreparedSQL.swift).
    var registry = PreparedSQL.Registry()
    /// An administrator's import (PostgresStore+Import.swift): saves keep the system fields the
    /// records carry (the embedded engine's administrative saves).
    var administrative = false

    /// Runs a statement and drains its rows.
    func exec(_ sql: String, _ b: SQLBuilder = SQLBuilder()) async throws {
        for try await _ in try await query(sql, b) {}
    }

    /// Runs a statement; the caller reads its rows. Its answer moves the request's deadline
    /// (``Deadline/answered()``): a request of many items ends when the server stops answering,
    /// not when their statements together pass the timeout.
    func query(_ sql: String, _ b: SQLBuilder) async throws -> PostgresRowSequence {
        let rows = try await conn.query(PostgresQuery(unsafeSQL: sql, binds: b.binds), logger: logger)
        Deadline.answered()
        return rows
    }

    /// The tenant's next request number (locks the tenant's counter row to the commit).
    func nextSequence() async throws -> Int64 {
        var b = SQLBuilder()
        let t = b.param(tenant)
        let table = SQLName.qualified(namespace, "cirrus_tenants")
        if partitioned {
            // The tenant's counter row is created by its first request (two concurrent first
            // requests of one tenant: one fails on the worker's primary key, nothing is written).
            var sequence: Int64? = nil
            for try await n in try await query(
                "UPDATE \(table) SET sequence = sequence + 1 WHERE tenant = \(t) RETURNING sequence", b
            ).decode(Int64.self) { sequence = n }
            if sequence == nil {
                try await exec("INSERT INTO \(table) (tenant, sequence) VALUES (\(t), 1)", b)
                sequence = 1
            }
            return sequence!
        }
        let rows = try await query(
            "INSERT INTO \(table) AS t (tenant, sequence) VALUES (\(t), 1) ON CONFLICT (tenant) "
                + "DO UPDATE SET sequence = t.sequence + 1 RETURNING sequence", b)
        var sequence: Int64? = nil
        for try await n in rows.decode(Int64.self) { sequence = n }
        guard let sequence else { throw CirrusError(.internalError, "the tenant counter returned no row") }
        return sequence
    }

    /// Adds `delta` to the tenant's record count (`cirrus_tenants.records`, its row locked by
    /// ``nextSequence()``); past the quota → quotaExceeded, which fails the item that adds it.
    func countRecords(_ delta: Int, _ id: RecordID) async throws {
        var b = SQLBuilder()
        var count: Int64 = 0
        for try await n in try await query(
            "UPDATE \(SQLName.qualified(namespace, "cirrus_tenants")) SET records = records + "
                + "\(b.param(String(delta)))::bigint WHERE tenant = \(b.param(tenant)) RETURNING records", b
        ).decode(Int64.self) { count = n }
        if delta > 0, let quota, count > quota {
            throw CirrusError(
                .quotaExceeded, "the database holds \(count - 1) records; its quota is \(quota)", recordID: id)
        }
    }

    /// Throws zoneNotFound unless the custom zone of `id` exists in this tenant (its row is
    /// locked FOR SHARE until the transaction ends, so a deletion of the zone waits for it).
    func requireZone(_ id: RecordID) async throws {
        var b = SQLBuilder()
        let t = b.param(tenant)
        let z = b.param(id.zoneID.zoneName)
        var found = false
        for try await _ in try await query(
            "SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_zones")) WHERE tenant = \(t) AND zone_name = \(z) "
                + "FOR SHARE", b)
        { found = true }
        if !found {
            throw CirrusError(
                .zoneNotFound, "zone \"\(id.zoneID.zoneName)\" does not exist", recordID: id)
        }
    }

    /// The record type a name is used by in this tenant, locked with `lock`.
    func recordType(of id: RecordID, lock: Bool) async throws -> String? {
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: tenant, id, &b)
        let rows = try await query(
            "SELECT record_type FROM \(SQLName.qualified(namespace, "cirrus_names")) WHERE \(key)"
                + (lock ? " FOR UPDATE" : ""), b)
        var type: String? = nil
        for try await t in rows.decode(String.self) { type = t }
        return type
    }

    /// The current record with `id`, if any.
    func current(_ id: RecordID, lock: Bool) async throws -> Record? {
        guard let type = try await recordType(of: id, lock: lock), let layout = tables[type] else { return nil }
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: tenant, id, &b)
        let rows = try await query(
            "SELECT data FROM \(layout.qualifiedTable) WHERE \(key)" + (lock ? " FOR UPDATE" : ""), b)
        var record: Record? = nil
        for try await data in rows.decode(ByteBuffer.self) {
            record = try RecordRow.decode(Array(data.readableBytesView))
        }
        return record
    }

    /// The records of `ids` that exist: one statement for their types, one per type for the rows.
    func records(_ ids: [RecordID]) async throws -> [RecordID: Record] {
        func keys(_ b: inout SQLBuilder, _ ids: [RecordID]) -> String {
            "tenant = \(b.param(tenant)) AND (zone_name, zone_owner, record_name) IN (SELECT * FROM unnest("
                + "\(b.param(ids.map(\.zoneID.zoneName)))::text[], \(b.param(ids.map(\.zoneID.ownerName)))::text[], "
                + "\(b.param(ids.map(\.recordName)))::text[]))"
        }
        var b = SQLBuilder()
        let rows = try await query(
            "SELECT zone_name, zone_owner, record_name, record_type FROM "
                + "\(SQLName.qualified(namespace, "cirrus_names")) WHERE \(keys(&b, ids))", b)
        var byType: [String: [RecordID]] = [:]
        for try await (zone, owner, name, type) in rows.decode((String, String, String, String).self) {
            byType[type, default: []].append(
                RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner)))
        }
        var out: [RecordID: Record] = [:]
        for (type, typeIDs) in byType.sorted(by: { $0.key < $1.key }) {
            guard let layout = tables[type] else { continue }
            var b = SQLBuilder()
            let rows = try await query("SELECT data FROM \(layout.qualifiedTable) WHERE \(keys(&b, typeIDs))", b)
            for try await data in rows.decode(ByteBuffer.self) {
                let r = try RecordRow.decode(Array(data.readableBytesView))
                out[r.recordID] = r
            }
        }
        return out
    }

    /// Saves one item (see the policies in docs/database.md); returns it as stored and the
    /// server's version it replaced.
    func save(
        _ given: Record, policy: PostgresSavePolicy, merging: Bool = false, tag: String,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil
    ) async throws -> (stored: Record, server: Record?) {
        let id = given.recordID
        do {
            try given.validate()
        } catch {
            throw CirrusError(.invalidArguments, error.message, recordID: id)
        }
        guard let layout = tables[given.recordType] else {
            throw CirrusError(
                .serverRejectedRequest, "Cannot create new type \(given.recordType) in \(environment.rawValue) schema",
                recordID: id)
        }
        for name in given.fields.keys where !layout.fieldNames.contains(name) {  // in name order
            throw environment == .production
                ? CirrusError(
                    .serverRejectedRequest,
                    "Cannot create new field '\(name)' of type \(given.recordType) in production schema", recordID: id)
                : CirrusError(
                    .invalidArguments, "field '\(name)': an empty list does not say its type; save a value first",
                    recordID: id)
        }
        let serverType = try await recordType(of: id, lock: true)
        if let serverType, serverType != given.recordType {
            throw CirrusError(
                .constraintViolation,
                "a \(serverType) record with this name exists; its type cannot change to \(given.recordType)",
                recordID: id)
        }
        let server = serverType == nil ? nil : try await current(id, lock: true)
        try authorize?(given.recordType, server, id)
        var r = given
        switch policy {
        case .ifServerRecordUnchanged:
            if let server {
                if r.recordChangeTag != server.recordChangeTag {
                    throw CirrusError(
                        .serverRecordChanged,
                        r.recordChangeTag == nil
                            ? "the record already exists; fetch it and save with its recordChangeTag"
                            : "recordChangeTag \"\(r.recordChangeTag ?? "")\" is stale; the server has "
                                + "\"\(server.recordChangeTag ?? "")\"",
                        recordID: id, serverRecord: server)
                }
            } else if r.recordChangeTag != nil {
                throw CirrusError(
                    .unknownItem, "the record was deleted on the server (it has a change tag but no server version)",
                    recordID: id)
            }
            // Web Services `update`: after the tag check, fields not given keep the server's.
            if merging, let server { r.fields = server.fields.merging(r.fields) { _, new in new } }
        case .changedKeys:
            if let server { r.fields = server.fields.merging(r.fields) { _, new in new } }
        case .allKeys: break
        }
        try await checkReferences(r)
        try await claimAssets(r)
        if administrative {
            r = PostgresImporter.stored(given, over: server, now: now, tag: tag)
        } else {
            r.creationDate = server?.creationDate ?? now
            r.creatorUserRecordID = server?.creatorUserRecordID ?? user
            r.modificationDate = now
            r.lastModifiedUserRecordID = user
            r.recordChangeTag = tag == server?.recordChangeTag ? tag + "." : tag
        }
        try await write(r, layout, isNew: server == nil)
        // The references it holds now, unless it holds none and held none.
        let targets = Self.deleteSelfTargets(r)
        if !targets.isEmpty || !(server.map(Self.deleteSelfTargets)?.isEmpty ?? true) {
            try await setReferences(of: id, to: targets)
        }
        return (r, server)
    }

    /// Throws invalidArguments naming the field of an asset `r` holds that this tenant has not
    /// stored. The assets it holds are stored again (`stored_at` now, under their row locks), so
    /// a concurrent sweep cannot take them before this request commits the reference.
    func claimAssets(_ r: Record) async throws {
        let hashes = RecordRow.assetHashes(r)
        if hashes.isEmpty { return }
        var b = SQLBuilder()
        var found = Set<String>()
        for try await h in try await query(
            "UPDATE \(SQLName.qualified(namespace, "cirrus_assets")) SET stored_at = "
                + "(extract(epoch from clock_timestamp()) * 1000)::bigint WHERE tenant = \(b.param(tenant)) AND "
                + "hash = ANY(\(b.param(hashes))::text[]) RETURNING hash", b
        ).decode(String.self) { found.insert(h) }
        for (name, value) in r.fields {
            for case .asset(let a) in value.elements where !found.contains(a.contentHash) {
                throw CirrusError(
                    .invalidArguments, "field '\(name)': asset \(a.contentHash) was not stored (use storeAsset first)",
                    recordID: r.recordID)
            }
        }
    }

    /// The records `r` refers to with deleteSelf (their deletion deletes `r`), each once, by name.
    static func deleteSelfTargets(_ r: Record) -> [RecordID] {
        var out: [RecordID] = []
        var seen = Set<String>()
        for (_, value) in r.fields {
            for case .reference(let ref) in value.elements
            where ref.action == .deleteSelf && seen.insert(ref.recordID.recordName).inserted {
                out.append(ref.recordID)
            }
        }
        return out
    }

    /// The embedded engine's rules for deleteSelf references (ModifyPlanner.checkReferences):
    /// the target is in the record's zone and exists (or is the record itself), and has at most
    /// `maximumCascadingReferences` sources — else referenceViolation / limitExceeded.
    func checkReferences(_ r: Record) async throws {
        let id = r.recordID
        for target in Self.deleteSelfTargets(r) {
            if target.zoneID.zoneName != id.zoneID.zoneName {
                throw CirrusError(
                    .referenceViolation,
                    "a deleteSelf reference must stay in its zone; \"\(target.recordName)\" is in zone "
                        + "\"\(target.zoneID.zoneName)\"", recordID: id)
            }
            let local = RecordID(recordName: target.recordName, zoneID: id.zoneID)
            if local != id, try await recordType(of: local, lock: false) == nil {
                throw CirrusError(
                    .referenceViolation, "the deleteSelf reference target \"\(target.recordName)\" does not exist",
                    recordID: id)
            }
            var b = SQLBuilder()
            var others = 0
            for try await n in try await query(
                "SELECT count(*) FROM \(SQLName.qualified(namespace, "cirrus_backrefs")) WHERE "
                    + "\(Self.refKey(tenant, id.zoneID, &b)) AND target_name = \(b.param(target.recordName)) "
                    + "AND source_name <> \(b.param(id.recordName))", b
            ).decode(Int64.self) { others = Int(n) }
            if others + 1 > Self.maximumCascadingReferences {
                throw CirrusError(
                    .limitExceeded,
                    "record \"\(target.recordName)\" already has \(others) deleteSelf references; the limit is "
                        + "\(Self.maximumCascadingReferences)", recordID: id)
            }
        }
    }

    /// CloudKit's limit on deleteSelf references to one record (the embedded engine's
    /// `DatabaseLimits.maximumCascadingReferences`).
    static let maximumCascadingReferences = 750

    /// `tenant = … AND zone_name = … AND zone_owner = …` of `cirrus_backrefs`.
    static func refKey(_ tenant: String, _ zone: ZoneID, _ b: inout SQLBuilder) -> String {
        "tenant = \(b.param(tenant)) AND zone_name = \(b.param(zone.zoneName)) AND zone_owner = "
            + "\(b.param(zone.ownerName))"
    }

    /// Replaces the deleteSelf references `source` holds in `cirrus_backrefs` by `targets`.
    func setReferences(of source: RecordID, to targets: [RecordID]) async throws {
        let table = SQLName.qualified(namespace, "cirrus_backrefs")
        var b = SQLBuilder()
        try await exec(
            "DELETE FROM \(table) WHERE \(Self.refKey(tenant, source.zoneID, &b)) AND source_name = "
                + "\(b.param(source.recordName))", b)
        if targets.isEmpty { return }
        var i = SQLBuilder()
        let rows = targets.map { t in
            "(\(i.param(tenant)), \(i.param(source.zoneID.zoneName)), \(i.param(source.zoneID.ownerName)), "
                + "\(i.param(t.recordName)), \(i.param(source.recordName)))"
        }
        try await exec(
            "INSERT INTO \(table) (tenant, zone_name, zone_owner, target_name, source_name) VALUES "
                + rows.joined(separator: ", "), i)
    }

    /// Upserts the row of `r` (and claims its name when new).
    func write(_ r: Record, _ layout: TableLayout, isNew: Bool) async throws {
        let id = r.recordID
        var n = SQLBuilder()
        let seq = "\(n.param(String(sequence)))::bigint"
        if isNew {
            try await countRecords(+1, id)
            let vals = [tenant, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, r.recordType].map {
                n.param($0)
            }
            try await exec(
                "INSERT INTO \(SQLName.qualified(namespace, "cirrus_names")) "
                    + "(tenant, zone_name, zone_owner, record_name, record_type, seq) VALUES ("
                    + "\(vals.joined(separator: ", ")), \(seq))", n)
            // A name saved again after its deletion is live: its tombstone goes.
            var t = SQLBuilder()
            try await exec(
                "DELETE FROM \(SQLName.qualified(namespace, "cirrus_tombstones")) WHERE "
                    + RecordRow.keyCondition(tenant: tenant, id, &t), t)
        } else {
            let key = RecordRow.keyCondition(tenant: tenant, id, &n)
            try await exec("UPDATE \(SQLName.qualified(namespace, "cirrus_names")) SET seq = \(seq) WHERE \(key)", n)
        }
        var b = SQLBuilder()
        var cols: [(String, String)] = [
            ("tenant", b.param(tenant)), ("zone_name", b.param(id.zoneID.zoneName)),
            ("zone_owner", b.param(id.zoneID.ownerName)), ("record_name", b.param(id.recordName)),
            ("record_type", b.param(r.recordType)), ("change_tag", b.param(r.recordChangeTag ?? "")),
            ("created_at", r.creationDate.map { "\(b.param(String($0.millisecondsSince1970)))::bigint" } ?? "NULL"),
            (
                "modified_at",
                r.modificationDate.map { "\(b.param(String($0.millisecondsSince1970)))::bigint" } ?? "NULL"
            ),
            ("created_by", r.creatorUserRecordID.map { b.param(SQLText.referenceKey($0)) } ?? "NULL"),
            ("modified_by", r.lastModifiedUserRecordID.map { b.param(SQLText.referenceKey($0)) } ?? "NULL"),
            ("data", "decode(\(b.param(SQLText.hex(RecordRow.encode(r)))), 'hex')"),
        ]
        cols += try RecordRow.typedValues(r, layout, &b)
        let names = cols.map(\.0)
        let updates = names.dropFirst(4).map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        if partitioned {
            // The row was read (and locked) before: insert a new one, update an existing one.
            if isNew {
                try await exec(
                    "INSERT INTO \(layout.qualifiedTable) (\(names.joined(separator: ", "))) VALUES ("
                        + cols.map(\.1).joined(separator: ", ") + ")", b)
            } else {
                let set = cols.dropFirst(4).map { "\($0.0) = \($0.1)" }.joined(separator: ", ")
                let key =
                    "tenant = \(cols[0].1) AND zone_name = \(cols[1].1) AND zone_owner = \(cols[2].1) "
                    + "AND record_name = \(cols[3].1)"
                try await exec("UPDATE \(layout.qualifiedTable) SET \(set) WHERE \(key)", b)
            }
            return
        }
        try await exec(
            "INSERT INTO \(layout.qualifiedTable) (\(names.joined(separator: ", "))) VALUES ("
                + cols.map(\.1).joined(separator: ", ")
                + ") ON CONFLICT (tenant, zone_name, zone_owner, record_name) DO UPDATE SET \(updates)", b)
    }

    /// Deletes one record and, cascading, the records of its zone that refer to a deleted one
    /// with deleteSelf; each leaves its tombstone at this request's sequence. Returns the
    /// deleted versions, the given record's first. unknownItem when there is none. With
    /// `ifChangeTag`, only while the server's record has that tag (else serverRecordChanged
    /// carrying it). `authorize` is asked for the given record only (as on the embedded engine).
    func delete(
        _ id: RecordID, ifChangeTag: String? = nil,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil
    ) async throws -> [Record] {
        guard let first = try await deleteOne(id, ifChangeTag: ifChangeTag, authorize: authorize, cascading: false)
        else { return [] }
        var deleted = [first]
        var queue = [id]
        var done: Set<RecordID> = [id]
        let table = SQLName.qualified(namespace, "cirrus_backrefs")
        while let victim = queue.popLast() {
            var b = SQLBuilder()
            var sources: [String] = []
            for try await s in try await query(
                "DELETE FROM \(table) WHERE \(Self.refKey(tenant, victim.zoneID, &b)) AND target_name = "
                    + "\(b.param(victim.recordName)) RETURNING source_name", b
            ).decode(String.self) { sources.append(s) }
            for s in sources.sorted() {
                let source = RecordID(recordName: s, zoneID: victim.zoneID)
                guard done.insert(source).inserted, let r = try await deleteOne(source, cascading: true) else {
                    continue
                }
                deleted.append(r)
                queue.append(source)
            }
        }
        return deleted
    }

    /// Deletes one record (no cascade) with its name, outgoing deleteSelf references and a
    /// tombstone; returns the server's version (nil when a cascade finds it gone already).
    private func deleteOne(
        _ id: RecordID, ifChangeTag: String? = nil,
        authorize: (@Sendable (String, Record?, RecordID) throws -> Void)? = nil, cascading: Bool
    ) async throws -> Record? {
        guard let type = try await recordType(of: id, lock: true) else {
            if cascading { return nil }
            throw CirrusError(.unknownItem, "no such record to delete", recordID: id)
        }
        let server = try await current(id, lock: true)
        try authorize?(type, server, id)
        if let ifChangeTag, let server, server.recordChangeTag != ifChangeTag {
            throw CirrusError(
                .serverRecordChanged,
                "recordChangeTag \"\(ifChangeTag)\" is stale; the server has \"\(server.recordChangeTag ?? "")\"",
                recordID: id, serverRecord: server)
        }
        var b = SQLBuilder()
        let key = RecordRow.keyCondition(tenant: tenant, id, &b)
        try await exec("DELETE FROM \(SQLName.qualified(namespace, "cirrus_names")) WHERE \(key)", b)
        if let layout = tables[type] { try await exec("DELETE FROM \(layout.qualifiedTable) WHERE \(key)", b) }
        try await countRecords(-1, id)
        // The tombstone (a name deleted twice keeps its latest; no ON CONFLICT: partitioned
        // layouts have no unique index on the parent).
        let tombstones = SQLName.qualified(namespace, "cirrus_tombstones")
        try await exec("DELETE FROM \(tombstones) WHERE \(key)", b)
        if let server, !Self.deleteSelfTargets(server).isEmpty { try await setReferences(of: id, to: []) }
        var t = SQLBuilder()
        let vals = [tenant, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, type].map { t.param($0) }
        try await exec(
            "INSERT INTO \(tombstones) (tenant, zone_name, zone_owner, record_name, record_type, seq) VALUES ("
                + vals.joined(separator: ", ") + ", \(t.param(String(sequence)))::bigint)", t)
        return server
    }
}
