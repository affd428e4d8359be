// PostgresImporter+Batch: the steps of one import batch (PostgresStore+Import.swift's header,
// steps 1–5) on one value holding the batch's state — its records, the import's state as the
// batch changes it, and the records refused and imported so far.

import CirrusFacade
import Foundation
import Indexes
import NIOCore
import PostgresNIO
import RecordModel

/// One batch of an import under way (`PostgresImporter.addBatch`). Its changes to the import's
/// state (`st`) are the importer's once the batch is done.
struct ImportBatch {
    /// The import this batch belongs to.
    let importer: PostgresImporter
    /// The batch's records, their ids in the API's form (the default zone owner).
    let records: [Record]
    /// The import's state, as this batch leaves it.
    var st: PostgresImporter.State
    /// The records refused, by position in `records`.
    var rejected: [PostgresImportRejection] = []
    /// How many of the batch's records were imported.
    var imported = 0

    /// The importer's view of its store.
    var store: PostgresStoreSnapshot { importer.store }
    /// The import's tenant.
    var tenant: PostgresTenant { importer.store.tenant }

    /// Refuses record `i` with `e` (given the record's id when it has none).
    mutating func reject(_ i: Int, _ e: CirrusError) {
        var e = e
        if e.recordID == nil { e.recordID = records[i].recordID }
        rejected.append(PostgresImportRejection(index: i, error: e))
    }

    /// The import's start (its first batch): the session's settings, the import's one sequence
    /// number, whether the tenant started empty, and the names' index deferred when the
    /// container has no name at all.
    mutating func begin() async throws {
        let connection = importer.connection
        let namespace = tenant.namespace
        // The import is one request of the tenant: one sequence number (its counter row stays
        // locked to the commit), and the search path COPY's table names resolve in.
        var b = PostgresBindings()
        b.append(namespace)
        for try await _ in try await connection.query(
            PostgresQuery(
                unsafeSQL:
                    "SELECT set_config('search_path', quote_ident($1) || ',' || current_setting('search_path'), true), "
                    + "set_config('statement_timeout', '0', true), "
                    // Index builds (GIN above all) are faster in memory; with PostgreSQL's 64 MB
                    // default, a large GIN index's build was a large share of an import.
                    + "set_config('maintenance_work_mem', '256MB', true)",
                binds: b), logger: store.logger)
        {}
        st.sequence = try await importer.context(st).nextSequence()
        var t = PostgresBindings()
        t.append(tenant.key)
        for try await e in try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT NOT EXISTS (SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_names")) "
                    + "WHERE tenant = $1)", binds: t), logger: store.logger
        ).decode(Bool.self) { st.startedEmpty = e }
        // The names' secondary index (change history by sequence) is built at the end too when
        // the container has no name at all.
        if st.checked.insert("cirrus_names").inserted {
            var empty = false
            for try await e in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT NOT EXISTS (SELECT 1 FROM \(SQLName.qualified(namespace, "cirrus_names")))"),
                logger: store.logger
            ).decode(Bool.self) { empty = e }
            if empty {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "DROP INDEX IF EXISTS \(SQLName.qualified(namespace, "cirrus_names_seq"))"),
                    logger: store.logger)
                st.deferred["cirrus_names"] = [
                    "CREATE INDEX IF NOT EXISTS cirrus_names_seq ON \(SQLName.qualified(namespace, "cirrus_names")) "
                        + "(tenant, zone_name, seq, zone_owner, record_name)"
                ]
            }
        }
    }

    /// Step 1, the checks that need no schema: a record id at most once per import, a valid
    /// record, the public database's one zone. Returns the positions of the records that pass.
    mutating func checkRecords() -> [Int] {
        var accepted: [Int] = []
        for (i, r) in records.enumerated() {
            guard st.seen.insert(r.recordID).inserted else {
                reject(i, CirrusError(.invalidArguments, "the record appears more than once in this import"))
                continue
            }
            do {
                try r.validate()
            } catch {
                reject(i, CirrusError(.invalidArguments, error.message))
                continue
            }
            if case .public = tenant.database, !r.recordID.zoneID.isDefaultZone {
                reject(
                    i,
                    CirrusError(
                        .zoneNotFound,
                        "zone \"\(r.recordID.zoneID.zoneName)\": the public database has only the default zone"))
                continue
            }
            accepted.append(i)
        }
        return accepted
    }

    /// Development's schema grown by the records at `accepted` (DDL in the import's transaction),
    /// and the tables following it.
    mutating func growSchema(_ accepted: [Int]) async throws {
        let namespace = tenant.namespace
        let grown = PostgresStore.grown(st.schema, by: accepted.map { records[$0] })
        guard grown != st.schema else { return }
        let base = st.schema
        let adding = accepted.map { records[$0] }
        let s = try await PostgresStore.applyDDL(
            importer.connection, namespace: namespace, publicTenant: tenant.publicKey, citus: store.citus,
            logger: store.logger, address: store.address
        ) { old in PostgresStore.grown(old ?? base, by: adding) }
        st.schema = s
        st.tables = Dictionary(
            uniqueKeysWithValues: s.recordTypes.values.map {
                ($0.name, TableLayout(namespace: namespace, publicTenant: tenant.publicKey, schema: $0))
            })
        st.grown = true
    }

    /// The records of `accepted` whose type and fields the schema has (the others refused).
    mutating func checkSchema(_ accepted: [Int]) -> [Int] {
        accepted.filter { i in
            let r = records[i]
            guard let layout = st.tables[r.recordType] else {
                reject(
                    i,
                    CirrusError(
                        .serverRejectedRequest,
                        "Cannot create new type \(r.recordType) in \(tenant.environment.rawValue) schema"))
                return false
            }
            // The first unknown field by name (sorted only when there is one).
            if let name = r.fields.keys.filter({ !layout.fieldNames.contains($0) }).min(by: { compareUTF8($0, $1) < 0 })
            {
                reject(
                    i,
                    tenant.environment == .production
                        ? CirrusError(
                            .serverRejectedRequest,
                            "Cannot create new field '\(name)' of type \(r.recordType) in production schema")
                        : CirrusError(
                            .invalidArguments,
                            "field '\(name)': an empty list does not say its type; save a value first"))
                return false
            }
            return true
        }
    }

    /// Creates the custom zones (of a private database) the records at `accepted` are in, and
    /// this import has not created yet.
    mutating func createZones(_ accepted: [Int]) async throws {
        let zones = Set(accepted.map { records[$0].recordID.zoneID }.filter { !$0.isDefaultZone }.map(\.zoneName))
            .subtracting(st.zones)
        if zones.isEmpty { return }
        var b = PostgresBindings()
        b.append(tenant.key)
        b.append(String(st.sequence))
        b.append(zones.sorted())
        for try await _ in try await importer.connection.query(
            PostgresQuery(
                unsafeSQL:
                    "INSERT INTO \(SQLName.qualified(tenant.namespace, "cirrus_zones")) (tenant, zone_name, created_seq) "
                    + "SELECT $1, z, $2::bigint FROM unnest($3::text[]) AS z ON CONFLICT DO NOTHING", binds: b),
            logger: store.logger)
        {}
        st.zones.formUnion(zones)
    }

    /// Step 2: the names of the records at `accepted`, locked: which exist, and with which type
    /// (none when the tenant started empty).
    func lockNames(_ accepted: [Int], _ ctx: WriteContext) async throws -> [RecordID: String] {
        var serverTypes: [RecordID: String] = [:]
        if accepted.isEmpty || st.startedEmpty { return serverTypes }
        var b = PostgresBindings()
        b.append(tenant.key)
        let sql = WriteContext.lookup(
            "zone_name, zone_owner, record_name, record_type",
            from: SQLName.qualified(tenant.namespace, "cirrus_names"),
            accepted.map { records[$0].recordID }, lock: true, &b)
        for row in try await ctx.planned(sql, b) {
            let (zone, owner, name, type) = try row.decode((String, String, String, String).self)
            serverTypes[RecordID(recordName: name, zoneID: ZoneID(zoneName: zone, ownerName: owner))] = type
        }
        return serverTypes
    }

    /// The records of `accepted` by the way they are written: with deleteSelf references or
    /// assets (`special`, item by item), existing (`existing`) or new (`fresh`) per type. A
    /// record whose name exists with another type is refused.
    mutating func partition(
        _ accepted: [Int], _ serverTypes: [RecordID: String]
    ) -> (special: [Int], existing: [String: [Int]], fresh: [String: [Int]]) {
        var special: [Int] = []
        var existing: [String: [Int]] = [:]
        var fresh: [String: [Int]] = [:]
        for i in accepted {
            let r = records[i]
            if let type = serverTypes[r.recordID], type != r.recordType {
                reject(
                    i,
                    CirrusError(
                        .constraintViolation,
                        "a \(type) record with this name exists; its type cannot change to \(r.recordType)"))
            } else if !WriteContext.deleteSelfTargets(r).isEmpty || !RecordRow.assetHashes(r).isEmpty {
                special.append(i)
            } else if serverTypes[r.recordID] != nil {
                existing[r.recordType, default: []].append(i)
            } else {
                fresh[r.recordType, default: []].append(i)
            }
        }
        return (special, existing, fresh)
    }

    /// Step 3: new records (`fresh`, per type) by COPY into their tables and into the names,
    /// then one statement dropping their tombstones and adding to the tenant's count.
    mutating func copyNew(_ fresh: [String: [Int]], _ ctx: WriteContext, tag: String) async throws {
        var newIDs: [RecordID] = []
        var names: [UInt8] = []
        var tenantText: [UInt8] = []
        CopyText.escape(tenant.key, into: &tenantText)
        for (type, indices) in fresh.sorted(by: { $0.key < $1.key }) {
            guard let layout = st.tables[type] else { continue }
            try await importer.deferIndexes(layout, &st)
            let columns = BatchColumns(layout)
            var text: [UInt8] = []
            var ok: [Int] = []
            for i in indices {
                let r = PostgresImporter.stored(records[i], over: nil, now: store.now, tag: tag)
                do {
                    CopyText.line(try columns.row(r, copy: true), columns, tenant: tenantText, into: &text)
                    ok.append(i)
                } catch {
                    reject(i, error)
                }
            }
            if ok.isEmpty { continue }
            try await importer.copy(
                layout.table, columns: columns.columns.map { PostgresImporter.unquoted($0.0) }, text)
            for i in ok {
                let id = records[i].recordID
                newIDs.append(id)
                for (k, v) in [tenant.key, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, type].enumerated() {
                    if k > 0 { names.append(0x09) }
                    CopyText.escape(v, into: &names)
                }
                names += "\t\(st.sequence)\n".utf8
            }
            imported += ok.count
        }
        if newIDs.isEmpty { return }
        try await importer.copy(
            "cirrus_names", columns: ["tenant", "zone_name", "zone_owner", "record_name", "record_type", "seq"],
            names)
        var b = PostgresBindings()
        b.append(tenant.key)
        let keys = WriteContext.keys(newIDs, &b)
        b.append(String(newIDs.count))
        _ = try await ctx.prepared(
            "WITH t AS (DELETE FROM \(SQLName.qualified(tenant.namespace, "cirrus_tombstones")) WHERE \(keys)) "
                + "UPDATE \(SQLName.qualified(tenant.namespace, "cirrus_tenants")) SET records = records + "
                + "$\(b.count)::bigint WHERE tenant = $1", b)
    }

    /// Step 4: records that exist (`existing`, per type): their rows read (locked), then the
    /// batched upsert (`WriteContext.writeBatch`).
    mutating func upsertExisting(_ existing: [String: [Int]], _ ctx: WriteContext, tag: String) async throws {
        if existing.isEmpty { return }
        var rowsByType: [String: BatchRows] = [:]
        var columnsByType: [String: BatchColumns] = [:]
        var oldIDs: [RecordID] = []
        var unreferencing: [RecordID] = []
        for (type, indices) in existing.sorted(by: { $0.key < $1.key }) {
            guard let layout = st.tables[type] else { continue }
            var servers: [RecordID: Record] = [:]
            var b = PostgresBindings()
            b.append(tenant.key)
            let sql = WriteContext.lookup(
                "data", from: layout.qualifiedTable, indices.map { records[$0].recordID }, lock: true, &b)
            for row in try await ctx.planned(sql, b) {
                let data = try row.decode(ByteBuffer.self)
                let r = try RecordRow.decode(Array(data.readableBytesView))
                servers[r.recordID] = r
            }
            let columns = BatchColumns(layout)
            var rows = BatchRows(width: columns.inputs.count)
            for i in indices {
                let server = servers[records[i].recordID]
                let r = PostgresImporter.stored(records[i], over: server, now: store.now, tag: tag)
                do {
                    rows.append(try columns.row(r))
                    oldIDs.append(r.recordID)
                    if let server, !WriteContext.deleteSelfTargets(server).isEmpty {
                        unreferencing.append(r.recordID)
                    }
                    imported += 1
                } catch {
                    reject(i, error)
                }
            }
            rowsByType[type] = rows
            columnsByType[type] = columns
        }
        try await ctx.writeBatch(
            rowsByType, columnsByType, newIDs: [], newTypes: [], oldIDs: oldIDs, unreferencing: unreferencing,
            newCount: 0)
    }

    /// Step 5: records with deleteSelf references or assets (`special`), item by item, each
    /// under a savepoint, so a refused one is reported and skipped.
    mutating func saveSpecial(_ special: [Int], _ ctx: WriteContext, tag: String) async throws {
        for i in special {
            try await ctx.exec("SAVEPOINT cirrus_import")
            do {
                _ = try await ctx.save(records[i], policy: .allKeys, tag: tag)
                try await ctx.exec("RELEASE SAVEPOINT cirrus_import")
                imported += 1
            } catch {
                try await ctx.exec("ROLLBACK TO SAVEPOINT cirrus_import")
                reject(i, PostgresStore.itemError(error, records[i].recordID))
            }
        }
    }
}
